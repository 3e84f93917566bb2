package org.mori4j.transport.xgmi;

import java.util.LinkedHashMap;
import java.util.Map;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * The batch-kernel variants {@link GatherKernelProbe} times beside the backend's own kernel, each selectable by
 * name so that a run on the real link (2x H200) compares them there: the first kernel (a CTA per block, one load in
 * flight per thread), and "flat" kernels that number every (block, piece) pair of the batch and let a grid sized by
 * the occupancy calculator stride over them, with the threads per piece, the loads in flight per thread, the CTA
 * size and streaming (evict-first) accesses as parameters. Every variant takes the backend's table (source offsets,
 * destination offsets, sizes when they differ) and moves 16-byte aligned blocks; the probe checks their bytes.
 */
final class GatherVariants {
  private GatherVariants() {}

  /** One way to run a batch: how to launch it on {@code stream} and a word on its geometry. */
  interface Variant extends AutoCloseable {
    String name();

    /** The grid it launches for {@code n} blocks of {@code blockSize} bytes, for the table. */
    String geometry(int n, long blockSize);

    void launch(GpuStream stream, long table, int n, long srcBase, long dstBase, long blockSize);

    @Override
    void close();
  }

  /** The variants by name, in the order the probe prints them; {@code backend} is the production kernel. */
  static Map<String, String> catalogue() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("backend", "GatherKernel as the backend launches it (its source and grid)");
    m.put("first", "the first kernel: a CTA of 256 per block, one 16-byte load in flight per thread");
    m.put("flat", "flat (block, piece) work items, 32 threads x 8 loads in flight = 4 KiB pieces, 256-thread CTAs, occupancy grid");
    m.put("flat-u4", "flat, 4 loads in flight per thread (2 KiB pieces)");
    m.put("flat-u16", "flat, 16 loads in flight per thread (8 KiB pieces)");
    m.put("flat-t512", "flat, 512-thread CTAs");
    m.put("flat-cs", "flat, streaming loads and stores (ld.global.nc / st.global.cs on CUDA, nontemporal on HIP)");
    m.put("cta", "a whole 256-thread CTA per piece, 4 loads in flight per thread (16 KiB pieces), occupancy grid");
    return m;
  }

  static Variant open(String name, GpuRuntime gpu, int device) {
    return switch (name) {
      case "backend" -> new Backend(gpu, device);
      case "first" -> new First(gpu, device);
      case "flat" -> new Flat(gpu, device, name, 32, 8, 256, false);
      case "flat-u4" -> new Flat(gpu, device, name, 32, 4, 256, false);
      case "flat-u16" -> new Flat(gpu, device, name, 32, 16, 256, false);
      case "flat-t512" -> new Flat(gpu, device, name, 32, 8, 512, false);
      case "flat-cs" -> new Flat(gpu, device, name, 32, 8, 256, true);
      case "cta" -> new Flat(gpu, device, name, 256, 4, 256, false);
      default -> throw new IllegalArgumentException("variant: unknown name '" + name + "' (known: " + String.join(",", catalogue().keySet()) + ")");
    };
  }

  /** The backend's kernel with the backend's geometry, through {@link GatherKernel#launch}. */
  private static final class Backend implements Variant {
    private final GatherKernel kernel;
    private final int sms;

    Backend(GpuRuntime gpu, int device) {
      this.kernel = new GatherKernel(gpu);
      this.sms = gpu.multiprocessorCount(device);
    }

    @Override public String name() { return "backend"; }

    @Override public String geometry(int n, long blockSize) {
      Dim3 g = GatherKernel.grid(sms, n, blockSize);
      return g.x() + "x" + g.y() + "x" + GatherKernel.THREADS;
    }

    @Override public void launch(GpuStream stream, long table, int n, long srcBase, long dstBase, long blockSize) {
      kernel.launch(stream, table, n, srcBase, dstBase, blockSize, blockSize);
    }

    @Override public void close() { kernel.close(); }
  }

  /** The first kernel's vector loop (a CTA per block, one 16-byte load per thread per step). */
  static final String FIRST_SOURCE = """
      typedef unsigned long long u64;
      struct __align__(16) v16 { u64 lo, hi; };
      extern "C" __global__ void probe_first(const u64* __restrict__ table, unsigned int n, u64 srcBase, u64 dstBase, u64 sameSize) {
        const u64 stride = (u64) gridDim.y * blockDim.x;
        for (unsigned int i = blockIdx.x; i < n; i += gridDim.x) {
          const unsigned char* s = (const unsigned char*) (srcBase + table[i]);
          unsigned char* d = (unsigned char*) (dstBase + table[n + i]);
          const u64 len = sameSize != 0 ? sameSize : table[2ull * n + i];
          const u64 first = (u64) blockIdx.y * blockDim.x + threadIdx.x;
          const u64 body = len >> 4;
          const v16* s4 = (const v16*) s;
          v16* d4 = (v16*) d;
          for (u64 k = first; k < body; k += stride) d4[k] = s4[k];
        }
      }
      """;

  private static final class First implements Variant {
    private final GpuRuntime gpu;
    private final GpuModule module;
    private final GpuFunction fn;
    private final int sms;

    First(GpuRuntime gpu, int device) {
      this.gpu = gpu;
      this.module = gpu.loadModule(device, gpu.compile(device, FIRST_SOURCE, "probe_first.cu"));
      this.fn = module.function("probe_first");
      this.sms = gpu.multiprocessorCount(device);
    }

    @Override public String name() { return "first"; }

    private Dim3 grid(int n, long bs) {
      int x = (int) Math.min(n, (long) sms * 16);
      int y = (int) Math.max(1, Math.min((bs + (64 << 10) - 1) / (64 << 10), Math.max(1, (long) sms * 16 / x)));
      return new Dim3(x, y, 1);
    }

    @Override public String geometry(int n, long blockSize) {
      Dim3 g = grid(n, blockSize);
      return g.x() + "x" + g.y() + "x256";
    }

    @Override public void launch(GpuStream stream, long table, int n, long srcBase, long dstBase, long blockSize) {
      gpu.launch(fn, grid(n, blockSize), Dim3.of(256), 0, stream, KernelArgs.of().pointer(table).i32(n).pointer(srcBase).pointer(dstBase).i64(blockSize));
    }

    @Override public void close() { module.close(); }
  }

  /**
   * The flat kernel: work item {@code w} is piece {@code w % pieces} of block {@code w / pieces}, a piece being
   * {@code GROUP x UNROLL} 16-byte vectors; the groups of the grid stride over the items, so every shape (few big
   * blocks, many small ones) splits into equal pieces over the whole GPU and no group is left idle by a block count
   * that does not divide. A group reloads the table only when its next item is in another block. Head and tail bytes
   * (blocks not a multiple of 16 or not 16-aligned) go with piece 0; a block whose source and destination differ
   * in alignment modulo 16 moves byte by byte, a piece's worth of bytes per item.
   */
  static String flatSource(int group, int unroll, int threads, boolean streaming) {
    return """
        typedef unsigned long long u64;
        struct __align__(16) v16 { u64 lo, hi; };
        #define GROUP %d
        #define UNROLL %d
        #define STREAMING %d
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
        extern "C" __global__ void __launch_bounds__(%d) probe_flat(const u64* __restrict__ table, unsigned int n, u64 srcBase,
                                                                     u64 dstBase, u64 sameSize, u64 pieces) {
          const unsigned lane = threadIdx.x %% GROUP;
          const u64 groupsPerCta = blockDim.x / GROUP;
          const u64 groups = (u64) gridDim.x * groupsPerCta;
          const u64 step = (u64) GROUP * UNROLL;
          const u64 items = (u64) n * pieces;
          u64 cur = ~0ull, len = 0, head = 0, body = 0;
          const unsigned char* s = 0;
          unsigned char* d = 0;
          bool vec = true;
          for (u64 w = (u64) blockIdx.x * groupsPerCta + threadIdx.x / GROUP; w < items; w += groups) {
            const u64 i = w / pieces, p = w - i * pieces;
            if (i != cur) {
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
              if (base >= body) continue;
              v16 r[UNROLL];
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
        """.formatted(group, unroll, streaming ? 1 : 0, threads);
  }

  private static final class Flat implements Variant {
    private final GpuRuntime gpu;
    private final String name;
    private final GpuModule module;
    private final GpuFunction fn;
    private final int group, unroll, threads, resident;

    Flat(GpuRuntime gpu, int device, String name, int group, int unroll, int threads, boolean streaming) {
      this.gpu = gpu;
      this.name = name;
      this.group = group;
      this.unroll = unroll;
      this.threads = threads;
      this.module = gpu.loadModule(device, gpu.compile(device, flatSource(group, unroll, threads, streaming), "probe_" + name + ".cu"));
      this.fn = module.function("probe_flat");
      int perSm = gpu.maxActiveBlocksPerMultiprocessor(fn, threads, 0);
      this.resident = Math.max(1, perSm) * gpu.multiprocessorCount(device);
    }

    @Override public String name() { return name; }

    private long pieces(long bs) {
      long pieceBytes = (long) group * unroll * 16;
      return Math.max(1, (bs + pieceBytes - 1) / pieceBytes);
    }

    private int ctas(int n, long bs) {
      long groupsPerCta = threads / group;
      long items = n * pieces(bs);
      return (int) Math.max(1, Math.min(resident, (items + groupsPerCta - 1) / groupsPerCta));
    }

    @Override public String geometry(int n, long blockSize) {
      return ctas(n, blockSize) + "x1x" + threads + " (" + pieces(blockSize) + " pieces/block, " + resident + " resident)";
    }

    @Override public void launch(GpuStream stream, long table, int n, long srcBase, long dstBase, long blockSize) {
      gpu.launch(fn, Dim3.of(ctas(n, blockSize)), Dim3.of(threads), 0, stream,
          KernelArgs.of().pointer(table).i32(n).pointer(srcBase).pointer(dstBase).i64(blockSize).i64(pieces(blockSize)));
    }

    @Override public void close() { module.close(); }
  }
}
