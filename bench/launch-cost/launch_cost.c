/*
 * launch_cost: what one launch of the XGMI batch kernel costs the calling host thread, from C, with nothing
 * between the timer and the CUDA driver. The Java side of the same measurement is
 * org.mori4j.transport.xgmi.LaunchCostProbe, which also writes the kernel image this program loads (the cubin
 * the engine compiles with NVRTC for this device), so both launch the same code with the same arguments on the
 * same kind of stream and events; README.md in this folder says how the two are run side by side.
 *
 * Usage: launch_cost IMAGE [--iters N] [--rounds R] [--device D]
 * Prints one tab-separated line per (round, mode, part): impl, round, mode, part, n, p50, p90, p99, mean (us).
 *
 * The driver is opened with dlopen("libcuda.so.1") so that the program builds on a machine without a GPU.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SYNC_EVERY 64
#define IN_FLIGHT_EVENTS 8

static void *lib;

static void *sym(const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "launch_cost: %s is not in libcuda.so.1: %s\n", name, dlerror());
    exit(2);
  }
  return p;
}

/* cuda.h maps several APIs to versioned symbols (cuMemAlloc -> cuMemAlloc_v2); the strings below are the
   exported names the engine binds too. */
static __typeof__(cuInit) *p_cuInit;
static __typeof__(cuDeviceGet) *p_cuDeviceGet;
static __typeof__(cuDevicePrimaryCtxRetain) *p_cuDevicePrimaryCtxRetain;
static __typeof__(cuCtxSetCurrent) *p_cuCtxSetCurrent;
static __typeof__(cuModuleLoadData) *p_cuModuleLoadData;
static __typeof__(cuModuleGetFunction) *p_cuModuleGetFunction;
static __typeof__(cuStreamCreate) *p_cuStreamCreate;
static __typeof__(cuStreamSynchronize) *p_cuStreamSynchronize;
static __typeof__(cuEventCreate) *p_cuEventCreate;
static __typeof__(cuEventRecord) *p_cuEventRecord;
static __typeof__(cuEventQuery) *p_cuEventQuery;
static __typeof__(cuLaunchKernel) *p_cuLaunchKernel;
static __typeof__(cuMemAlloc) *p_cuMemAlloc;
static __typeof__(cuMemcpyHtoD) *p_cuMemcpyHtoD;
static __typeof__(cuGetErrorName) *p_cuGetErrorName;

static void check(CUresult rc, const char *what) {
  if (rc == CUDA_SUCCESS) return;
  const char *name = "?";
  if (p_cuGetErrorName) p_cuGetErrorName(rc, &name);
  fprintf(stderr, "launch_cost: %s failed: %d %s\n", what, (int) rc, name);
  exit(3);
}

static inline int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
  return x < y ? -1 : x > y;
}

/* Same summary as LaunchCostProbe.print: nearest-rank percentiles of the sorted samples. */
static void print(int round, const char *mode, const char *part, int64_t *ns, int n) {
  qsort(ns, n, sizeof *ns, cmp_i64);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += ns[i];
  int i50 = (int) ((n - 1) * 0.50), i90 = (int) ((n - 1) * 0.90), i99 = (int) ((n - 1) * 0.99);
  printf("c\t%d\t%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\n", round, mode, part, n, ns[i50] / 1e3, ns[i90] / 1e3, ns[i99] / 1e3, sum / n / 1e3);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: launch_cost IMAGE [--iters N] [--rounds R] [--device D]\n");
    return 1;
  }
  const char *image_path = argv[1];
  int iters = 2000, rounds = 3, device = 0;
  for (int i = 2; i < argc; i++) {
    if (i + 1 >= argc) {
      fprintf(stderr, "launch_cost: %s needs a value\n", argv[i]);
      return 1;
    }
    char *end;
    long v = strtol(argv[i + 1], &end, 10);
    if (*end || v < 0) {
      fprintf(stderr, "launch_cost: %s: not a number: '%s'\n", argv[i], argv[i + 1]);
      return 1;
    }
    if (!strcmp(argv[i], "--iters")) iters = (int) v;
    else if (!strcmp(argv[i], "--rounds")) rounds = (int) v;
    else if (!strcmp(argv[i], "--device")) device = (int) v;
    else {
      fprintf(stderr, "launch_cost: unknown argument '%s' (known: --iters --rounds --device)\n", argv[i]);
      return 1;
    }
    i++;
  }
  if (iters < SYNC_EVERY || rounds < 1) {
    fprintf(stderr, "launch_cost: --iters must be at least %d and --rounds at least 1 (got %d, %d)\n", SYNC_EVERY, iters, rounds);
    return 1;
  }

  FILE *f = fopen(image_path, "rb");
  if (!f) {
    perror(image_path);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *image = calloc(1, size + 1); /* NUL-terminated, as the engine passes it (PTX needs it) */
  if (!image || fread(image, 1, size, f) != (size_t) size) {
    fprintf(stderr, "launch_cost: cannot read %s\n", image_path);
    return 1;
  }
  fclose(f);

  /* As CudaConnections does before cuInit: the same number of hardware queues as the engine's process. */
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "launch_cost: cannot open libcuda.so.1: %s\n", dlerror());
    return 2;
  }
  p_cuGetErrorName = sym("cuGetErrorName");
  p_cuInit = sym("cuInit");
  p_cuDeviceGet = sym("cuDeviceGet");
  p_cuDevicePrimaryCtxRetain = sym("cuDevicePrimaryCtxRetain");
  p_cuCtxSetCurrent = sym("cuCtxSetCurrent");
  p_cuModuleLoadData = sym("cuModuleLoadData");
  p_cuModuleGetFunction = sym("cuModuleGetFunction");
  p_cuStreamCreate = sym("cuStreamCreate");
  p_cuStreamSynchronize = sym("cuStreamSynchronize");
  p_cuEventCreate = sym("cuEventCreate");
  p_cuEventRecord = sym("cuEventRecord");
  p_cuEventQuery = sym("cuEventQuery");
  p_cuLaunchKernel = sym("cuLaunchKernel");
  p_cuMemAlloc = sym("cuMemAlloc_v2");
  p_cuMemcpyHtoD = sym("cuMemcpyHtoD_v2");

  check(p_cuInit(0), "cuInit");
  CUdevice dev;
  check(p_cuDeviceGet(&dev, device), "cuDeviceGet");
  CUcontext ctx;
  check(p_cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(p_cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmodule module;
  check(p_cuModuleLoadData(&module, image), "cuModuleLoadData");
  CUfunction fn;
  check(p_cuModuleGetFunction(&fn, module, "mori4j_xgmi_gather"), "cuModuleGetFunction(mori4j_xgmi_gather)");
  CUstream stream;
  check(p_cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUevent events[IN_FLIGHT_EVENTS];
  for (int i = 0; i < IN_FLIGHT_EVENTS; i++) check(p_cuEventCreate(&events[i], CU_EVENT_DISABLE_TIMING), "cuEventCreate");

  /* One 4 KiB block: a table of {source offset 0, destination offset 0}, a source and a destination buffer. */
  CUdeviceptr table, src, dst;
  check(p_cuMemAlloc(&table, 16), "cuMemAlloc(table)");
  check(p_cuMemAlloc(&src, 4096), "cuMemAlloc(src)");
  check(p_cuMemAlloc(&dst, 4096), "cuMemAlloc(dst)");
  uint64_t offsets[2] = {0, 0};
  check(p_cuMemcpyHtoD(table, offsets, sizeof offsets), "cuMemcpyHtoD(table)");
  /* GatherKernel.launch's arguments for n = 1, a 4 KiB block: pieces = 1, grid = 1 CTA of 256 threads. */
  unsigned int n = 1;
  uint64_t a_table = table, a_src = src, a_dst = dst, same = 4096, pieces = 1;
  void *params[6] = {&a_table, &n, &a_src, &a_dst, &same, &pieces};

  int64_t *s_launch = malloc(sizeof(int64_t) * iters), *s_record = malloc(sizeof(int64_t) * iters);
  int64_t *s_both = malloc(sizeof(int64_t) * iters), *s_query = malloc(sizeof(int64_t) * iters);
  int64_t *s_polls = malloc(sizeof(int64_t) * iters), *s_done = malloc(sizeof(int64_t) * iters);

  /* warm-up: the first launches load the kernel into the context and grow the driver's queues */
  for (int i = 0; i < 2000; i++) check(p_cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL), "cuLaunchKernel");
  check(p_cuStreamSynchronize(stream), "cuStreamSynchronize");

  for (int r = 0; r < rounds; r++) {
    /* launch: back to back, the stream drained every SYNC_EVERY launches (untimed) */
    for (int i = 0; i < iters; i++) {
      int64_t t0 = now_ns();
      CUresult rc = p_cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL);
      int64_t t1 = now_ns();
      check(rc, "cuLaunchKernel");
      s_launch[i] = t1 - t0;
      if (i % SYNC_EVERY == SYNC_EVERY - 1) check(p_cuStreamSynchronize(stream), "cuStreamSynchronize");
    }
    check(p_cuStreamSynchronize(stream), "cuStreamSynchronize");
    print(r, "launch", "launch", s_launch, iters);

    /* record: each launch followed by an event record, as DeviceTransfers issues a slot */
    for (int i = 0; i < iters; i++) {
      int64_t t0 = now_ns();
      CUresult rc = p_cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL);
      int64_t t1 = now_ns();
      CUresult rc2 = p_cuEventRecord(events[i % IN_FLIGHT_EVENTS], stream);
      int64_t t2 = now_ns();
      check(rc, "cuLaunchKernel");
      check(rc2, "cuEventRecord");
      s_launch[i] = t1 - t0;
      s_record[i] = t2 - t1;
      s_both[i] = t2 - t0;
      if (i % SYNC_EVERY == SYNC_EVERY - 1) check(p_cuStreamSynchronize(stream), "cuStreamSynchronize");
    }
    check(p_cuStreamSynchronize(stream), "cuStreamSynchronize");
    print(r, "record", "launch", s_launch, iters);
    print(r, "record", "record", s_record, iters);
    print(r, "record", "launch+record", s_both, iters);

    /* poll1: launch, record, then one query of the oldest event in flight, as a worker round with a backlog */
    for (int i = 0; i < iters; i++) {
      int64_t t0 = now_ns();
      CUresult rc = p_cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL);
      int64_t t1 = now_ns();
      CUresult rc2 = p_cuEventRecord(events[i % IN_FLIGHT_EVENTS], stream);
      int64_t t2 = now_ns();
      CUresult rc3 = p_cuEventQuery(events[(i + 1) % IN_FLIGHT_EVENTS]);
      int64_t t3 = now_ns();
      check(rc, "cuLaunchKernel");
      check(rc2, "cuEventRecord");
      if (rc3 != CUDA_ERROR_NOT_READY) check(rc3, "cuEventQuery");
      s_launch[i] = t1 - t0;
      s_record[i] = t2 - t1;
      s_query[i] = t3 - t2;
      if (i % SYNC_EVERY == SYNC_EVERY - 1) check(p_cuStreamSynchronize(stream), "cuStreamSynchronize");
    }
    check(p_cuStreamSynchronize(stream), "cuStreamSynchronize");
    print(r, "poll1", "launch", s_launch, iters);
    print(r, "poll1", "record", s_record, iters);
    print(r, "poll1", "query", s_query, iters);

    /* idle: launch into an idle stream, record, then query until the event completes (a lone op's round trip) */
    for (int i = 0; i < iters; i++) {
      CUevent ev = events[i % IN_FLIGHT_EVENTS];
      int64_t t0 = now_ns();
      CUresult rc = p_cuLaunchKernel(fn, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL);
      int64_t t1 = now_ns();
      CUresult rc2 = p_cuEventRecord(ev, stream);
      int64_t t2 = now_ns();
      check(rc, "cuLaunchKernel");
      check(rc2, "cuEventRecord");
      CUresult q = p_cuEventQuery(ev);
      int64_t t3 = now_ns();
      long polls = 1;
      int64_t limit = t3 + 1000000000LL;
      while (q == CUDA_ERROR_NOT_READY) {
        q = p_cuEventQuery(ev);
        polls++;
        if (now_ns() > limit) {
          fprintf(stderr, "launch_cost: event not complete after 1 s\n");
          return 4;
        }
      }
      int64_t t4 = now_ns();
      check(q, "cuEventQuery");
      s_launch[i] = t1 - t0;
      s_record[i] = t2 - t1;
      s_query[i] = t3 - t2;
      s_polls[i] = polls * 1000; /* printed in "us" columns: thousandths, so the column reads as the count */
      s_done[i] = t4 - t0;
    }
    print(r, "idle", "launch", s_launch, iters);
    print(r, "idle", "record", s_record, iters);
    print(r, "idle", "first-query", s_query, iters);
    print(r, "idle", "queries(count)", s_polls, iters);
    print(r, "idle", "launch-to-complete", s_done, iters);
    fflush(stdout);
  }
  return 0;
}
