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
 * multiple of the NIO ping-pong's p50, with UCX's round trip beside it; for a row of several transfers per
 * iteration, its bandwidth as a share of the NIO stream of the same messages. A baseline that is missing is named
 * as missing, never replaced by a number.
 */
public final class Comparison {
  static final long BANDWIDTH_FROM = 1 << 20;
  static final long LATENCY_SIZE = 4096;

  private Comparison() {}

  /** Lines to print under the baselines table; empty when no row qualifies. */
  public static List<String> lines(List<ResultRow> rows, List<BaselineRow> baselines) {
    List<String> out = new ArrayList<>();
    for (ResultRow r : rows) {
      if (r.batchSize() > 1) {
        // a burst of separate transfers (MORI's default row) against the NIO stream of the same messages
        out.add(String.format(Locale.ROOT, "%s x %d: avg BW %.2f GB/s = %s", HumanSize.format(r.msgSize()), r.batchSize(),
            r.avgBwGBps(), share(r.avgBwGBps(), find(baselines, Baselines.NIO_STREAM, r.msgSize(), r.batchSize()), "nio-stream")));
        continue;
      }
      if (r.batchSize() != 1) continue;
      if (r.msgSize() >= BANDWIDTH_FROM) {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%s x 1: avg BW %.2f GB/s = ",
            HumanSize.format(r.msgSize()), r.avgBwGBps()));
        sb.append(share(r.avgBwGBps(), find(baselines, Baselines.NIO_STREAM, r.msgSize(), 1), "nio-stream"));
        sb.append(", ").append(share(r.avgBwGBps(), find(baselines, IperfBaseline.SERIES, -1, -1), "iperf3"));
        if (r.msgSize() == UcxPerftestBaseline.BW_SIZE)
          sb.append(", ").append(share(r.avgBwGBps(), find(baselines, UcxPerftestBaseline.BW_SERIES, -1, -1), "ucx tag_bw"));
        out.add(sb.toString());
      } else if (r.msgSize() == LATENCY_SIZE) {
        Optional<ResultRow> ping = find(baselines, Baselines.NIO_PINGPONG, -1, -1);
        Optional<ResultRow> ucx = find(baselines, UcxPerftestBaseline.LAT_SERIES, -1, -1);
        String p = ping.map(b -> String.format(Locale.ROOT, "%.2fx nio-pingpong p50 (%.2f us)", r.p50LatUs() / b.p50LatUs(),
            b.p50LatUs())).orElse("nio-pingpong not measured");
        String u = ucx.map(b -> String.format(Locale.ROOT, "ucx tag_lat p50 round trip %.2f us", b.p50LatUs()))
            .orElse("ucx tag_lat not measured");
        out.add(String.format(Locale.ROOT, "4 KiB x 1: p50 %.2f us = %s; %s", r.p50LatUs(), p, u));
      }
    }
    return out;
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
      raw = "raw " + bw("H2D", find(baselines, h2dSeries, -1, -1)) + ", " + bw("D2H", find(baselines, d2hSeries, -1, -1));
    }
    for (ResultRow r : gpuRows) {
      if (r.msgSize() < BANDWIDTH_FROM) continue;
      String cpu;
      if (cpuRows == null) {
        cpu = "cpu<->cpu not measured (--compare-cpu)";
      } else {
        Optional<ResultRow> c = cpuRows.stream().filter(x -> x.msgSize() == r.msgSize() && x.batchSize() == r.batchSize()).findFirst();
        cpu = c.filter(x -> x.avgBwGBps() > 0).map(x -> String.format(Locale.ROOT, "%.0f%% of cpu<->cpu (%.2f GB/s)",
            100 * r.avgBwGBps() / x.avgBwGBps(), x.avgBwGBps())).orElse("cpu<->cpu not measured");
      }
      out.add(String.format(Locale.ROOT, "%s x %d: gpu avg BW %.2f GB/s = %s; %s", HumanSize.format(r.msgSize()), r.batchSize(),
          r.avgBwGBps(), cpu, raw));
    }
    return out;
  }

  private static String bw(String what, Optional<ResultRow> row) {
    return row.map(b -> String.format(Locale.ROOT, "%s %.2f GB/s", what, b.avgBwGBps())).orElse(what + " not measured");
  }

  private static String share(double mine, Optional<ResultRow> base, String name) {
    if (base.isEmpty() || !(base.get().avgBwGBps() > 0)) return name + " not measured";
    return String.format(Locale.ROOT, "%.0f%% of %s (%.2f)", 100 * mine / base.get().avgBwGBps(), name, base.get().avgBwGBps());
  }

  /** The measured baseline row of {@code series}; with {@code msg > 0}, the one of that point. */
  private static Optional<ResultRow> find(List<BaselineRow> baselines, String series, long msg, int batch) {
    return baselines.stream().filter(b -> b.series().equals(series) && b.row() != null)
        .map(BaselineRow::row).filter(r -> msg <= 0 || (r.msgSize() == msg && r.batchSize() == batch)).findFirst();
  }
}
