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
 * uploaded with one asynchronous copy from a pinned buffer the slot keeps, on the same stream before the launch.
 *
 * <p>A group of 32 threads (a warp on NVIDIA, half a wavefront on AMD; no warp intrinsics, so the source is
 * the same for both) takes one block at a time; grid x walks the blocks (groups stride over them when there
 * are more blocks than groups) and grid y splits big blocks into pieces so that a batch of a few large blocks
 * still spreads over the whole GPU. In each step every thread issues {@value #UNROLL} 16-byte loads before its
 * stores, so a group has {@code 32 x 16 x UNROLL} = 4 KiB in flight: over NVLink/XGMI a load takes a
 * microsecond or more, and one load in flight per thread (the first version) left the link idle most of the
 * time. Source and destination must share their alignment modulo 16 (the usual case: offsets of KV-cache
 * blocks) for the vector path; otherwise the block moves byte by byte. Source and destination may be on
 * different devices: the kernel runs on the initiator's device and reaches the other one over NVLink/XGMI
 * (peer access or an IPC mapping).
 *
 * <p>Compiled at run time once per compute capability and process (NVRTC or hiprtc, about 70 ms), loaded
 * once per device and backend; {@link #close()} unloads the modules.
 */
final class GatherKernel implements AutoCloseable {
  static final String NAME = "mori4j_xgmi_gather";
  static final int THREADS = 256;
  /** Threads of a group that moves one block (piece) together. */
  static final int GROUP = 32;
  /** 16-byte loads each thread has in flight per step. */
  static final int UNROLL = 8;
  /** Bytes one group moves per step: what grid y cuts a big block into. */
  static final long PIECE_BYTES = (long) GROUP * 16 * UNROLL;
  /** CTAs per multiprocessor a launch aims for at most (more only queue behind the resident ones). */
  private static final int CTAS_PER_SM = 16;

  static final String SOURCE = """
      typedef unsigned long long u64;
      // 16 bytes moved by one 128-bit load and store (no header needed, unlike uint4 from vector_types.h)
      struct __align__(16) v16 { u64 lo, hi; };
      #define GROUP 32
      #define UNROLL %d
      extern "C" __global__ void __launch_bounds__(%d) mori4j_xgmi_gather(const u64* __restrict__ table, unsigned int n,
                                                                        u64 srcBase, u64 dstBase, u64 sameSize) {
        const unsigned lane = threadIdx.x %% GROUP;
        const unsigned groupsPerCta = blockDim.x / GROUP;
        const u64 groups = (u64) gridDim.x * groupsPerCta;
        const u64 step = (u64) GROUP * UNROLL;          // vectors a group moves per step
        const u64 pieceStride = (u64) gridDim.y * step; // grid y splits a block into pieces of one step
        for (u64 i = (u64) blockIdx.x * groupsPerCta + threadIdx.x / GROUP; i < n; i += groups) {
          // every thread of the group reads the same entries: one broadcast load each
          const unsigned char* s = (const unsigned char*) (srcBase + table[i]);
          unsigned char* d = (unsigned char*) (dstBase + table[(u64) n + i]);
          const u64 len = sameSize != 0 ? sameSize : table[2ull * n + i];
          const u64 mis = (u64) s & 15;
          if (mis == ((u64) d & 15)) {
            u64 head = mis == 0 ? 0 : 16 - mis;
            if (head > len) head = len;
            if (blockIdx.y == 0 && lane < head) d[lane] = s[lane];
            const u64 body = (len - head) >> 4;
            const v16* s4 = (const v16*) (s + head);
            v16* d4 = (v16*) (d + head);
            for (u64 base = (u64) blockIdx.y * step + lane; base < body; base += pieceStride) {
              v16 r[UNROLL];
              // all loads first, so UNROLL of them are in flight before the first store waits on one
              #pragma unroll
              for (int j = 0; j < UNROLL; j++) {
                const u64 k = base + (u64) j * GROUP;
                if (k < body) r[j] = s4[k];
              }
              #pragma unroll
              for (int j = 0; j < UNROLL; j++) {
                const u64 k = base + (u64) j * GROUP;
                if (k < body) d4[k] = r[j];
              }
            }
            const u64 tail = head + (body << 4);
            if (blockIdx.y == 0 && lane < len - tail) d[tail + lane] = s[tail + lane];
          } else {
            for (u64 k = (u64) blockIdx.y * GROUP + lane; k < len; k += (u64) gridDim.y * GROUP) d[k] = s[k];
          }
        }
      }
      """.formatted(UNROLL, THREADS);

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

  /** Whether the module is loaded on {@code device} (an issue from a submitting thread loads nothing). */
  boolean loaded(int device) {
    return device < functions.length && functions[device] != null;
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
    Dim3 grid = grid(multiprocessors[device], n, maxBlock);
    gpu.launch(f, grid, Dim3.of(THREADS), 0, stream, KernelArgs.of().pointer(table).i32(n).pointer(srcBase).pointer(dstBase).i64(sameSize));
    LAUNCHES.incrementAndGet();
  }

  /**
   * The grid for {@code n} blocks of at most {@code maxBlock} bytes on a device of {@code sms} multiprocessors:
   * x gives each block a group of its own (up to the CTAs the device holds), y cuts the blocks into pieces of
   * {@link #PIECE_BYTES} while the grid still has room, so that few big blocks fill the GPU as well as many small ones.
   */
  static Dim3 grid(int sms, int n, long maxBlock) {
    int groupsPerCta = THREADS / GROUP;
    long ctas = (long) Math.max(1, sms) * CTAS_PER_SM;
    int x = (int) Math.max(1, Math.min((n + groupsPerCta - 1L) / groupsPerCta, ctas));
    long pieces = Math.max(1, (maxBlock + PIECE_BYTES - 1) / PIECE_BYTES);
    int y = (int) Math.max(1, Math.min(Math.min(pieces, Math.max(1, ctas / x)), 65535));
    return new Dim3(x, y, 1);
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
