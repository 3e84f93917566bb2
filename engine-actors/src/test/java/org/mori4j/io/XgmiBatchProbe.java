package org.mori4j.io;

import java.util.Arrays;
import java.util.Locale;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * A measuring tool run by hand on a GPU machine (not a test): splits one XGMI session batch write of
 * {@code blocks} x 4 KiB (reversed every-other-slot order, so it is one kernel launch) into the time the
 * {@code batchWrite} call takes to return and the time from there until the status says it is done, both with
 * the caller spinning on the status and with {@code await()}. Both engines are in this JVM on one device.
 *
 * <p>{@code bash .device/run.sh org.mori4j.io.XgmiBatchProbe [blocks] [iters]}
 */
public final class XgmiBatchProbe {
  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 4096;
    int iters = args.length > 1 ? Integer.parseInt(args[1]) : 400;
    long bs = 4096;
    GpuRuntime gpu = GpuRuntimes.select("auto");
    long bytes = 2L * n * bs;
    try (DeviceBuffer a = gpu.allocDevice(0, bytes); DeviceBuffer b = gpu.allocDevice(0, bytes);
         IoEngine x = IoEngine.create("probe-a", IoEngineConfig.loopback()); IoEngine y = IoEngine.create("probe-b", IoEngineConfig.loopback())) {
      x.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
      y.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
      x.registerRemoteEngine(y.engineDesc());
      MemoryDesc local = x.registerMemory(a.address(), bytes, 0, MemoryLocationType.GPU);
      MemoryDesc remote = y.registerMemory(b.address(), bytes, 0, MemoryLocationType.GPU);
      IoEngineSession session = x.createSession(local, remote).orElseThrow();
      long[] offsets = new long[n], sizes = new long[n];
      for (int i = 0; i < n; i++) {
        offsets[i] = (long) (n - 1 - i) * 2 * bs;
        sizes[i] = bs;
      }
      for (String mode : new String[] {"spin", "await", "spin", "await"}) {
        long[] call = new long[iters], rest = new long[iters];
        for (int w = 0; w < 100; w++) check(session.batchWrite(offsets, offsets, sizes, x.allocateTransferUid()).await());
        for (int it = 0; it < iters; it++) {
          long t0 = System.nanoTime();
          TransferStatus s = session.batchWrite(offsets, offsets, sizes, x.allocateTransferUid());
          long t1 = System.nanoTime();
          if (mode.equals("spin")) {
            while (s.inProgress()) Thread.onSpinWait();
          } else {
            s.await();
          }
          long t2 = System.nanoTime();
          check(s);
          call[it] = t1 - t0;
          rest[it] = t2 - t1;
        }
        System.out.printf(Locale.ROOT, "%d x 4 KiB reversed, %-5s: batchWrite returns p50 %.1f us (p90 %.1f); then done after p50 %.1f us (p90 %.1f); total p50 %.1f us%n",
            n, mode, pct(call, 50), pct(call, 90), pct(rest, 50), pct(rest, 90), pct(sum(call, rest), 50));
      }
    }
  }

  private static long[] sum(long[] a, long[] b) {
    long[] s = new long[a.length];
    for (int i = 0; i < a.length; i++) s[i] = a[i] + b[i];
    return s;
  }

  private static void check(TransferStatus s) {
    if (!s.succeeded()) throw new IllegalStateException(s.code() + ": " + s.message());
  }

  private static double pct(long[] a, int p) {
    long[] c = a.clone();
    Arrays.sort(c);
    return c[Math.min(c.length - 1, c.length * p / 100)] / 1e3;
  }
}
