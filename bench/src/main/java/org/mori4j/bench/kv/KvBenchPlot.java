package org.mori4j.bench.kv;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.mori4j.bench.plot.Plot;
import org.mori4j.bench.plot.PlotPoint;
import org.mori4j.bench.plot.PlotSeries;
import org.mori4j.bench.plot.RunInfo;
import org.mori4j.bench.plot.SvgPlot;

/**
 * kv-bench's {@code --plot}: one measured series per mode (push, pull, stream) with a point per request length at
 * its bytes, and as baselines the contiguous transfer of the same bytes and the per-block loop.
 */
final class KvBenchPlot {
  private KvBenchPlot() {}

  static Plot plot(List<KvBenchRow> rows) {
    Map<String, List<PlotPoint>> measured = new LinkedHashMap<>();
    List<PlotPoint> contiguous = new ArrayList<>(), naive = new ArrayList<>();
    String model = rows.isEmpty() ? "?" : rows.get(0).model();
    for (KvBenchRow r : rows) {
      measured.computeIfAbsent(r.mode(), k -> new ArrayList<>()).add(new PlotPoint(r.bytes(), r.avgBwGBps(), r.p50LatUs(), r.p99LatUs()));
      contiguous.add(new PlotPoint(r.bytes(), r.contiguousAvgBwGBps(), Double.NaN, Double.NaN));
      if (!Double.isNaN(r.naiveAvgBwGBps())) naive.add(new PlotPoint(r.bytes(), r.naiveAvgBwGBps(), Double.NaN, Double.NaN));
    }
    List<PlotSeries> series = new ArrayList<>();
    measured.forEach((mode, pts) -> series.add(new PlotSeries("kv " + mode, PlotSeries.Kind.MEASURED, pts,
        mode.equals("stream") ? "first layer's prefill to all layers landed, prefill time included" : "migration call to completion")));
    series.add(new PlotSeries("contiguous transfer, same bytes", PlotSeries.Kind.BASELINE, contiguous, "one transfer of the row's bytes, same iterations"));
    if (!naive.isEmpty()) series.add(new PlotSeries("per-block loop", PlotSeries.Kind.BASELINE, naive, "one transfer per (layer, tensor, block) slot"));
    return new Plot("kv-bench " + model + " over " + (rows.isEmpty() ? "tcp" : rows.get(0).backend()), RunInfo.current(""), series);
  }

  static void write(List<KvBenchRow> rows, Path file) throws IOException {
    SvgPlot.write(plot(rows), file);
  }
}
