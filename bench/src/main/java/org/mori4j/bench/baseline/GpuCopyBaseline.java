package org.mori4j.bench.baseline;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.mori4j.bench.BaselineRow;
import org.mori4j.bench.DataPattern;
import org.mori4j.bench.HumanSize;
import org.mori4j.bench.ResultRow;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * The raw-copy ceiling of {@code --mem-type gpu}, measured in the same run on the bench's own device: the
 * driver's synchronous copies between pinned host memory and device memory ("cuMemcpy H2D pinned" and
 * "cuMemcpy D2H pinned"; "hipMemcpy ..." on HIP), which bound what any transfer that stages device memory
 * through host memory can reach, plus a device-to-device copy on the same device and, when the target's
 * buffer is on another GPU of this machine, a peer copy to it, for context. Each copy is timed one at a
 * time with {@code System.nanoTime} like a mori4j row of batch 1; device-to-device and peer copies return
 * before they finish when issued synchronously, so those are issued on a stream and timed up to the
 * stream's synchronize. Bandwidth is bytes copied per second (a device-to-device copy reads and writes each
 * byte, so its memory traffic is twice that). Buffers are this baseline's own and freed before it returns.
 */
public final class GpuCopyBaseline {
  private GpuCopyBaseline() {}

  /** "cuMemcpy" or "hipMemcpy": the driver call the rows are named after. */
  public static String copyName(GpuRuntime runtime) {
    return runtime.name().equals("hip") ? "hipMemcpy" : "cuMemcpy";
  }

  public static String h2dSeries(GpuRuntime runtime) {
    return copyName(runtime) + " H2D pinned";
  }

  public static String d2hSeries(GpuRuntime runtime) {
    return copyName(runtime) + " D2H pinned";
  }

  public static String d2dSeries(GpuRuntime runtime) {
    return copyName(runtime) + " D2D";
  }

  public static String peerSeries(GpuRuntime runtime, int device, int peer) {
    return copyName(runtime) + "Peer GPU" + device + "->GPU" + peer;
  }

  /**
   * Measures the rows.
   *
   * @param peer        another device of this machine to copy to, or -1 for none
   * @param size        bytes per copy
   * @param warmupNanos least warm-up time per row (capped at 2 s: copies need no JIT, only clocks up)
   */
  public static List<BaselineRow> run(GpuRuntime runtime, int device, int peer, long size, int iters, int warmup, long warmupNanos) {
    List<BaselineRow> rows = new ArrayList<>();
    String where = "GPU" + device + " (" + runtime.deviceName(device) + "), " + HumanSize.format(size);
    long warmNanos = Math.min(warmupNanos, 2_000_000_000L);
    int warmIters = Math.max(3, warmup);
    PinnedBuffer host = null;
    DeviceBuffer a = null;
    DeviceBuffer b = null;
    DeviceBuffer p = null;
    GpuStream stream = null;
    try {
      host = runtime.allocPinned(size);
      a = runtime.allocDevice(device, size);
      b = runtime.allocDevice(device, size);
      stream = runtime.createStream(device);
      // real bytes, not a zero page the driver or a compressing link could take a shortcut on
      DataPattern.fillAt(host.segment(), 0, size, 0x5EEDL);
      PinnedBuffer h = host;
      long da = a.address();
      long db = b.address();
      GpuStream s = stream;
      rows.add(measure(h2dSeries(runtime), size, iters, warmIters, warmNanos,
          () -> runtime.copyHostToDevice(da, h.segment(), size), "pinned host -> " + where + ", synchronous copy"));
      rows.add(measure(d2hSeries(runtime), size, iters, warmIters, warmNanos,
          () -> runtime.copyDeviceToHost(h.segment(), da, size), where + " -> pinned host, synchronous copy"));
      rows.add(measure(d2dSeries(runtime), size, iters, warmIters, warmNanos, () -> {
        runtime.copyDeviceToDeviceAsync(db, da, size, s);
        s.synchronize();
      }, "device to device on " + where + ", async on a stream + synchronize; bytes copied/s (memory traffic is 2x)"));
      if (peer >= 0 && peer != device) {
        String series = peerSeries(runtime, device, peer);
        try {
          p = runtime.allocDevice(peer, size);
          boolean direct = runtime.canAccessPeer(device, peer);
          if (direct) runtime.enablePeerAccess(device, peer);
          long dp = p.address();
          rows.add(measure(series, size, iters, warmIters, warmNanos, () -> {
            runtime.copyPeerAsync(dp, peer, da, device, size, s);
            s.synchronize();
          }, where + " -> GPU" + peer + ", async on a stream + synchronize, "
              + (direct ? "peer access enabled" : "no peer access: the driver stages through the host")));
        } catch (RuntimeException e) {
          rows.add(BaselineRow.missing(series, "failed: " + e.getMessage()));
        }
      }
    } catch (RuntimeException e) {
      // an allocation failed: say so for every row not measured, the mori4j figures stay valid
      for (String series : List.of(h2dSeries(runtime), d2hSeries(runtime), d2dSeries(runtime))) {
        if (rows.stream().noneMatch(r -> r.series().equals(series))) rows.add(BaselineRow.missing(series, "failed: " + e.getMessage()));
      }
    } finally {
      // a stream first: work on it may still use the buffers
      if (stream != null) stream.close();
      if (p != null) p.close();
      if (b != null) b.close();
      if (a != null) a.close();
      if (host != null) host.close();
    }
    return rows;
  }

  private static BaselineRow measure(String series, long size, int iters, int warmIters, long warmNanos, Runnable copy,
                                     String note) {
    try {
      long start = System.nanoTime();
      for (int i = 0; i < warmIters || System.nanoTime() - start < warmNanos; i++) copy.run();
      long[] lat = new long[iters];
      for (int i = 0; i < iters; i++) {
        long t0 = System.nanoTime();
        copy.run();
        lat[i] = System.nanoTime() - t0;
      }
      return new BaselineRow(series, ResultRow.fromLatencies(size, 1, lat), note + String.format(Locale.ROOT, ", %d copies", iters));
    } catch (RuntimeException e) {
      return BaselineRow.missing(series, "failed: " + e.getMessage());
    }
  }
}
