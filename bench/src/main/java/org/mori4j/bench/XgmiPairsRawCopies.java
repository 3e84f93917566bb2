package org.mori4j.bench;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;

/**
 * The baseline row of {@code xgmi-pairs}: the same routes with the driver's copies and no engine, all at once.
 * Every route gets its own stream (on its source device) and its own thread; at one release time each thread
 * issues its route's blocks ({@code cuMemcpyPeerAsync} between two devices, {@code cuMemcpyDtoDAsync} on one; a
 * batch is one copy per block, issued back to back) and synchronizes its stream, and an iteration ends when the
 * last route of the last engine is done, as for the engines. The buffers follow the same layout with the same
 * patterns and are checked the same way, so the raw row is checked too. Buffers, streams and threads are this
 * object's own and freed before {@link #run} returns.
 */
final class XgmiPairsRawCopies {
  private XgmiPairsRawCopies() {}

  /** What a run gives: every iteration's {@code [release, end per engine...]}, and the check (null: every byte right). */
  record Result(List<long[]> iterations, String bad, int lateStarts, long latestStart) {}

  /** The driver's call the baseline makes for a pair, named as the runtime names it. */
  static String copyName(GpuRuntime gpu, boolean peer) {
    String p = switch (gpu.name()) {
      case "cuda" -> "cuMemcpy";
      case "hip" -> "hipMemcpy";
      default -> gpu.name() + "-memcpy";
    };
    return p + (peer ? "PeerAsync" : "DtoDAsync");
  }

  static Result run(GpuRuntime gpu, List<Integer> devices, XgmiPairsLayout layout, long rowSeed, int iters, int warmup, long marginNanos)
      throws Exception {
    int n = devices.size();
    List<DeviceBuffer> sources = new ArrayList<>(), destinations = new ArrayList<>();
    List<GpuStream> streams = new ArrayList<>();
    List<XgmiPairsLayout.Route> routes = layout.routes();
    ExecutorService threads = Executors.newFixedThreadPool(routes.size(), Thread.ofPlatform().name("xgmi-pairs-raw-", 0).factory());
    try (XgmiPairsBytes bytes = new XgmiPairsBytes(gpu)) {
      Set<String> enabled = new HashSet<>();
      for (XgmiPairsLayout.Route r : routes) {
        int a = devices.get(r.source()), b = devices.get(r.destination());
        if (a != b && enabled.add(a + ">" + b)) {
          gpu.enablePeerAccess(a, b);
          gpu.enablePeerAccess(b, a);
        }
      }
      for (int i = 0; i < n; i++) {
        sources.add(gpu.allocDevice(devices.get(i), layout.sourceBytes()));
        destinations.add(gpu.allocDevice(devices.get(i), layout.destinationBytes()));
        bytes.fill(sources.get(i).address(), layout.sourceBytes(), XgmiPairsLayout.seed(rowSeed, i));
        bytes.zero(destinations.get(i).address(), layout.destinationBytes());
      }
      for (XgmiPairsLayout.Route r : routes) streams.add(gpu.createStream(devices.get(r.source())));
      List<long[]> measured = new ArrayList<>();
      int late = 0;
      long latest = 0;
      for (int it = 0; it < warmup + iters; it++) {
        long release = System.nanoTime() + marginNanos;
        List<Future<long[]>> done = new ArrayList<>();
        for (int k = 0; k < routes.size(); k++) {
          XgmiPairsLayout.Route r = routes.get(k);
          GpuStream st = streams.get(k);
          long src = sources.get(r.source()).address(), dst = destinations.get(r.destination()).address();
          int sd = devices.get(r.source()), dd = devices.get(r.destination());
          done.add(threads.submit(() -> copy(gpu, r, st, src, sd, dst, dd, release)));
        }
        long[] row = new long[n + 1];
        row[0] = release;
        boolean anyLate = false;
        for (int k = 0; k < routes.size(); k++) {
          long[] r = done.get(k).get();
          int i = routes.get(k).source();
          row[i + 1] = Math.max(row[i + 1], r[0]);
          anyLate |= r[1] > XgmiPairsEngines.LATE_NANOS;
          if (it >= warmup) latest = Math.max(latest, r[1]);
        }
        if (it >= warmup) {
          measured.add(row);
          if (anyLate) late++;
        }
      }
      String bad = null;
      for (int j = 0; j < n && bad == null; j++) {
        bad = bytes.check(destinations.get(j).address(), layout.into(j), i -> XgmiPairsLayout.seed(rowSeed, i), "raw copies into engine " + j + "'s buffer");
      }
      return new Result(measured, bad, late, latest);
    } finally {
      threads.shutdownNow();
      for (GpuStream s : streams) s.close();
      for (DeviceBuffer b : sources) b.close();
      for (DeviceBuffer b : destinations) b.close();
    }
  }

  private static long[] copy(GpuRuntime gpu, XgmiPairsLayout.Route r, GpuStream st, long src, int sd, long dst, int dd, long release) {
    long late = XgmiPairsMember.waitUntil(release) - release;
    for (int b = 0; b < r.sizes().length; b++) {
      long to = dst + r.destinationOffsets()[b], from = src + r.sourceOffsets()[b];
      if (sd == dd) gpu.copyDeviceToDeviceAsync(to, from, r.sizes()[b], st);
      else gpu.copyPeerAsync(to, dd, from, sd, r.sizes()[b], st);
    }
    st.synchronize();
    return new long[] {System.nanoTime(), late};
  }
}
