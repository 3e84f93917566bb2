package org.mori4j.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One row of {@code xgmi-pairs}: a series (the engines, or the raw copies beside them) for one pattern, engine
 * count and shape, from every measured iteration's release time and each engine's end. An iteration's time runs
 * from the common release to the end of the last engine; the aggregate bandwidth is all engines' bytes over it
 * (average: bytes x iterations / sum of times; at p50: bytes / p50 time); an engine's own bandwidth is its bytes
 * over its own time from the release, averaged the same way, and the row keeps the slowest and the fastest engine.
 * Percentiles are {@link LatencyStats}'.
 */
record XgmiPairsRow(String series, XgmiPairsLayout.Pattern pattern, int engines, String devices, String mode, XgmiPairsLayout.Shape shape,
                    int iters, double p50Us, double p99Us, double minUs, double avgUs, double aggregateGBps, double aggregateP50GBps,
                    double engineMinGBps, double engineMaxGBps, String note) {

  static XgmiPairsRow of(String series, XgmiPairsLayout layout, String devices, String mode, List<long[]> iterations, String note) {
    int n = layout.engines();
    long[] times = new long[iterations.size()];
    long[] engineSum = new long[n];
    for (int it = 0; it < times.length; it++) {
      long[] r = iterations.get(it);
      long end = r[1];
      for (int i = 0; i < n; i++) {
        end = Math.max(end, r[i + 1]);
        engineSum[i] += Math.max(1, r[i + 1] - r[0]);
      }
      times[it] = Math.max(1, end - r[0]);
    }
    LatencyStats s = LatencyStats.of(times);
    double total = layout.totalBytes();
    double per = layout.shape().bytes();
    double engMin = Double.MAX_VALUE, engMax = 0;
    for (int i = 0; i < n; i++) {
      double bw = per * times.length / engineSum[i];
      engMin = Math.min(engMin, bw);
      engMax = Math.max(engMax, bw);
    }
    // bytes per nanosecond is GB/s (10^9 bytes)
    return new XgmiPairsRow(series, layout.pattern(), n, devices, mode, layout.shape(), times.length, s.p50Ns() / 1e3, s.p99Ns() / 1e3,
        s.minNs() / 1e3, s.meanNs() / 1e3, total * s.count() / s.sumNs(), total / s.p50Ns(), engMin, engMax, note);
  }

  static final List<String> COLUMNS = List.of("Pattern", "N", "Shape", "Series", "Bytes/iter", "P50 (us)", "P99 (us)", "Avg (us)",
      "Aggr avg GB/s", "Aggr p50 GB/s", "Engine min GB/s", "Engine max GB/s");

  List<String> cells() {
    return List.of(pattern.label(), Integer.toString(engines), shape.label(), series, HumanSize.format(shape.bytes() * engines),
        f(p50Us), f(p99Us), f(avgUs), f(aggregateGBps), f(aggregateP50GBps), f(engineMinGBps), f(engineMaxGBps));
  }

  private static String f(double v) {
    return String.format(Locale.ROOT, "%.2f", v);
  }

  static String table(String title, List<XgmiPairsRow> rows) {
    List<List<String>> cells = new ArrayList<>();
    for (XgmiPairsRow r : rows) cells.add(r.cells());
    return ResultTable.box(title, COLUMNS, cells);
  }

  /**
   * The rows as a JSON array: every figure above, the machine ({@code --machine}, null when not given), and on each
   * row of {@code engineSeries} its aggregate average as a share of the other row of its pattern and shape (the raw copies).
   */
  static String json(List<XgmiPairsRow> rows, String engineSeries, String machine) {
    ObjectMapper m = new ObjectMapper();
    ArrayNode a = m.createArrayNode();
    for (XgmiPairsRow r : rows) {
      ObjectNode o = a.addObject();
      o.put("machine", machine).put("series", r.series).put("pattern", r.pattern.label()).put("engines", r.engines).put("devices", r.devices).put("mode", r.mode)
          .put("shape", r.shape.label()).put("block_size", r.shape.blockBytes()).put("blocks", r.shape.blocks())
          .put("bytes_per_engine", r.shape.bytes()).put("bytes_per_iter", r.shape.bytes() * r.engines).put("iters", r.iters)
          .put("p50_us", r.p50Us).put("p99_us", r.p99Us).put("min_us", r.minUs).put("avg_us", r.avgUs)
          .put("aggregate_avg_gbps", r.aggregateGBps).put("aggregate_p50_gbps", r.aggregateP50GBps)
          .put("engine_min_gbps", r.engineMinGBps).put("engine_max_gbps", r.engineMaxGBps).put("note", r.note);
      if (!r.series.equals(engineSeries)) continue;
      rows.stream().filter(b -> !b.series.equals(engineSeries) && b.pattern == r.pattern && b.shape.equals(r.shape)).findFirst()
          .ifPresent(b -> o.put("ratio_to_raw_avg", r.aggregateGBps / b.aggregateGBps));
    }
    try {
      return m.writerWithDefaultPrettyPrinter().writeValueAsString(a) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
