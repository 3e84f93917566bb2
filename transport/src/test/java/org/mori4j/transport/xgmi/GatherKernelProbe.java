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
 * A measuring tool for the batch kernel, run by hand on a GPU machine (not a test): for each batch shape (blocks
 * in reversed every-other-slot order, what {@code bench --block-order reversed} sends), the backend's kernel
 * with its own geometry, the first version of the kernel (a CTA per block, one 16-byte load in flight per
 * thread) and, as the ceiling, one contiguous {@code cuMemcpyDtoDAsync} of the same bytes on the same device.
 * GPU time comes from timing events around the work; wall time is issue to {@code synchronize}; every kernel's
 * result is checked byte for byte once before it is timed.
 *
 * <p>{@code bash .device/run.sh org.mori4j.transport.xgmi.GatherKernelProbe [device] [iters]}
 */
public final class GatherKernelProbe {
  /** The first kernel's vector loop (a CTA per block, one 16-byte load per thread per step; the shapes here are 16-byte aligned). */
  static final String CTA_SOURCE = """
      typedef unsigned long long u64;
      struct __align__(16) v16 { u64 lo, hi; };
      extern "C" __global__ void probe_cta(const u64* __restrict__ table, unsigned int n, u64 srcBase, u64 dstBase, u64 sameSize) {
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
         GpuModule ctaModule = gpu.loadModule(device, gpu.compile(device, CTA_SOURCE, "probe_cta.cu"));
         GpuEvent e0 = gpu.createEvent(device, true); GpuEvent e1 = gpu.createEvent(device, true)) {
      GpuModule.GpuFunction cta = ctaModule.function("probe_cta");
      // the first shape runs twice: its first pass (printed, not a result) warms the JIT, the driver and the clocks
      System.out.println("(the first 4096 x 4096 B pass is a warm-up)");
      for (Shape shape : new Shape[] {new Shape(4096, 4096), new Shape(4096, 4096), new Shape(1024, 16384), new Shape(32768, 4096), new Shape(64, 256 << 10), new Shape(8, 4 << 20)}) {
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
          }
          long tableBytes = 16L * n;
          gpu.copyHostToDevice(table.address(), host.segment(), tableBytes);
          Dim3 grid = GatherKernel.grid(sms, n, bs);
          int ctaX = (int) Math.min(n, (long) sms * 16);
          int ctaY = (int) Math.max(1, Math.min((bs + (64 << 10) - 1) / (64 << 10), Math.max(1, (long) sms * 16 / ctaX)));
          System.out.printf(Locale.ROOT, "%n%d blocks x %d B reversed, %d MiB in all%n", n, bs, (n * bs) >> 20);
          row(gpu, "backend kernel " + grid.x() + "x" + grid.y(), stream, e0, e1, src, dst, bytes, bs, n, iters,
              t -> kernel.launch(stream, t, n, src.address(), dst.address(), bs, bs), table, host, tableBytes);
          row(gpu, "first kernel (CTA per block) " + ctaX + "x" + ctaY, stream, e0, e1, src, dst, bytes, bs, n, iters,
              t -> gpu.launch(cta, new Dim3(ctaX, ctaY, 1), Dim3.of(256), 0, stream, KernelArgs.of().pointer(t).i32(n).pointer(src.address()).pointer(dst.address()).i64(bs)),
              table, host, tableBytes);
          rawCopy(gpu, stream, e0, e1, src, dst, (long) n * bs, iters);
        }
      }
    }
  }

  /** One contiguous device-to-device copy of the batch's bytes: what the kernel would ideally match. */
  private static void rawCopy(GpuRuntime gpu, GpuStream stream, GpuEvent e0, GpuEvent e1, DeviceBuffer src, DeviceBuffer dst, long moved, int iters) {
    for (int w = 0; w < 20; w++) gpu.copyDeviceToDeviceAsync(dst.address(), src.address(), moved, stream);
    stream.synchronize();
    long[] wall = new long[iters];
    float[] gpuUs = new float[iters];
    for (int it = 0; it < iters; it++) {
      long t0 = System.nanoTime();
      e0.record(stream);
      gpu.copyDeviceToDeviceAsync(dst.address(), src.address(), moved, stream);
      e1.record(stream);
      e1.synchronize();
      wall[it] = System.nanoTime() - t0;
      gpuUs[it] = e1.elapsedMillisSince(e0) * 1000f;
    }
    System.out.printf(Locale.ROOT, "  %-40s     | contiguous copy:    wall p50 %7.1f us (%6.1f GB/s), gpu p50 %7.1f us (%6.1f GB/s)%n",
        "raw cuMemcpyDtoDAsync, same bytes", p50(wall) / 1e3, moved / p50(wall), p50(gpuUs), moved / (p50(gpuUs) * 1e3));
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
