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
 * The raw-copy figures issue 4 compares the XGMI backend with, measured in the same run by calling the driver
 * directly (no engine, no actor): between the bench's device and the target's device, a peer copy
 * ({@code cuMemcpyPeerAsync}) when they differ and a device-to-device copy ({@code cuMemcpyDtoDAsync}) on one
 * device, each issued on a stream and timed up to the stream's synchronize:
 * <ul>
 *   <li>bandwidth: one copy of {@code size} bytes per iteration;</li>
 *   <li>latency: one 4 KiB copy + synchronize per iteration (issue 4's 4 KiB session write is compared with its p50);</li>
 *   <li>a loop of raw copies: {@code blocks} copies of 4 KiB issued one after another, then one synchronize (what a
 *       batch costs without a gather kernel).</li>
 * </ul>
 * Buffers are this baseline's own and freed before it returns; with two devices peer access is enabled first
 * when the hardware has it (the note says which).
 */
public final class XgmiCopyBaseline {
  public static final long SMALL = 4096;

  private XgmiCopyBaseline() {}

  /** "cuMemcpyPeerAsync GPU0->GPU1" or "cuMemcpyDtoDAsync GPU0->GPU0" (hip names on HIP). */
  public static String copySeries(GpuRuntime gpu, int device, int peer) {
    String p = switch (gpu.name()) {
      case "cuda" -> "cuMemcpy";
      case "hip" -> "hipMemcpy";
      default -> gpu.name() + "-memcpy"; // a registered runtime (the CPU tests' in-memory device): not the driver's names
    };
    return (device == peer ? p + "DtoDAsync" : p + "PeerAsync") + " GPU" + device + "->GPU" + peer;
  }

  public static String latencySeries(GpuRuntime gpu, int device, int peer) {
    return copySeries(gpu, device, peer) + " 4 KiB + sync";
  }

  public static String loopSeries(GpuRuntime gpu, int device, int peer, int blocks) {
    return copySeries(gpu, device, peer) + " loop " + blocks + " x 4 KiB";
  }

  /** The raw copies of {@code size}, the 4 KiB copy + synchronize, and (when {@code blocks} > 0) a loop of {@code blocks} 4 KiB copies. */
  public static List<BaselineRow> run(GpuRuntime gpu, int device, int peer, long size, int blocks, int iters, int warmup, long warmupNanos) {
    List<BaselineRow> rows = new ArrayList<>();
    String series = copySeries(gpu, device, peer);
    long bytes = Math.max(size, SMALL * 2 * blocks);
    DeviceBuffer src = null, dst = null;
    PinnedBuffer host = null;
    GpuStream stream = null;
    try {
      boolean direct = device == peer || gpu.canAccessPeer(device, peer);
      if (device != peer && direct) {
        gpu.enablePeerAccess(device, peer);
        gpu.enablePeerAccess(peer, device);
      }
      String link = device == peer ? "one device" : direct ? "peer access enabled" : "no peer access: the driver stages through the host";
      src = gpu.allocDevice(device, bytes);
      dst = gpu.allocDevice(peer, bytes);
      host = gpu.allocPinned(Math.min(bytes, 64L << 20));
      DataPattern.fillAt(host.segment(), 0, host.size(), 0x5EEDL);
      for (long off = 0; off < bytes; off += host.size()) gpu.copyHostToDevice(src.address() + off, host.segment(), Math.min(host.size(), bytes - off));
      stream = gpu.createStream(device);
      long s = src.address(), d = dst.address();
      GpuStream st = stream;
      Copy copy = device == peer ? (to, from, n) -> gpu.copyDeviceToDeviceAsync(to, from, n, st) : (to, from, n) -> gpu.copyPeerAsync(to, peer, from, device, n, st);
      long warmNanos = Math.min(warmupNanos, 2_000_000_000L);
      int warmIters = Math.max(3, warmup);
      rows.add(measure(series, size, 1, iters, warmIters, warmNanos, () -> {
        copy.run(d, s, size);
        st.synchronize();
      }, HumanSize.format(size) + " per copy, async on a stream + synchronize, " + link));
      rows.add(measure(latencySeries(gpu, device, peer), SMALL, 1, Math.max(iters, 1000), warmIters, warmNanos, () -> {
        copy.run(d, s, SMALL);
        st.synchronize();
      }, "one 4 KiB copy + synchronize per iteration, " + link));
      if (blocks > 0) rows.add(measure(loopSeries(gpu, device, peer, blocks), SMALL, blocks, iters, warmIters, warmNanos, () -> {
        // every other 4 KiB slot, like a batch whose blocks are not contiguous
        for (int i = 0; i < blocks; i++) copy.run(d + i * 2 * SMALL, s + i * 2 * SMALL, SMALL);
        st.synchronize();
      }, blocks + " copies of 4 KiB issued back to back, then one synchronize, " + link));
    } catch (RuntimeException e) {
      for (String name : blocks > 0 ? List.of(series, latencySeries(gpu, device, peer), loopSeries(gpu, device, peer, blocks))
          : List.of(series, latencySeries(gpu, device, peer))) {
        if (rows.stream().noneMatch(r -> r.series().equals(name))) rows.add(BaselineRow.missing(name, "failed: " + e.getMessage()));
      }
    } finally {
      if (stream != null) stream.close();
      if (dst != null) dst.close();
      if (src != null) src.close();
      if (host != null) host.close();
    }
    return rows;
  }

  @FunctionalInterface
  private interface Copy {
    void run(long dst, long src, long size);
  }

  private static BaselineRow measure(String series, long size, int batch, int iters, int warmIters, long warmNanos, Runnable body, String note) {
    long start = System.nanoTime();
    for (int i = 0; i < warmIters || System.nanoTime() - start < warmNanos; i++) body.run();
    long[] lat = new long[iters];
    for (int i = 0; i < iters; i++) {
      long t0 = System.nanoTime();
      body.run();
      lat[i] = System.nanoTime() - t0;
    }
    return new BaselineRow(series, ResultRow.fromLatencies(size, batch, lat), note + String.format(Locale.ROOT, ", %d iterations", iters));
  }
}
