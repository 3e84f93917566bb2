package org.mori4j.transport.xgmi;

import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * The gather/scatter kernel that moves every block of a batch in one launch. Its arguments are a table in
 * device memory, the block count, the source and destination base addresses and the blocks' common size
 * (0 when they differ). The table holds {@code n} source offsets, then {@code n} destination offsets, then,
 * only when the sizes differ, {@code n} sizes (64-bit each); offsets rather than pointers so that the worker
 * can copy an op's offset arrays into the table in bulk instead of adding a base to every entry. It is
 * uploaded with one copy before the launch on the same stream. Grid x walks the blocks (a CTA per block,
 * striding when there are more blocks than CTAs); grid y splits big blocks so that a batch of a few large
 * blocks still spreads over the whole GPU. Each CTA copies 16 bytes per thread per step when source and
 * destination share their alignment (the usual case: offsets of KV-cache blocks), byte by byte otherwise.
 * Source and destination may be on different devices: the kernel runs on the initiator's device and reaches
 * the other one over NVLink/XGMI (peer access or an IPC mapping).
 *
 * <p>Compiled at run time once per compute capability and process (NVRTC or hiprtc, about 70 ms), loaded
 * once per device and backend; {@link #close()} unloads the modules.
 */
final class GatherKernel implements AutoCloseable {
  static final String NAME = "mori4j_xgmi_gather";
  static final int THREADS = 256;
  /** Bytes one CTA should have to itself at least before grid y splits a block further. */
  private static final long BYTES_PER_CTA = 64 << 10;
  /** CTAs per multiprocessor a launch aims for (enough resident warps to keep the copy engines of memory busy). */
  private static final int CTAS_PER_SM = 16;

  static final String SOURCE = """
      typedef unsigned long long u64;
      // 16 bytes moved by one 128-bit load and store (no header needed, unlike uint4 from vector_types.h)
      struct __align__(16) v16 { u64 lo, hi; };
      extern "C" __global__ void mori4j_xgmi_gather(const u64* __restrict__ table, unsigned int n, u64 srcBase, u64 dstBase,
                                                    u64 sameSize) {
        const u64* srcs = table;
        const u64* dsts = table + n;
        const u64* sizes = table + 2ull * n; // present only when sameSize is 0
        const u64 stride = (u64) gridDim.y * blockDim.x;
        for (unsigned int i = blockIdx.x; i < n; i += gridDim.x) {
          const unsigned char* s = (const unsigned char*) (srcBase + srcs[i]);
          unsigned char* d = (unsigned char*) (dstBase + dsts[i]);
          const u64 len = sameSize != 0 ? sameSize : sizes[i];
          const u64 first = (u64) blockIdx.y * blockDim.x + threadIdx.x;
          const u64 mis = (u64) s & 15;
          if (mis == ((u64) d & 15)) {
            u64 head = mis == 0 ? 0 : 16 - mis;
            if (head > len) head = len;
            if (blockIdx.y == 0 && threadIdx.x < head) d[threadIdx.x] = s[threadIdx.x];
            const u64 body = (len - head) >> 4;
            const v16* s4 = (const v16*) (s + head);
            v16* d4 = (v16*) (d + head);
            for (u64 k = first; k < body; k += stride) d4[k] = s4[k];
            const u64 tail = head + (body << 4);
            if (blockIdx.y == 0 && threadIdx.x < len - tail) d[tail + threadIdx.x] = s[tail + threadIdx.x];
          } else {
            for (u64 k = first; k < len; k += stride) d[k] = s[k];
          }
        }
      }
      """;

  /** Compiled images by "runtime:capability", shared by every backend of the process. */
  private static final ConcurrentHashMap<String, byte[]> IMAGES = new ConcurrentHashMap<>();
  /** Modules loaded by every backend of the process (tests check it returns to 0). */
  static final java.util.concurrent.atomic.AtomicInteger LIVE = new java.util.concurrent.atomic.AtomicInteger();
  /** Launches by every backend of the process, so tests can see that a batch is one launch. */
  static final java.util.concurrent.atomic.AtomicLong LAUNCHES = new java.util.concurrent.atomic.AtomicLong();

  private final GpuRuntime gpu;
  private GpuModule[] modules = new GpuModule[0];
  private GpuFunction[] functions = new GpuFunction[0];
  private int[] multiprocessors = new int[0];

  GatherKernel(GpuRuntime gpu) {
    this.gpu = gpu;
  }

  /** Compiles the kernel for {@code device}'s architecture unless this process already has (blocking: NVRTC). */
  static byte[] image(GpuRuntime gpu, int device) {
    String key = gpu.name() + ":" + gpu.computeCapability(device);
    return IMAGES.computeIfAbsent(key, k -> gpu.compile(device, SOURCE, "mori4j_xgmi_gather.cu"));
  }

  /** Loads the module on {@code device} if it is not yet (worker thread). */
  private GpuFunction function(int device) {
    if (device >= functions.length) {
      modules = java.util.Arrays.copyOf(modules, device + 1);
      functions = java.util.Arrays.copyOf(functions, device + 1);
      multiprocessors = java.util.Arrays.copyOf(multiprocessors, device + 1);
    }
    if (functions[device] == null) {
      GpuModule m = gpu.loadModule(device, image(gpu, device));
      try {
        functions[device] = m.function(NAME);
        multiprocessors[device] = Math.max(1, gpu.multiprocessorCount(device));
        modules[device] = m;
        LIVE.incrementAndGet();
      } catch (RuntimeException e) {
        m.close();
        throw e;
      }
    }
    return functions[device];
  }

  /** Bytes of the table for {@code n} blocks: offsets only when every block has the same size. */
  static long tableBytes(int n, boolean sameSize) {
    return (sameSize ? 16L : 24L) * n;
  }

  /**
   * Launches the kernel on {@code stream} for the {@code n} blocks whose table is at {@code table} (device
   * memory of {@code stream}'s device), offsets from {@code srcBase} and {@code dstBase}; {@code sameSize} is
   * the size of every block, or 0 when the table carries sizes; {@code maxBlock} is the largest block, for the
   * grid's y size.
   */
  void launch(GpuStream stream, long table, int n, long srcBase, long dstBase, long sameSize, long maxBlock) {
    int device = stream.device();
    GpuFunction f = function(device);
    int ctas = multiprocessors[device] * CTAS_PER_SM;
    int x = Math.min(n, ctas);
    long pieces = Math.max(1, (maxBlock + BYTES_PER_CTA - 1) / BYTES_PER_CTA);
    int y = (int) Math.max(1, Math.min(Math.min(pieces, Math.max(1, ctas / x)), 65535));
    gpu.launch(f, new Dim3(x, y, 1), Dim3.of(THREADS), 0, stream, KernelArgs.of().pointer(table).i32(n).pointer(srcBase).pointer(dstBase).i64(sameSize));
    LAUNCHES.incrementAndGet();
  }

  /** Modules loaded now (for leak checks). */
  int loadedModules() {
    int c = 0;
    for (GpuModule m : modules) if (m != null) c++;
    return c;
  }

  @Override
  public void close() {
    for (int i = 0; i < modules.length; i++) {
      if (modules[i] != null) {
        modules[i].close();
        LIVE.decrementAndGet();
      }
      modules[i] = null;
      functions[i] = null;
    }
  }
}
