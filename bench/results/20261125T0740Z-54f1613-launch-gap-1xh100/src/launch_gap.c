/*
 * launch_gap: where the XGMI batch launch's host time goes (G1). Extends ../../launch-cost/launch_cost.c (L1): the
 * same kernel image (the cubin the engine compiles with NVRTC, written by LaunchCostProbe --write-image) and the same
 * six arguments as GatherKernel.launch, but with the engine's batch: 4,096 blocks of 4 KiB in reversed every-other-slot
 * order (XgmiBatchHostBenchmark's), grid from the occupancy calculator as GatherKernel.grid computes it, the table in
 * mapped page-locked memory or in device memory, up to 64 non-blocking streams round-robin (DevicePool, 64 by
 * default) and 64 events without timing (one per slot), CUDA_DEVICE_MAX_CONNECTIONS=32 (CudaConnections).
 *
 * Each experiment times cuLaunchKernel (and the following cuEventRecord) with one clock_gettime pair around each
 * call; one variant changes one factor against the base. Patterns:
 *   idle  : launch into an idle GPU, record, poll the event until complete, then (gap) the next launch: one batch at
 *           a time, as H4's harness and XgmiBatchHostBenchmark call (each call awaited before the next).
 *   queue : launches back to back, each with its event, at most 64 in flight (the oldest polled to completion first
 *           when all 64 slots are busy, as DevicePool's slots): launches while the GPU still runs earlier kernels.
 * Gaps between an idle launch and the next: none, spin N us, nanosleep N us (the thread gives up its vCPU), or
 * touching 8 MiB of host memory plus rewriting the 64 KiB table (what the engine's call does before it launches).
 * A poller variant runs a second thread that calls cuEventQuery on a completed event in a loop (sched_yield between
 * calls, as the XGMI worker yields between polls), so the launch meets a driver busy on another thread.
 *
 * Usage: launch_gap IMAGE [--iters N] [--rounds R] [--only NAME]
 * Prints tab-separated: round, experiment, variant, part, n, p50, p90, p99, mean (us).
 * The driver is opened with dlopen("libcuda.so.1") so that it builds (and dry-runs against a stand-in) without a GPU.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCKS 4096
#define BLOCK 4096ULL
#define STREAMS 64
#define EVENTS 64
#define THREADS 256
#define GROUP 32
#define PIECE (GROUP * 16 * 8)

static void *lib;
static void *sym(const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "launch_gap: %s is not in libcuda.so.1: %s\n", name, dlerror());
    exit(2);
  }
  return p;
}
#define P(f) static __typeof__(f) *p_##f
P(cuInit); P(cuDeviceGet); P(cuDevicePrimaryCtxRetain); P(cuCtxSetCurrent); P(cuModuleLoadData);
P(cuModuleGetFunction); P(cuStreamCreate); P(cuStreamSynchronize); P(cuEventCreate); P(cuEventRecord);
P(cuEventQuery); P(cuLaunchKernel); P(cuMemAlloc); P(cuMemcpyHtoD); P(cuGetErrorName); P(cuMemHostAlloc);
P(cuMemHostGetDevicePointer); P(cuDeviceGetAttribute); P(cuOccupancyMaxActiveBlocksPerMultiprocessor);
P(cuCtxSynchronize); P(cuMemsetD8);

static void check(CUresult rc, const char *what) {
  if (rc == CUDA_SUCCESS) return;
  const char *name = "?";
  if (p_cuGetErrorName) p_cuGetErrorName(rc, &name);
  fprintf(stderr, "launch_gap: %s failed: %d %s\n", what, (int) rc, name);
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
static int cur_round;
static void print(const char *exp, const char *var, const char *part, int64_t *ns, int n) {
  qsort(ns, n, sizeof *ns, cmp_i64);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += ns[i];
  int i50 = (int) ((n - 1) * 0.50), i90 = (int) ((n - 1) * 0.90), i99 = (int) ((n - 1) * 0.99);
  printf("%d\t%s\t%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\n", cur_round, exp, var, part, n, ns[i50] / 1e3, ns[i90] / 1e3, ns[i99] / 1e3,
         sum / n / 1e3);
  fflush(stdout);
}

static CUfunction fn;
static CUstream streams[STREAMS];
static CUevent events[EVENTS];
static CUdeviceptr src, dst, dev_table, mapped_table;
static uint64_t *host_table; /* the mapped one, as the engine's slot table */
static int resident; /* CTAs the device holds at once */
static int iters = 3000;
static int64_t *s_launch, *s_record, *s_done, *s_depth;
static char *evict; /* host memory touched between calls in the "touch" gap */
#define EVICT_BYTES (8 << 20)
static volatile uint64_t sink;

/* GatherKernel.grid: one group per work item up to the resident CTAs */
static int grid_for(unsigned n, uint64_t max_block) {
  uint64_t pieces = max_block < PIECE ? 1 : (max_block + PIECE - 1) / PIECE;
  uint64_t items = (uint64_t) n * pieces, per = THREADS / GROUP;
  uint64_t x = (items + per - 1) / per;
  return (int) (x < (uint64_t) resident ? (x < 1 ? 1 : x) : resident);
}

struct cfg {
  const char *exp, *var;
  int grid;          /* CTAs */
  unsigned n;        /* blocks in the table */
  int mapped;        /* table in mapped page-locked memory (engine default) or device memory */
  int nstreams;      /* round-robin over this many streams */
  int queue;         /* 1: back to back, at most EVENTS in flight; 0: idle (each op completed before the next) */
  int gap_kind;      /* 0 none, 1 spin, 2 nanosleep, 3 touch 8 MiB + rewrite the table */
  int gap_us;
  int poller;        /* a second thread queries a completed event in a loop */
};

static atomic_int poll_stop;
static atomic_long poll_count;
static void *poller_main(void *arg) {
  CUcontext ctx = arg;
  check(p_cuCtxSetCurrent(ctx), "cuCtxSetCurrent(poller)");
  while (!atomic_load(&poll_stop)) {
    CUresult q = p_cuEventQuery(events[EVENTS - 1]);
    if (q != CUDA_SUCCESS && q != CUDA_ERROR_NOT_READY) check(q, "cuEventQuery(poller)");
    atomic_fetch_add(&poll_count, 1);
    sched_yield();
  }
  return NULL;
}
static CUcontext ctx;

static void wait_event(CUevent ev) {
  int64_t limit = now_ns() + 2000000000LL;
  CUresult q;
  while ((q = p_cuEventQuery(ev)) == CUDA_ERROR_NOT_READY) {
    if (now_ns() > limit) {
      fprintf(stderr, "launch_gap: event not complete after 2 s\n");
      exit(4);
    }
  }
  check(q, "cuEventQuery");
}

static void gap(const struct cfg *c) {
  if (c->gap_kind == 1) {
    int64_t end = now_ns() + c->gap_us * 1000LL;
    while (now_ns() < end) { }
  } else if (c->gap_kind == 2) {
    struct timespec t = {0, c->gap_us * 1000L};
    nanosleep(&t, NULL);
  } else if (c->gap_kind == 3) {
    uint64_t s = 0;
    for (size_t i = 0; i < EVICT_BYTES; i += 64) { evict[i]++; s += (unsigned char) evict[i]; }
    /* rewrite the slot's table as the engine's call does (64 KiB into the page-locked buffer) */
    for (unsigned i = 0; i < BLOCKS; i++) {
      uint64_t o = (uint64_t) (BLOCKS - 1 - i) * 2 * BLOCK;
      host_table[i] = o;
      host_table[BLOCKS + i] = o;
    }
    sink += s;
  }
}

static void run(const struct cfg *c) {
  uint64_t table = c->mapped ? mapped_table : dev_table;
  unsigned n = c->n;
  uint64_t srcb = src, dstb = dst, same = BLOCK, pieces = 1;
  void *params[6] = {&table, &n, &srcb, &dstb, &same, &pieces};
  pthread_t th;
  if (c->poller) {
    atomic_store(&poll_stop, 0);
    atomic_store(&poll_count, 0);
    if (pthread_create(&th, NULL, poller_main, ctx)) { fprintf(stderr, "launch_gap: pthread_create failed\n"); exit(5); }
    /* the poller must be polling before the first timed launch */
    int64_t limit = now_ns() + 1000000000LL;
    while (atomic_load(&poll_count) == 0 && now_ns() < limit) sched_yield();
  }
  int warm = 300, total = warm + iters, next_stream = 0;
  int inflight_head = 0, inflight = 0; /* ring of events in flight (queue pattern) */
  for (int i = 0; i < total; i++) {
    CUstream s = streams[next_stream];
    next_stream = next_stream + 1 == c->nstreams ? 0 : next_stream + 1;
    int slot;
    if (c->queue) {
      if (inflight == EVENTS) { /* every slot busy: the oldest must complete first */
        wait_event(events[inflight_head]);
        inflight_head = (inflight_head + 1) % EVENTS;
        inflight--;
      } else {
        /* free what completed already, oldest first, as the worker's poll would */
        while (inflight > 0 && p_cuEventQuery(events[inflight_head]) == CUDA_SUCCESS) {
          inflight_head = (inflight_head + 1) % EVENTS;
          inflight--;
        }
      }
      slot = (inflight_head + inflight) % EVENTS;
    } else {
      slot = i % (EVENTS - 1); /* the last event stays the poller's */
      if (i > 0) gap(c);
    }
    int64_t t0 = now_ns();
    CUresult rc = p_cuLaunchKernel(fn, c->grid, 1, 1, THREADS, 1, 1, 0, s, params, NULL);
    int64_t t1 = now_ns();
    CUresult rc2 = p_cuEventRecord(events[slot], s);
    int64_t t2 = now_ns();
    check(rc, "cuLaunchKernel");
    check(rc2, "cuEventRecord");
    if (c->queue) inflight++;
    else wait_event(events[slot]);
    int64_t t3 = now_ns();
    if (i >= warm) {
      int k = i - warm;
      s_launch[k] = t1 - t0;
      s_record[k] = t2 - t1;
      s_done[k] = t3 - t0;
      s_depth[k] = (c->queue ? inflight - 1 : 0) * 1000LL; /* ops queued ahead of this launch, as a count */
    }
  }
  check(p_cuCtxSynchronize(), "cuCtxSynchronize");
  if (c->poller) {
    atomic_store(&poll_stop, 1);
    pthread_join(th, NULL);
    printf("# %s %s: poller queries %ld\n", c->exp, c->var, (long) atomic_load(&poll_count));
  }
  print(c->exp, c->var, "launch", s_launch, iters);
  print(c->exp, c->var, "record", s_record, iters);
  if (!c->queue) print(c->exp, c->var, "launch-to-complete", s_done, iters);
  else print(c->exp, c->var, "ahead(count)", s_depth, iters);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: launch_gap IMAGE [--iters N] [--rounds R] [--only EXPERIMENT]\n");
    return 1;
  }
  int rounds = 2;
  const char *only = NULL;
  for (int i = 2; i < argc; i += 2) {
    if (i + 1 >= argc) { fprintf(stderr, "launch_gap: %s needs a value\n", argv[i]); return 1; }
    if (!strcmp(argv[i], "--only")) { only = argv[i + 1]; continue; }
    char *end;
    long v = strtol(argv[i + 1], &end, 10);
    if (*end || v < 1) { fprintf(stderr, "launch_gap: %s: not a positive number: '%s'\n", argv[i], argv[i + 1]); return 1; }
    if (!strcmp(argv[i], "--iters")) iters = (int) v;
    else if (!strcmp(argv[i], "--rounds")) rounds = (int) v;
    else { fprintf(stderr, "launch_gap: unknown argument '%s' (known: --iters --rounds --only)\n", argv[i]); return 1; }
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 1; }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *image = calloc(1, size + 1);
  if (!image || fread(image, 1, size, f) != (size_t) size) { fprintf(stderr, "launch_gap: cannot read %s\n", argv[1]); return 1; }
  fclose(f);

  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) { fprintf(stderr, "launch_gap: cannot open libcuda.so.1: %s\n", dlerror()); return 2; }
  p_cuGetErrorName = sym("cuGetErrorName"); p_cuInit = sym("cuInit"); p_cuDeviceGet = sym("cuDeviceGet");
  p_cuDevicePrimaryCtxRetain = sym("cuDevicePrimaryCtxRetain"); p_cuCtxSetCurrent = sym("cuCtxSetCurrent");
  p_cuModuleLoadData = sym("cuModuleLoadData"); p_cuModuleGetFunction = sym("cuModuleGetFunction");
  p_cuStreamCreate = sym("cuStreamCreate"); p_cuStreamSynchronize = sym("cuStreamSynchronize");
  p_cuEventCreate = sym("cuEventCreate"); p_cuEventRecord = sym("cuEventRecord"); p_cuEventQuery = sym("cuEventQuery");
  p_cuLaunchKernel = sym("cuLaunchKernel"); p_cuMemAlloc = sym("cuMemAlloc_v2"); p_cuMemcpyHtoD = sym("cuMemcpyHtoD_v2");
  p_cuMemHostAlloc = sym("cuMemHostAlloc"); p_cuMemHostGetDevicePointer = sym("cuMemHostGetDevicePointer_v2");
  p_cuDeviceGetAttribute = sym("cuDeviceGetAttribute");
  p_cuOccupancyMaxActiveBlocksPerMultiprocessor = sym("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  p_cuCtxSynchronize = sym("cuCtxSynchronize"); p_cuMemsetD8 = sym("cuMemsetD8_v2");

  check(p_cuInit(0), "cuInit");
  CUdevice dev;
  check(p_cuDeviceGet(&dev, 0), "cuDeviceGet");
  check(p_cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(p_cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmodule module;
  check(p_cuModuleLoadData(&module, image), "cuModuleLoadData");
  check(p_cuModuleGetFunction(&fn, module, "mori4j_xgmi_gather"), "cuModuleGetFunction(mori4j_xgmi_gather)");
  int sms = 0, per_sm = 0;
  check(p_cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute");
  check(p_cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, THREADS, 0), "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (sms < 1) sms = 1;
  if (per_sm < 1) per_sm = 1;
  resident = sms * per_sm;
  for (int i = 0; i < STREAMS; i++) check(p_cuStreamCreate(&streams[i], CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  for (int i = 0; i < EVENTS; i++) check(p_cuEventCreate(&events[i], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  size_t bytes = 2 * BLOCKS * BLOCK;
  check(p_cuMemAlloc(&src, bytes), "cuMemAlloc(src)");
  check(p_cuMemAlloc(&dst, bytes), "cuMemAlloc(dst)");
  check(p_cuMemsetD8(src, 1, bytes), "cuMemsetD8");
  size_t tbytes = 2 * BLOCKS * sizeof(uint64_t);
  check(p_cuMemAlloc(&dev_table, tbytes), "cuMemAlloc(table)");
  void *h;
  check(p_cuMemHostAlloc(&h, tbytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc(table)");
  host_table = h;
  for (unsigned i = 0; i < BLOCKS; i++) {
    uint64_t o = (uint64_t) (BLOCKS - 1 - i) * 2 * BLOCK;
    host_table[i] = o;
    host_table[BLOCKS + i] = o;
  }
  check(p_cuMemHostGetDevicePointer(&mapped_table, h, 0), "cuMemHostGetDevicePointer");
  check(p_cuMemcpyHtoD(dev_table, host_table, tbytes), "cuMemcpyHtoD(table)");
  check(p_cuEventRecord(events[EVENTS - 1], streams[STREAMS - 1]), "cuEventRecord(poller's)");
  check(p_cuCtxSynchronize(), "cuCtxSynchronize");
  evict = calloc(1, EVICT_BYTES);
  s_launch = malloc(sizeof(int64_t) * iters); s_record = malloc(sizeof(int64_t) * iters);
  s_done = malloc(sizeof(int64_t) * iters); s_depth = malloc(sizeof(int64_t) * iters);
  if (!evict || !s_launch || !s_record || !s_done || !s_depth) { fprintf(stderr, "launch_gap: out of memory\n"); return 1; }
  int g = grid_for(BLOCKS, BLOCK);
  printf("# sms %d, CTAs per SM %d, resident %d, engine grid for %d x %llu B: %d CTAs of %d threads\n", sms, per_sm, resident,
         BLOCKS, BLOCK, g, THREADS);

  /* The base is the engine's batch as H4 timed it: grid g, mapped table, 64 streams round-robin, idle, no gap. */
  const struct cfg cfgs[] = {
      {"grid", "1cta-n1-dev-1s", 1, 1, 0, 1, 0, 0, 0, 0},   /* L1's shape */
      {"grid", "1cta-n1-map-1s", 1, 1, 1, 1, 0, 0, 0, 0},
      {"grid", "engine-dev-1s", g, BLOCKS, 0, 1, 0, 0, 0, 0},
      {"grid", "engine-map-1s", g, BLOCKS, 1, 1, 0, 0, 0, 0},
      {"grid", "resident-map-1s", resident, BLOCKS, 1, 1, 0, 0, 0, 0},
      {"streams", "engine-map-1s", g, BLOCKS, 1, 1, 0, 0, 0, 0},
      {"streams", "engine-map-64s", g, BLOCKS, 1, 64, 0, 0, 0, 0},
      {"streams", "1cta-n1-map-64s", 1, 1, 1, 64, 0, 0, 0, 0},
      {"queue", "1cta-n1-map-1s", 1, 1, 1, 1, 1, 0, 0, 0},
      {"queue", "engine-map-1s", g, BLOCKS, 1, 1, 1, 0, 0, 0},
      {"queue", "engine-map-64s", g, BLOCKS, 1, 64, 1, 0, 0, 0},
      {"gap", "engine-map-64s-none", g, BLOCKS, 1, 64, 0, 0, 0, 0},
      {"gap", "engine-map-64s-spin40", g, BLOCKS, 1, 64, 0, 1, 40, 0},
      {"gap", "engine-map-64s-sleep40", g, BLOCKS, 1, 64, 0, 2, 40, 0},
      {"gap", "engine-map-64s-touch", g, BLOCKS, 1, 64, 0, 3, 0, 0},
      {"gap", "1cta-n1-map-1s-sleep40", 1, 1, 1, 1, 0, 2, 40, 0},
      {"poller", "engine-map-64s-none", g, BLOCKS, 1, 64, 0, 0, 0, 0},
      {"poller", "engine-map-64s-poller", g, BLOCKS, 1, 64, 0, 0, 0, 1},
      {"poller", "1cta-n1-map-1s-poller", 1, 1, 1, 1, 0, 0, 0, 1},
  };
  int ncfg = sizeof cfgs / sizeof cfgs[0];
  /* warm-up: load the kernel into the context, touch every stream */
  for (int i = 0; i < STREAMS; i++) {
    uint64_t table = mapped_table, srcb = src, dstb = dst, same = BLOCK, pieces = 1;
    unsigned n = BLOCKS;
    void *params[6] = {&table, &n, &srcb, &dstb, &same, &pieces};
    check(p_cuLaunchKernel(fn, g, 1, 1, THREADS, 1, 1, 0, streams[i], params, NULL), "cuLaunchKernel(warm-up)");
  }
  check(p_cuCtxSynchronize(), "cuCtxSynchronize");
  for (int r = 0; r < rounds; r++) {
    cur_round = r;
    for (int k = 0; k < ncfg; k++) {
      if (only && strcmp(only, cfgs[k].exp)) continue;
      run(&cfgs[k]);
    }
  }
  return 0;
}
