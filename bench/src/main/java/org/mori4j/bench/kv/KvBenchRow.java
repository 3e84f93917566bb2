package org.mori4j.bench.kv;

import java.util.List;
import java.util.Locale;

/** One kv-bench row: the migration beside the contiguous transfer of the same bytes and the per-block loop. */
record KvBenchRow(String model, int tokens, long bytes, int blocks, int transfers, int blockSlots, String mode, String backend,
                  double avgBwGBps, double p50LatUs, double p99LatUs, double contiguousAvgBwGBps, double naiveAvgBwGBps,
                  double single64MiBAvgBwGBps, double exposedP50Us, double exposedP99Us, double layerP50Us, double layerComputeUs) {

  static KvBenchRow of(String model, int tokens, long bytes, int blocks, int transfers, int slots, String mode, KvBenchRuns.Stats s,
                       KvBenchRuns.Stats contig, KvBenchRuns.Stats naive, double single64) {
    return new KvBenchRow(model, tokens, bytes, blocks, transfers, slots, mode, "tcp", s.avgBwGBps(), s.p50Nanos() / 1e3, s.p99Nanos() / 1e3,
        contig.avgBwGBps(), naive == null ? Double.NaN : naive.avgBwGBps(), single64, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
  }

  static KvBenchRow stream(String model, int tokens, long bytes, int blocks, int transfers, int slots, KvBenchRuns.StreamStats s,
                           KvBenchRuns.Stats contig, KvBenchRuns.Stats naive, double single64, long computeNanos) {
    // time and bandwidth of a streamed request: first layer's compute start to all layers landed (compute included)
    return new KvBenchRow(model, tokens, bytes, blocks, transfers, slots, "stream", "tcp", s.total().avgBwGBps(), s.total().p50Nanos() / 1e3,
        s.total().p99Nanos() / 1e3, contig.avgBwGBps(), naive == null ? Double.NaN : naive.avgBwGBps(), single64,
        s.exposed().p50Nanos() / 1e3, s.exposed().p99Nanos() / 1e3, s.layer().p50Nanos() / 1e3, computeNanos / 1e3);
  }

  String line() {
    String base = String.format(Locale.ROOT, "%-11s %6d tok %5s  %8.1f MiB  %5d blocks  %6d transfers (of %6d)  p50 %9.0f us  p99 %9.0f us  %6.2f GB/s"
            + "  contiguous %6.2f GB/s (%3.0f%%)  per-block %6.2f GB/s  64MiB %6.2f GB/s (%3.0f%%)",
        model, tokens, mode, bytes / 1048576.0, blocks, transfers, blockSlots, p50LatUs, p99LatUs, avgBwGBps, contiguousAvgBwGBps,
        100 * avgBwGBps / contiguousAvgBwGBps, naiveAvgBwGBps, single64MiBAvgBwGBps, 100 * avgBwGBps / single64MiBAvgBwGBps);
    if (mode.equals("stream"))
      base += String.format(Locale.ROOT, "%n    stream: exposed p50 %.0f us p99 %.0f us, one layer's transfer p50 %.0f us (exposed - layer = %.0f us), compute/layer %.0f us",
          exposedP50Us, exposedP99Us, layerP50Us, exposedP50Us - layerP50Us, layerComputeUs);
    return base;
  }

  static String table(List<KvBenchRow> rows) {
    StringBuilder b = new StringBuilder("| model | tokens | mode | MiB | blocks | transfers (per-block) | p50 us | p99 us | GB/s | contiguous GB/s | % of contiguous | per-block GB/s | 64 MiB GB/s | % of 64 MiB | exposed p50/p99 us | layer p50 us |\n"
        + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (KvBenchRow r : rows)
      b.append(String.format(Locale.ROOT, "| %s | %d | %s | %.1f | %d | %d (%d) | %.0f | %.0f | %.2f | %.2f | %.0f%% | %.2f | %.2f | %.0f%% | %s | %s |%n",
          r.model, r.tokens, r.mode, r.bytes / 1048576.0, r.blocks, r.transfers, r.blockSlots, r.p50LatUs, r.p99LatUs, r.avgBwGBps,
          r.contiguousAvgBwGBps, 100 * r.avgBwGBps / r.contiguousAvgBwGBps, r.naiveAvgBwGBps, r.single64MiBAvgBwGBps,
          100 * r.avgBwGBps / r.single64MiBAvgBwGBps, r.mode.equals("stream") ? String.format(Locale.ROOT, "%.0f / %.0f", r.exposedP50Us, r.exposedP99Us) : "-",
          r.mode.equals("stream") ? String.format(Locale.ROOT, "%.0f", r.layerP50Us) : "-"));
    return b.toString();
  }

  static String json(List<KvBenchRow> rows) {
    StringBuilder b = new StringBuilder("[\n");
    for (int i = 0; i < rows.size(); i++) {
      KvBenchRow r = rows.get(i);
      b.append(String.format(Locale.ROOT, "  {\"model\": \"%s\", \"tokens\": %d, \"bytes\": %d, \"blocks\": %d, \"transfers\": %d, \"blockSlots\": %d, "
              + "\"mode\": \"%s\", \"backend\": \"%s\", \"avgBwGBps\": %s, \"p50LatUs\": %s, \"p99LatUs\": %s, \"contiguousAvgBwGBps\": %s, "
              + "\"naiveAvgBwGBps\": %s, \"single64MiBAvgBwGBps\": %s, \"exposedP50Us\": %s, \"exposedP99Us\": %s, \"layerP50Us\": %s, \"layerComputeUs\": %s}%s%n",
          r.model, r.tokens, r.bytes, r.blocks, r.transfers, r.blockSlots, r.mode, r.backend, num(r.avgBwGBps), num(r.p50LatUs), num(r.p99LatUs),
          num(r.contiguousAvgBwGBps), num(r.naiveAvgBwGBps), num(r.single64MiBAvgBwGBps), num(r.exposedP50Us), num(r.exposedP99Us),
          num(r.layerP50Us), num(r.layerComputeUs), i + 1 < rows.size() ? "," : ""));
    }
    return b.append("]\n").toString();
  }

  private static String num(double v) {
    return Double.isNaN(v) ? "null" : String.format(Locale.ROOT, "%.3f", v);
  }
}
