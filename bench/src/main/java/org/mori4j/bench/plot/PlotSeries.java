package org.mori4j.bench.plot;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import org.mori4j.bench.BaselineRow;
import org.mori4j.bench.ResultRow;

/**
 * One line of a plot: a name, whether it is a measured row kind of mori4j or a baseline of the same run, its
 * points and a note (how a baseline was measured, or why it was not: a series without points is drawn in the
 * legend only, with that note). Built directly by any benchmark that has its own rows (the KV-cache bench, for
 * instance), or from the bench's {@link ResultRow}s and {@link BaselineRow}s by {@link #measured} and
 * {@link #baselines}.
 *
 * @param name   the legend's text; unique within a plot
 * @param kind   measured (drawn bold, filled markers) or baseline (thin, hollow markers)
 * @param points the points, in the order they were measured
 * @param note   free text for the legend's tooltip; never null
 */
public record PlotSeries(String name, Kind kind, List<PlotPoint> points, String note) {
  /** Measured rows of mori4j, or a reference measured beside them. */
  public enum Kind { MEASURED, BASELINE }

  public PlotSeries {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(kind, "kind");
    points = List.copyOf(points);
    note = note == null ? "" : note;
  }

  /**
   * mori4j's rows as one series per batch size: one series named {@code name} when all rows share a batch size
   * (a size sweep), else {@code name x N} for each batch size N (an {@code --all-batch} sweep).
   */
  public static List<PlotSeries> measured(String name, List<ResultRow> rows) {
    TreeSet<Integer> batches = new TreeSet<>();
    for (ResultRow r : rows) batches.add(r.batchSize());
    if (batches.size() <= 1) return List.of(new PlotSeries(name, Kind.MEASURED, rows.stream().map(PlotPoint::of).toList(), ""));
    List<PlotSeries> out = new ArrayList<>();
    for (int b : batches) {
      out.add(new PlotSeries(name + " x " + b, Kind.MEASURED,
          rows.stream().filter(r -> r.batchSize() == b).map(PlotPoint::of).toList(), "batch " + b));
    }
    return out;
  }

  /** Baselines grouped by their series name, in the order each name first appears; an unmeasured one has no points. */
  public static List<PlotSeries> baselines(List<BaselineRow> rows) {
    Map<String, List<PlotPoint>> points = new LinkedHashMap<>();
    Map<String, String> notes = new LinkedHashMap<>();
    for (BaselineRow b : rows) {
      List<PlotPoint> p = points.computeIfAbsent(b.series(), k -> new ArrayList<>());
      if (b.row() != null) p.add(PlotPoint.of(b.row()));
      notes.putIfAbsent(b.series(), b.row() == null ? "not measured: " + b.note() : b.note());
    }
    List<PlotSeries> out = new ArrayList<>();
    for (var e : points.entrySet()) out.add(new PlotSeries(e.getKey(), Kind.BASELINE, e.getValue(), notes.get(e.getKey())));
    return out;
  }

  /** True when nothing of this series can be drawn in either panel: the legend says why. */
  public boolean empty() {
    return points.stream().noneMatch(p -> p.hasBandwidth() || p.hasLatency());
  }
}
