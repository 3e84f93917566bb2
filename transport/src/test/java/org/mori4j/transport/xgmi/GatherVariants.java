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
 * name so that a run on the real link (2x H200) compares them there: the previous backend kernel (a group per
 * block on a two-dimensional grid), the first kernel (a CTA per block, one load in flight per thread), and the
 * backend's kernel text ({@link GatherKernel#source}) with one parameter changed: loads in flight per thread, CTA
 * size, threads per work item, streaming accesses, register bounds; and the backend's kernel reading its table from
 * mapped page-locked host memory, as the engine does by default. Every variant takes the backend's table (source offsets,
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

    /** Whether it reads its table in place from page-locked host memory (the engine's default) instead of device memory. */
    default boolean mappedTable() {
      return false;
    }

    @Override
    void close();
  }

  /** The variants by name, in the order the probe prints them; {@code backend} is the production kernel. */
  static Map<String, String> catalogue() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("backend", "GatherKernel as the backend launches it: 4 KiB work items (32 threads x 8 loads in flight), 256-thread CTAs, occupancy grid");
    m.put("mapped", "backend, reading its table in place from page-locked host memory over PCIe (mori4j.xgmi.block-table = mapped, the engine's default since 2e72642)");
    m.put("2d", "the previous backend kernel (to 37adaa5): a group of 32 per block, grid x over blocks (16 CTAs/SM cap), y over 4 KiB pieces");
    m.put("first", "the first kernel: a CTA of 256 per block, one 16-byte load in flight per thread");
    m.put("u4", "backend's kernel with 4 loads in flight per thread (2 KiB items)");
    m.put("u16", "backend's kernel with 16 loads in flight per thread (8 KiB items)");
    m.put("t512", "backend's kernel in 512-thread CTAs");
    m.put("cs", "backend's kernel with streaming accesses (ld.global.nc.L1::no_allocate / st.global.cs on CUDA, nontemporal on HIP)");
    m.put("cta", "backend's kernel with a whole 256-thread CTA per item, 4 loads in flight per thread (16 KiB items)");
    m.put("occ6", "backend's kernel compiled for 6 resident CTAs per SM (__launch_bounds__ min blocks; registers capped)");
    m.put("occ8", "backend's kernel compiled for 8 resident CTAs per SM (registers capped at 32: may spill)");
    return m;
  }

  /**
   * The variants a run times when none are named: all but occ6/occ8, which spill registers and ran at 35-47% of
   * the copy on 1x H100 (bench/results/20261125T0032Z-0549bfc-gather-kernel-1xh100).
   */
  static java.util.List<String> defaults() {
    return catalogue().keySet().stream().filter(v -> !v.startsWith("occ")).toList();
  }

  static Variant open(String name, GpuRuntime gpu, int device) {
    return switch (name) {
      case "backend" -> new Backend(gpu, device, false);
      case "mapped" -> new Backend(gpu, device, true);
      case "2d" -> new TwoD(gpu, device);
      case "first" -> new First(gpu, device);
      case "u4" -> new Flat(gpu, device, name, 32, 4, 256, false);
      case "u16" -> new Flat(gpu, device, name, 32, 16, 256, false);
      case "t512" -> new Flat(gpu, device, name, 32, 8, 512, false);
      case "cs" -> new Flat(gpu, device, name, 32, 8, 256, true);
      case "cta" -> new Flat(gpu, device, name, 256, 4, 256, false);
      case "occ6" -> new Flat(gpu, device, name, 32, 8, 256, false, 6);
      case "occ8" -> new Flat(gpu, device, name, 32, 8, 256, false, 8);
      default -> throw new IllegalArgumentException("variant: unknown name '" + name + "' (known: " + String.join(",", catalogue().keySet()) + ")");
    };
  }

  /** The backend's kernel with the backend's geometry, through {@link GatherKernel#launch}. */
  private static final class Backend implements Variant {
    private final GatherKernel kernel;
    private final int resident;
    private final boolean mapped;

    Backend(GpuRuntime gpu, int device, boolean mapped) {
      this.mapped = mapped;
      this.kernel = new GatherKernel(gpu);
      try (GpuModule m = gpu.loadModule(device, GatherKernel.image(gpu, device))) {
        this.resident = Math.max(1, gpu.maxActiveBlocksPerMultiprocessor(m.function(GatherKernel.NAME), GatherKernel.THREADS, 0))
            * gpu.multiprocessorCount(device);
      }
    }

    @Override public String name() { return mapped ? "mapped" : "backend"; }

    @Override public boolean mappedTable() { return mapped; }

    @Override public String geometry(int n, long blockSize) {
      Dim3 g = GatherKernel.grid(resident, n, blockSize);
      return g.x() + "x" + g.y() + "x" + GatherKernel.THREADS + " (" + GatherKernel.pieces(blockSize) + " items/block, " + resident + " resident)";
    }

    @Override public void launch(GpuStream stream, long table, int n, long srcBase, long dstBase, long blockSize) {
      kernel.launch(stream, table, n, srcBase, dstBase, blockSize, blockSize);
    }

    @Override public void close() { kernel.close(); }
  }

  /** The previous backend kernel (d05ded7 to 37adaa5), for comparison on the link. */
  static final String TWO_D_SOURCE = """
      typedef unsigned long long u64;
      // 16 bytes moved by one 128-bit load and store (no header needed, unlike uint4 from vector_types.h)
      struct __align__(16) v16 { u64 lo, hi; };
      #define GROUP 32
      #define UNROLL 8
      extern "C" __global__ void __launch_bounds__(256) probe_2d(const u64* __restrict__ table, unsigned int n,
                                                                        u64 srcBase, u64 dstBase, u64 sameSize) {
        const unsigned lane = threadIdx.x % GROUP;
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
      """;

  private static final class TwoD implements Variant {
    private final GpuRuntime gpu;
    private final GpuModule module;
    private final GpuFunction fn;
    private final int sms;

    TwoD(GpuRuntime gpu, int device) {
      this.gpu = gpu;
      this.module = gpu.loadModule(device, gpu.compile(device, TWO_D_SOURCE, "probe_2d.cu"));
      this.fn = module.function("probe_2d");
      this.sms = gpu.multiprocessorCount(device);
    }

    @Override public String name() { return "2d"; }

    /** Its grid: x a group per block up to 16 CTAs per SM, y 4 KiB pieces of the largest block while there is room. */
    private Dim3 grid(int n, long maxBlock) {
      long ctas = (long) Math.max(1, sms) * 16;
      int x = (int) Math.max(1, Math.min((n + 7L) / 8, ctas));
      long pieces = Math.max(1, (maxBlock + 4095) / 4096);
      int y = (int) Math.max(1, Math.min(Math.min(pieces, Math.max(1, ctas / x)), 65535));
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

  /** The backend's kernel text with other parameters (see {@link GatherKernel#source}). */
  static String flatSource(int group, int unroll, int threads, boolean streaming) {
    return GatherKernel.source(group, unroll, threads, streaming, 0);
  }

  private static final class Flat implements Variant {
    private final GpuRuntime gpu;
    private final String name;
    private final GpuModule module;
    private final GpuFunction fn;
    private final int group, unroll, threads, resident;

    Flat(GpuRuntime gpu, int device, String name, int group, int unroll, int threads, boolean streaming) {
      this(gpu, device, name, group, unroll, threads, streaming, 0);
    }

    Flat(GpuRuntime gpu, int device, String name, int group, int unroll, int threads, boolean streaming, int minBlocks) {
      this.gpu = gpu;
      this.name = name;
      this.group = group;
      this.unroll = unroll;
      this.threads = threads;
      this.module = gpu.loadModule(device, gpu.compile(device, GatherKernel.source(group, unroll, threads, streaming, minBlocks), "probe_" + name + ".cu"));
      this.fn = module.function(GatherKernel.NAME);
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
      return ctas(n, blockSize) + "x1x" + threads + " (" + pieces(blockSize) + " items/block, " + resident + " resident)";
    }

    @Override public void launch(GpuStream stream, long table, int n, long srcBase, long dstBase, long blockSize) {
      gpu.launch(fn, Dim3.of(ctas(n, blockSize)), Dim3.of(threads), 0, stream,
          KernelArgs.of().pointer(table).i32(n).pointer(srcBase).pointer(dstBase).i64(blockSize).i64(pieces(blockSize)));
    }

    @Override public void close() { module.close(); }
  }
}
