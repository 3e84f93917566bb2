package org.mori4j.transport.xgmi;

import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * The gather/scatter kernel that moves every block of a batch in one launch. Its arguments are a table, the
 * block count, the source and destination base addresses, the blocks' common size (0 when they differ) and the
 * pieces per block. The table holds {@code n} source offsets, then {@code n} destination offsets, then, only when
 * the sizes differ, {@code n} sizes (64-bit each); offsets rather than pointers so that the worker can copy an op's
 * offset arrays into the table in bulk instead of adding a base to every entry. It lives in a page-locked buffer the
 * slot keeps, which the kernel reads in place where the runtime maps it into the device (the default,
 * {@code mori4j.xgmi.block-table = mapped}), or which is uploaded to device memory with one asynchronous copy on the
 * same stream before the launch; a group reads its block's entries once per block, so a mapped table costs one PCIe
 * read latency per group at the start of its first item.
 *
 * <p>The batch is cut into work items of {@value #PIECE_BYTES} bytes, piece {@code p} of block {@code i} being
 * item {@code i * pieces + p} ({@code pieces} from the largest block); a group of 32 threads (a warp on NVIDIA,
 * half a wavefront on AMD; no warp intrinsics, so the source is the same for both) moves one item at a time and
 * the groups of a grid as large as the GPU holds at once (the occupancy calculator's answer) stride over the items.
 * So any shape splits evenly over the whole GPU: 40,960 blocks of 32 KiB are 327,680 items over the 4,224 groups
 * of an H100's 528 resident CTAs (4 per SM: the kernel is register-bound; the previous two-dimensional grid gave
 * 16,896 groups 2 or 3 whole blocks each, and a single big block one busy group per CTA). A group reads a block's table entries only when its item is in a block other than its
 * last one. In each item every thread issues {@value #UNROLL} 16-byte loads before its stores, so a group has
 * 4 KiB in flight: over NVLink/XGMI a load takes a microsecond or more, and one load in flight per thread (the
 * first version) left the link idle most of the time. Source and destination must share their alignment modulo
 * 16 (the usual case: offsets of KV-cache blocks) for the vector path, the few head and tail bytes going with
 * piece 0; otherwise the block moves byte by byte, a piece at a time. Source and destination may be on different
 * devices: the kernel runs on the initiator's device and reaches the other one over NVLink/XGMI (peer access or
 * an IPC mapping).
 *
 * <p>Compiled at run time once per compute capability and process (NVRTC or hiprtc, about 70 ms), loaded
 * once per device and backend; {@link #close()} unloads the modules.
 */
final class GatherKernel implements AutoCloseable {
  static final String NAME = "mori4j_xgmi_gather";
  static final int THREADS = 256;
  /** Threads of a group that moves one piece together. */
  static final int GROUP = 32;
  /** 16-byte loads each thread has in flight per piece. */
  static final int UNROLL = 8;
  /** Bytes one group moves per work item. */
  static final long PIECE_BYTES = (long) GROUP * 16 * UNROLL;
  /** Threads a multiprocessor holds where the runtime has no occupancy calculator (test devices): 2,048 on NVIDIA's recent GPUs. */
  private static final int FALLBACK_THREADS_PER_SM = 2048;

  static final String SOURCE = source(GROUP, UNROLL, THREADS, false, 0);

  /**
   * The kernel's text for groups of {@code group} threads with {@code unroll} loads in flight each, CTAs of
   * {@code threads}, plain or streaming (evict-first stores, loads that skip L1: inline PTX on CUDA, the
   * nontemporal builtins on HIP) accesses, and (CUDA only; 0 for none) the CTAs per multiprocessor the compiler
   * must leave registers for; the backend uses {@link #SOURCE}, the probe times the others.
   */
  static String source(int group, int unroll, int threads, boolean streaming, int minBlocks) {
    return """
        typedef unsigned long long u64;
        // 16 bytes moved by one 128-bit load and store (no header needed, unlike uint4 from vector_types.h)
        struct __align__(16) v16 { u64 lo, hi; };
        #define GROUP %d
        #define UNROLL %d
        #define STREAMING %d
        %s
        __device__ __forceinline__ v16 ld16(const v16* p) {
        #if STREAMING && defined(__CUDACC__) && !defined(__HIP__)
          v16 r;
          asm("{ .reg .u64 g; cvta.to.global.u64 g, %%2; ld.global.nc.L1::no_allocate.v2.u64 {%%0, %%1}, [g]; }" : "=l"(r.lo), "=l"(r.hi) : "l"(p));
          return r;
        #elif STREAMING && defined(__HIP__)
          v16 r;
          r.lo = __builtin_nontemporal_load(&p->lo);
          r.hi = __builtin_nontemporal_load(&p->hi);
          return r;
        #else
          return *p;
        #endif
        }
        __device__ __forceinline__ void st16(v16* p, v16 v) {
        #if STREAMING && defined(__CUDACC__) && !defined(__HIP__)
          asm volatile("{ .reg .u64 g; cvta.to.global.u64 g, %%0; st.global.cs.v2.u64 [g], {%%1, %%2}; }" :: "l"(p), "l"(v.lo), "l"(v.hi) : "memory");
        #elif STREAMING && defined(__HIP__)
          __builtin_nontemporal_store(v.lo, &p->lo);
          __builtin_nontemporal_store(v.hi, &p->hi);
        #else
          *p = v;
        #endif
        }
        extern "C" __global__ void %s mori4j_xgmi_gather(const u64* __restrict__ table, unsigned int n, u64 srcBase,
                                                                          u64 dstBase, u64 sameSize, u64 pieces) {
          const unsigned lane = threadIdx.x %% GROUP;
          const u64 groupsPerCta = blockDim.x / GROUP;
          const u64 groups = (u64) gridDim.x * groupsPerCta;
          const u64 step = (u64) GROUP * UNROLL; // vectors of one piece
          const u64 items = (u64) n * pieces;
          u64 cur = ~0ull, len = 0, head = 0, body = 0;
          const unsigned char* s = 0;
          unsigned char* d = 0;
          bool vec = true;
          for (u64 w = (u64) blockIdx.x * groupsPerCta + threadIdx.x / GROUP; w < items; w += groups) {
            const u64 i = pieces == 1 ? w : w / pieces, p = w - i * pieces;
            if (i != cur) {
              // every thread of the group reads the same entries: one broadcast load each
              cur = i;
              s = (const unsigned char*) (srcBase + table[i]);
              d = (unsigned char*) (dstBase + table[(u64) n + i]);
              len = sameSize != 0 ? sameSize : table[2ull * n + i];
              const u64 mis = (u64) s & 15;
              vec = mis == ((u64) d & 15);
              head = mis == 0 ? 0 : 16 - mis;
              if (head > len) head = len;
              body = (len - head) >> 4;
            }
            if (vec) {
              if (p == 0) {
                if (lane < head) d[lane] = s[lane];
                const u64 tail = head + (body << 4);
                if (lane < len - tail) d[tail + lane] = s[tail + lane];
              }
              const v16* s4 = (const v16*) (s + head);
              v16* d4 = (v16*) (d + head);
              const u64 base = p * step + lane;
              if (base >= body) continue; // a block smaller than the largest has fewer pieces
              v16 r[UNROLL];
              // all loads first, so UNROLL of them are in flight before the first store waits on one
              #pragma unroll
              for (int j = 0; j < UNROLL; j++) {
                const u64 k = base + (u64) j * GROUP;
                if (k < body) r[j] = ld16(s4 + k);
              }
              #pragma unroll
              for (int j = 0; j < UNROLL; j++) {
                const u64 k = base + (u64) j * GROUP;
                if (k < body) st16(d4 + k, r[j]);
              }
            } else {
              const u64 end = (p + 1) * step * 16 < len ? (p + 1) * step * 16 : len;
              for (u64 k = p * step * 16 + lane; k < end; k += GROUP) d[k] = s[k];
            }
          }
        }
        """.formatted(group, unroll, streaming ? 1 : 0,
            // HIP's second bound means something else (waves per execution unit): CUDA only
            minBlocks > 0 ? "#if defined(__HIP__)\n#define BOUNDS __launch_bounds__(" + threads + ")\n#else\n#define BOUNDS __launch_bounds__("
                + threads + ", " + minBlocks + ")\n#endif" : "",
            minBlocks > 0 ? "BOUNDS" : "__launch_bounds__(" + threads + ")");
  }

  /** Compiled images by "runtime:capability", shared by every backend of the process. */
  private static final ConcurrentHashMap<String, byte[]> IMAGES = new ConcurrentHashMap<>();
  /** Modules loaded by every backend of the process (tests check it returns to 0). */
  static final java.util.concurrent.atomic.AtomicInteger LIVE = new java.util.concurrent.atomic.AtomicInteger();
  /** Launches by every backend of the process, so tests can see that a batch is one launch. */
  static final java.util.concurrent.atomic.AtomicLong LAUNCHES = new java.util.concurrent.atomic.AtomicLong();

  private final GpuRuntime gpu;
  private GpuModule[] modules = new GpuModule[0];
  private GpuFunction[] functions = new GpuFunction[0];
  /** CTAs of {@link #THREADS} each device holds at once: the grid's size for batches that fill it. */
  private int[] resident = new int[0];

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
      resident = java.util.Arrays.copyOf(resident, device + 1);
    }
    if (functions[device] == null) {
      GpuModule m = gpu.loadModule(device, image(gpu, device));
      try {
        GpuFunction f = m.function(NAME);
        resident[device] = residentCtas(gpu, f, device);
        functions[device] = f;
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

  /** CTAs the occupancy calculator says {@code device} holds at once; a full-thread guess where the runtime has none. */
  private static int residentCtas(GpuRuntime gpu, GpuFunction f, int device) {
    int sms = Math.max(1, gpu.multiprocessorCount(device));
    int perSm;
    try {
      perSm = gpu.maxActiveBlocksPerMultiprocessor(f, THREADS, 0);
    } catch (UnsupportedOperationException e) {
      perSm = FALLBACK_THREADS_PER_SM / THREADS;
    }
    return sms * Math.max(1, perSm);
  }

  /**
   * Launches the kernel on {@code stream} for the {@code n} blocks whose table is at {@code table} (an address
   * {@code stream}'s device reads: its memory or mapped page-locked host memory), offsets from {@code srcBase} and {@code dstBase}; {@code sameSize} is
   * the size of every block, or 0 when the table carries sizes; {@code maxBlock} is the largest block, which sets
   * the pieces per block.
   */
  void launch(GpuStream stream, long table, int n, long srcBase, long dstBase, long sameSize, long maxBlock) {
    int device = stream.device();
    GpuFunction f = function(device);
    long pieces = pieces(maxBlock);
    Dim3 grid = grid(resident[device], n, maxBlock);
    KernelArgs args = KernelArgs.of().pointer(table).i32(n).pointer(srcBase).pointer(dstBase).i64(sameSize).i64(pieces);
    if (XgmiTrace.ON) XgmiTrace.part(XgmiTrace.PART_ARGS);
    gpu.launch(f, grid, Dim3.of(THREADS), 0, stream, args);
    if (XgmiTrace.ON) XgmiTrace.part(XgmiTrace.PART_LAUNCH);
    LAUNCHES.incrementAndGet();
  }

  /** Work items per block: pieces of {@link #PIECE_BYTES} in the largest block (at least 1). */
  static long pieces(long maxBlock) {
    return Math.max(1, (maxBlock + PIECE_BYTES - 1) / PIECE_BYTES);
  }

  /**
   * The grid for {@code n} blocks of at most {@code maxBlock} bytes on a device that holds {@code residentCtas}
   * CTAs at once: one group per work item up to that many CTAs, whose groups then stride over the rest (more CTAs
   * would only queue behind the resident ones and split the work into uneven waves).
   */
  static Dim3 grid(int residentCtas, int n, long maxBlock) {
    long groupsPerCta = THREADS / GROUP;
    long items = (long) n * pieces(maxBlock);
    int x = (int) Math.max(1, Math.min((items + groupsPerCta - 1) / groupsPerCta, Math.max(1, residentCtas)));
    return new Dim3(x, 1, 1);
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
