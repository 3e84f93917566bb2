package org.mori4j.transport.xgmi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Locale;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * A measuring tool for the batch kernel, run by hand on a GPU machine (not a test): where the time of one
 * batch goes between the block table's upload, the launch call and the kernel itself, for the backend's
 * kernel and for candidate variants, on one device with blocks in reversed every-other-slot order (what
 * {@code bench --block-order reversed} sends). GPU time comes from timing events around the work; every
 * variant's result is checked byte for byte once before it is timed.
 *
 * <p>{@code bash .device/run.sh org.mori4j.transport.xgmi.GatherKernelProbe [device] [iters]}
 */
public final class GatherKernelProbe {
  /** A warp per block (lanes take 16 bytes each, four loads in flight before the stores); grid y splits big blocks. */
  static final String WARP_SOURCE = """
      typedef unsigned long long u64;
      struct __align__(16) v16 { u64 lo, hi; };
      extern "C" __global__ void probe_warp(const u64* __restrict__ table, unsigned int n, u64 srcBase, u64 dstBase, u64 sameSize) {
        const unsigned lane = threadIdx.x & 31;
        const u64 warps = (u64) gridDim.x * (blockDim.x >> 5);
        const u64 stride = (u64) gridDim.y * 32;
        for (u64 i = (u64) blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); i < n; i += warps) {
          u64 v = 0;
          if (lane < (sameSize != 0 ? 2 : 3)) v = table[lane * (u64) n + i];
          const unsigned char* s = (const unsigned char*) (srcBase + __shfl_sync(0xffffffffu, v, 0));
          unsigned char* d = (unsigned char*) (dstBase + __shfl_sync(0xffffffffu, v, 1));
          const u64 len = sameSize != 0 ? sameSize : __shfl_sync(0xffffffffu, v, 2);
          const u64 first = (u64) blockIdx.y * 32 + lane;
          const u64 mis = (u64) s & 15;
          if (mis == ((u64) d & 15)) {
            u64 head = mis == 0 ? 0 : 16 - mis;
            if (head > len) head = len;
            if (blockIdx.y == 0 && lane < head) d[lane] = s[lane];
            const u64 body = (len - head) >> 4;
            const v16* s4 = (const v16*) (s + head);
            v16* d4 = (v16*) (d + head);
            u64 k = first;
            for (; k + 3 * stride < body; k += 4 * stride) {
              v16 a = s4[k], b = s4[k + stride], c = s4[k + 2 * stride], e = s4[k + 3 * stride];
              d4[k] = a; d4[k + stride] = b; d4[k + 2 * stride] = c; d4[k + 3 * stride] = e;
            }
            for (; k < body; k += stride) d4[k] = s4[k];
            const u64 tail = head + (body << 4);
            if (blockIdx.y == 0 && lane < len - tail) d[tail + lane] = s[tail + lane];
          } else {
            for (u64 k = first; k < len; k += stride) d[k] = s[k];
          }
        }
      }
      """;

  private record Shape(int blocks, long blockSize) {}

  private interface Launch {
    void run(long table);
  }

  public static void main(String[] args) {
    int device = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    int iters = args.length > 1 ? Integer.parseInt(args[1]) : 400;
    GpuRuntime gpu = GpuRuntimes.select("auto");
    System.out.printf(Locale.ROOT, "%s %s, device %d: %s, %d SMs%n", gpu.name(), gpu.version(), device, gpu.deviceName(device),
        gpu.multiprocessorCount(device));
    int sms = gpu.multiprocessorCount(device);
    try (GpuStream stream = gpu.createStream(device); GatherKernel kernel = new GatherKernel(gpu);
         GpuModule warpModule = gpu.loadModule(device, gpu.compile(device, WARP_SOURCE, "probe_warp.cu"));
         GpuModule ctaModule = gpu.loadModule(device, GatherKernel.image(gpu, device));
         GpuEvent e0 = gpu.createEvent(device, true); GpuEvent e1 = gpu.createEvent(device, true)) {
      GpuModule.GpuFunction warp = warpModule.function("probe_warp");
      GpuModule.GpuFunction cta = ctaModule.function(GatherKernel.NAME);
      for (Shape shape : new Shape[] {new Shape(4096, 4096), new Shape(32768, 4096), new Shape(1024, 16384), new Shape(64, 256 << 10), new Shape(8, 4 << 20)}) {
        int n = shape.blocks();
        long bs = shape.blockSize();
        long bytes = 2L * n * bs;
        try (DeviceBuffer src = gpu.allocDevice(device, bytes); DeviceBuffer dst = gpu.allocDevice(device, bytes);
             PinnedBuffer host = gpu.allocPinned(24L * n); DeviceBuffer table = gpu.allocDevice(device, 24L * n)) {
          fillRandom(gpu, src, bytes);
          for (int i = 0; i < n; i++) {
            long slot = (long) (n - 1 - i) * 2 * bs;
            host.segment().setAtIndex(ValueLayout.JAVA_LONG, i, slot);
            host.segment().setAtIndex(ValueLayout.JAVA_LONG, n + i, slot);
            host.segment().setAtIndex(ValueLayout.JAVA_LONG, 2L * n + i, bs);
          }
          long tableBytes = 24L * n;
          gpu.copyHostToDevice(table.address(), host.segment(), tableBytes);
          long maxWarpCtas = (long) sms * 8;
          int warpX = (int) Math.min((n + 7) / 8, maxWarpCtas);
          int warpY = (int) Math.max(1, Math.min((bs + (16 << 10) - 1) / (16 << 10), Math.max(1, maxWarpCtas * 8 / n)));
          int ctaBig = Math.min(n, 65535);
          System.out.printf(Locale.ROOT, "%n%d blocks x %d B reversed, %d MiB in all%n", n, bs, (n * bs) >> 20);
          row(gpu, "backend kernel, backend geometry", stream, e0, e1, src, dst, bytes, bs, n, iters, t -> kernel.launch(stream, t, n, src.address(), dst.address(), bs, bs), table, host, tableBytes);
          row(gpu, "backend kernel, a CTA per block", stream, e0, e1, src, dst, bytes, bs, n, iters,
              t -> gpu.launch(cta, new Dim3(ctaBig, 1, 1), Dim3.of(256), 0, stream, KernelArgs.of().pointer(t).i32(n).pointer(src.address()).pointer(dst.address()).i64(0)), table, host, tableBytes);
          row(gpu, "warp per block " + warpX + "x" + warpY, stream, e0, e1, src, dst, bytes, bs, n, iters,
              t -> gpu.launch(warp, new Dim3(warpX, warpY, 1), Dim3.of(256), 0, stream, KernelArgs.of().pointer(t).i32(n).pointer(src.address()).pointer(dst.address()).i64(bs)), table, host, tableBytes);
          // the table read by the kernel straight from pinned host memory (unified addressing): no upload copy
          long hostTable = host.segment().address();
          row(gpu, "warp per block, table read from host", stream, e0, e1, src, dst, bytes, bs, n, iters,
              t -> gpu.launch(warp, new Dim3(warpX, warpY, 1), Dim3.of(256), 0, stream, KernelArgs.of().pointer(hostTable).i32(n).pointer(src.address()).pointer(dst.address()).i64(bs)), table, null, tableBytes);
          long[] offsets = new long[n], sizes = new long[n];
          for (int i = 0; i < n; i++) {
            offsets[i] = (long) (n - 1 - i) * 2 * bs;
            sizes[i] = bs;
          }
          long[] fill = new long[iters];
          for (int it = 0; it < iters; it++) {
            long t0 = System.nanoTime();
            MemorySegment.copy(offsets, 0, host.segment(), ValueLayout.JAVA_LONG, 0, n);
            MemorySegment.copy(offsets, 0, host.segment(), ValueLayout.JAVA_LONG, 8L * n, n);
            MemorySegment.copy(sizes, 0, host.segment(), ValueLayout.JAVA_LONG, 16L * n, n);
            fill[it] = System.nanoTime() - t0;
          }
          System.out.printf(Locale.ROOT, "  host: copying the %d-entry table from arrays p50 %.1f us%n", n, p50(fill) / 1e3);
        }
      }
    }
  }

  private static void row(GpuRuntime gpu, String name, GpuStream stream, GpuEvent e0, GpuEvent e1, DeviceBuffer src, DeviceBuffer dst, long bytes,
                          long bs, int n, int iters, Launch launch, DeviceBuffer table, PinnedBuffer host, long tableBytes) {
    gpu.fill(dst.address(), (byte) 0, bytes);
    launch.run(table.address());
    stream.synchronize();
    String check = check(gpu, src, dst, bytes, bs, n);
    long[] wall = new long[iters], call = new long[iters], upload = new long[iters];
    float[] gpuUs = new float[iters];
    for (int w = 0; w < 20; w++) {
      launch.run(table.address());
      stream.synchronize();
    }
    for (int it = 0; it < iters; it++) {
      long t0 = System.nanoTime();
      e0.record(stream);
      if (host != null) gpu.copyHostToDeviceAsync(table.address(), host.segment(), tableBytes, stream);
      long t1 = System.nanoTime();
      launch.run(table.address());
      long t2 = System.nanoTime();
      e1.record(stream);
      e1.synchronize();
      long t3 = System.nanoTime();
      wall[it] = t3 - t0;
      upload[it] = t1 - t0;
      call[it] = t2 - t1;
      gpuUs[it] = e1.elapsedMillisSince(e0) * 1000f;
    }
    long[] kernelOnly = new long[iters];
    float[] kernelGpu = new float[iters];
    for (int it = 0; it < iters; it++) {
      long t0 = System.nanoTime();
      e0.record(stream);
      launch.run(table.address());
      e1.record(stream);
      e1.synchronize();
      kernelOnly[it] = System.nanoTime() - t0;
      kernelGpu[it] = e1.elapsedMillisSince(e0) * 1000f;
    }
    double moved = (double) n * bs;
    System.out.printf(Locale.ROOT,
        "  %-40s %s | upload+kernel: wall p50 %7.1f us (%6.1f GB/s), gpu p50 %7.1f us | kernel alone: wall p50 %7.1f us, gpu p50 %7.1f us"
            + " (%6.1f GB/s) | calls: upload %.1f us, launch %.1f us%n",
        name, check, p50(wall) / 1e3, moved / p50(wall), p50(gpuUs), p50(kernelOnly) / 1e3, p50(kernelGpu), moved / (p50(kernelGpu) * 1e3),
        p50(upload) / 1e3, p50(call) / 1e3);
  }

  private static void fillRandom(GpuRuntime gpu, DeviceBuffer buf, long bytes) {
    try (Arena arena = Arena.ofConfined()) {
      long chunk = Math.min(bytes, 16L << 20);
      MemorySegment h = arena.allocate(chunk, 16);
      java.util.SplittableRandom r = new java.util.SplittableRandom(42);
      for (long off = 0; off < bytes; off += chunk) {
        for (long i = 0; i < chunk; i += 8) h.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
        gpu.copyHostToDevice(buf.address() + off, h, Math.min(chunk, bytes - off));
      }
    }
  }

  /** "ok" when every block's slot of dst equals src's and every other slot stayed zero. */
  private static String check(GpuRuntime gpu, DeviceBuffer src, DeviceBuffer dst, long bytes, long bs, int n) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(bytes, 16), d = arena.allocate(bytes, 16), zero = arena.allocate(bs);
      gpu.copyDeviceToHost(s, src.address(), bytes);
      gpu.copyDeviceToHost(d, dst.address(), bytes);
      for (int i = 0; i < n; i++) {
        long at = (long) i * 2 * bs;
        if (s.asSlice(at, bs).mismatch(d.asSlice(at, bs)) >= 0) return "BAD(block slot " + i + ")";
        long gap = at + bs;
        if (d.asSlice(gap, bs).mismatch(zero) >= 0) return "BAD(gap " + i + " written)";
      }
      return "ok ";
    }
  }

  private static double p50(long[] a) {
    long[] c = a.clone();
    Arrays.sort(c);
    return c[c.length / 2];
  }

  private static double p50(float[] a) {
    float[] c = a.clone();
    Arrays.sort(c);
    return c[c.length / 2];
  }
}
