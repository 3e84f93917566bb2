package org.mori4j.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.mori4j.bench.baseline.Baselines;
import org.mori4j.bench.baseline.IperfBaseline;
import org.mori4j.bench.baseline.UcxPerftestBaseline;

/**
 * The ratios issue 2's acceptance asks about, computed from the rows of one run so nobody has to divide by
 * hand: for bandwidth-bound rows (1 MiB and up, batch 1) mori4j's average bandwidth as a share of the NIO
 * stream of the same point, of iperf3 and of UCX's tag_bw; for the 4 KiB batch-1 row the p50 latency as a
 * multiple of the NIO ping-pong's p50 and of UCX tag_lat's round trip; for a row of several transfers per
 * iteration, its bandwidth as a share of the NIO stream of the same messages. A baseline that is missing is named
 * as missing, never replaced by a number. The ratios are values ({@link Ratio}) computed once by {@link #ratios};
 * a single run's lines ({@link #render}) and the median over paired rounds ({@link PairedRatios}) are both drawn
 * from them.
 */
public final class Comparison {
  static final long BANDWIDTH_FROM = 1 << 20;
  static final long LATENCY_SIZE = 4096;
  /** What the share of a GPU row is taken against: the CPU<->CPU row of the same point ({@link #gpuRatios}). */
  static final String CPU_ROWS = "cpu<->cpu";

  private Comparison() {}

  /** The figure a ratio compares, and which way is better. */
  enum Measure {
    AVG_BW("avgBwGBps", true), P50_LATENCY("p50LatUs", false);

    /** The key of the figure in the rows' JSON. */
    final String key;
    final boolean higherIsBetter;

    Measure(String key, boolean higherIsBetter) {
      this.key = key;
      this.higherIsBetter = higherIsBetter;
    }

    double of(ResultRow r) {
      return this == AVG_BW ? r.avgBwGBps() : r.p50LatUs();
    }
  }

  /**
   * One ratio of one run: mori4j's {@code row} against a reference figure.
   *
   * @param scope   what the row is, printed before it ("" for a CPU run; "gpu ", "cpu<->cpu " in runs with GPU memory)
   * @param row     mori4j's row
   * @param series  the reference's series: a baseline's display name, or {@link #CPU_ROWS}
   * @param name    the reference as the lines name it ("nio-stream", "ucx tag_lat round-trip", ...)
   * @param measure which figure of both is compared
   * @param base    the reference's figure; NaN when it was not measured
   */
  record Ratio(String scope, ResultRow row, String series, String name, Measure measure, double base) {
    boolean measured() {
      return base > 0 && Double.isFinite(base);
    }

    /** mori4j's figure over the reference's (NaN when not measured). */
    double value() {
      return measured() ? mine() / base : Double.NaN;
    }

    double mine() {
      return measure.of(row);
    }

    /** At or above the reference's bandwidth, or at or below its latency. */
    boolean atOrBetter() {
      return measured() && (measure.higherIsBetter ? value() >= 1 : value() <= 1);
    }

    /** The point: "64 MiB x 1". */
    String point() {
      return HumanSize.format(row.msgSize()) + " x " + row.batchSize();
    }

    /** Same point, same reference, same figure: the ratio another round's run pairs with this one. */
    String key() {
      return scope + point() + " " + measure.key + " vs " + series;
    }

    Ratio in(String newScope) {
      return new Ratio(newScope, row, series, name, measure, base);
    }

    /** The ratio as a share ("97%") or a multiple ("0.99x"), the way a line of this measure prints it. */
    String format(double v) {
      return measure.higherIsBetter ? String.format(Locale.ROOT, "%.0f%%", 100 * v) : String.format(Locale.ROOT, "%.2fx", v);
    }

    /** The figure with its unit: "4.41 GB/s" or "11.30 us". */
    String figure(double v) {
      return String.format(Locale.ROOT, measure.higherIsBetter ? "%.2f GB/s" : "%.2f us", v);
    }
  }

  /** Lines to print under the baselines table; empty when no row qualifies. */
  public static List<String> lines(List<ResultRow> rows, List<BaselineRow> baselines) {
    return render(ratios(rows, baselines));
  }

  /** The ratios of {@code rows} against {@code baselines}, in the order of the rows (scope ""). */
  static List<Ratio> ratios(List<ResultRow> rows, List<BaselineRow> baselines) {
    List<Ratio> out = new ArrayList<>();
    for (ResultRow r : rows) {
      if (r.batchSize() > 1) {
        // a burst of separate transfers (MORI's default row) against the NIO stream of the same messages
        out.add(bw(r, baselines, Baselines.NIO_STREAM, "nio-stream", r.msgSize(), r.batchSize()));
      } else if (r.batchSize() == 1 && r.msgSize() >= BANDWIDTH_FROM) {
        out.add(bw(r, baselines, Baselines.NIO_STREAM, "nio-stream", r.msgSize(), 1));
        out.add(bw(r, baselines, IperfBaseline.SERIES, "iperf3", -1, -1));
        if (r.msgSize() == UcxPerftestBaseline.BW_SIZE) out.add(bw(r, baselines, UcxPerftestBaseline.BW_SERIES, "ucx tag_bw", -1, -1));
      } else if (r.batchSize() == 1 && r.msgSize() == LATENCY_SIZE) {
        out.add(lat(r, baselines, Baselines.NIO_PINGPONG, "nio-pingpong"));
        out.add(lat(r, baselines, UcxPerftestBaseline.LAT_SERIES, "ucx tag_lat round-trip"));
      }
    }
    return out;
  }

  /** Each GPU row of 1 MiB and more as a share of the CPU<->CPU row of the same point ({@code cpuRows}; null: not measured). */
  static List<Ratio> gpuRatios(List<ResultRow> gpuRows, List<ResultRow> cpuRows) {
    List<Ratio> out = new ArrayList<>();
    for (ResultRow r : gpuRows) {
      if (r.msgSize() < BANDWIDTH_FROM) continue;
      double cpu = cpuRows == null ? Double.NaN : cpuRows.stream().filter(x -> x.msgSize() == r.msgSize() && x.batchSize() == r.batchSize())
          .mapToDouble(ResultRow::avgBwGBps).findFirst().orElse(Double.NaN);
      out.add(new Ratio("gpu ", r, CPU_ROWS, CPU_ROWS, Measure.AVG_BW, cpu));
    }
    return out;
  }

  /**
   * One line per row of {@code ratios} (consecutive ratios of the same row and scope share a line): the row's figure,
   * then each reference's ratio, or that it was not measured.
   */
  static List<String> render(List<Ratio> ratios) {
    List<String> out = new ArrayList<>();
    int i = 0;
    while (i < ratios.size()) {
      Ratio first = ratios.get(i);
      boolean bw = first.measure() == Measure.AVG_BW;
      StringBuilder sb = new StringBuilder(first.scope()).append(first.point())
          .append(bw ? String.format(Locale.ROOT, ": avg BW %.2f GB/s = ", first.mine()) : String.format(Locale.ROOT, ": p50 %.2f us = ", first.mine()));
      int j = i;
      for (; j < ratios.size() && sameLine(first, ratios.get(j)); j++) {
        Ratio r = ratios.get(j);
        if (j > i) sb.append(bw ? ", " : "; ");
        if (!r.measured()) sb.append(r.name()).append(" not measured");
        else if (bw) sb.append(String.format(Locale.ROOT, "%.0f%% of %s (%.2f)", 100 * r.value(), r.name(), r.base()));
        else sb.append(String.format(Locale.ROOT, "%.2fx %s p50 (%.2f us)", r.value(), r.name(), r.base()));
      }
      out.add(sb.toString());
      i = j;
    }
    return out;
  }

  private static boolean sameLine(Ratio a, Ratio b) {
    return a.row() == b.row() && a.scope().equals(b.scope()) && a.measure() == b.measure();
  }

  /**
   * Issue 3's ratios for runs with GPU memory: for each row of 1 MiB and more, its average bandwidth as a
   * share of the CPU<->CPU row of the same point ({@code cpuRows}, null without {@code --compare-cpu}) and the
   * raw host<->device copy bandwidths of {@code h2dSeries}/{@code d2hSeries} beside it (null series: no GPU
   * on this side to measure them). Missing figures are named as missing.
   */
  public static List<String> gpuLines(List<ResultRow> gpuRows, List<ResultRow> cpuRows, List<BaselineRow> baselines, String h2dSeries,
                                      String d2hSeries) {
    List<String> out = new ArrayList<>();
    String raw;
    if (h2dSeries == null) {
      raw = "raw copies not measured (no GPU on this side)";
    } else {
      raw = "raw " + bwFigure("H2D", find(baselines, h2dSeries, -1, -1)) + ", " + bwFigure("D2H", find(baselines, d2hSeries, -1, -1));
    }
    for (Ratio r : gpuRatios(gpuRows, cpuRows)) {
      String cpu = r.measured() ? String.format(Locale.ROOT, "%.0f%% of cpu<->cpu (%.2f GB/s)", 100 * r.value(), r.base())
          : cpuRows == null ? "cpu<->cpu not measured (--compare-cpu)" : "cpu<->cpu not measured";
      out.add(String.format(Locale.ROOT, "%s: gpu avg BW %.2f GB/s = %s; %s", r.point(), r.mine(), cpu, raw));
    }
    return out;
  }

  private static String bwFigure(String what, Optional<ResultRow> row) {
    return row.map(b -> String.format(Locale.ROOT, "%s %.2f GB/s", what, b.avgBwGBps())).orElse(what + " not measured");
  }

  private static Ratio bw(ResultRow r, List<BaselineRow> baselines, String series, String name, long msg, int batch) {
    return new Ratio("", r, series, name, Measure.AVG_BW, find(baselines, series, msg, batch).map(ResultRow::avgBwGBps).orElse(Double.NaN));
  }

  private static Ratio lat(ResultRow r, List<BaselineRow> baselines, String series, String name) {
    return new Ratio("", r, series, name, Measure.P50_LATENCY, find(baselines, series, -1, -1).map(ResultRow::p50LatUs).orElse(Double.NaN));
  }

  /** The measured baseline row of {@code series}; with {@code msg > 0}, the one of that point. */
  private static Optional<ResultRow> find(List<BaselineRow> baselines, String series, long msg, int batch) {
    return baselines.stream().filter(b -> b.series().equals(series) && b.row() != null)
        .map(BaselineRow::row).filter(r -> msg <= 0 || (r.msgSize() == msg && r.batchSize() == batch)).findFirst();
  }
}
