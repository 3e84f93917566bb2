package org.mori4j.bench.kv;

import java.util.List;
import java.util.Locale;

/**
 * One kv-bench row: the migration beside, from the same iterations, the same bytes as one contiguous transfer and
 * the engine's single 64 MiB write, and the per-block loop; a stream row adds the exposed time beside one layer's
 * transfer on an idle link and the prefill time per layer that paced it; {@code verifiedSlots} is how many
 * (layer, tensor, block) slots the byte check compared (0: not checked); on XGMI {@code rawCopyAvgBwGBps} is the
 * driver's own peer copy of the largest request's bytes between the same two GPUs in the same run.
 */
record KvBenchRow(String model, int tokens, long bytes, int blocks, int transfers, int blockSlots, String mode, String backend,
                  double avgBwGBps, double p50LatUs, double p99LatUs, double contiguousAvgBwGBps, double naiveAvgBwGBps,
                  double single64MiBAvgBwGBps, double exposedP50Us, double exposedP99Us, double layerP50Us, double layerComputeUs,
                  int verifiedSlots, double registrationUs, double rawCopyAvgBwGBps) {

  static KvBenchRow of(String model, int tokens, long bytes, int blocks, int transfers, int slots, String mode, String backend, KvBenchRuns.Paired p,
                       KvBenchRuns.Stats naive, int verified, double registrationUs) {
    KvBenchRuns.Stats s = p.run();
    return new KvBenchRow(model, tokens, bytes, blocks, transfers, slots, mode, backend, s.avgBwGBps(), s.p50Nanos() / 1e3, s.p99Nanos() / 1e3,
        p.contiguous().avgBwGBps(), naive == null ? Double.NaN : naive.avgBwGBps(), p.single64().avgBwGBps(), Double.NaN, Double.NaN,
        Double.NaN, Double.NaN, verified, registrationUs, Double.NaN);
  }

  KvBenchRow withRawCopy(double gbps) {
    return new KvBenchRow(model, tokens, bytes, blocks, transfers, blockSlots, mode, backend, avgBwGBps, p50LatUs, p99LatUs, contiguousAvgBwGBps,
        naiveAvgBwGBps, single64MiBAvgBwGBps, exposedP50Us, exposedP99Us, layerP50Us, layerComputeUs, verifiedSlots, registrationUs, gbps);
  }

  static KvBenchRow stream(String model, int tokens, long bytes, int blocks, int transfers, int slots, String backend, KvBenchRuns.StreamStats s,
                           KvBenchRuns.Stats layer, KvBenchRuns.Stats contig, KvBenchRuns.Stats naive, int verified, double registrationUs) {
    // time and bandwidth of a streamed request: first layer's compute start to all layers landed (compute included)
    return new KvBenchRow(model, tokens, bytes, blocks, transfers, slots, "stream", backend, s.total().avgBwGBps(), s.total().p50Nanos() / 1e3,
        s.total().p99Nanos() / 1e3, contig.avgBwGBps(), naive == null ? Double.NaN : naive.avgBwGBps(), s.single64().avgBwGBps(),
        s.exposed().p50Nanos() / 1e3, s.exposed().p99Nanos() / 1e3, layer.p50Nanos() / 1e3, s.computeNanos() / 1e3, verified, registrationUs, Double.NaN);
  }

  String line() {
    String base = String.format(Locale.ROOT, "%-11s %6d tok %5s  %8.1f MiB  %5d blocks  %6d transfers (of %6d)  p50 %9.0f us  p99 %9.0f us  %6.2f GB/s"
            + "  contiguous %6.2f GB/s (%3.0f%%)  per-block %6.2f GB/s  64MiB %6.2f GB/s (%3.0f%%)  %s",
        model, tokens, mode, bytes / 1048576.0, blocks, transfers, blockSlots, p50LatUs, p99LatUs, avgBwGBps, contiguousAvgBwGBps,
        100 * avgBwGBps / contiguousAvgBwGBps, naiveAvgBwGBps, single64MiBAvgBwGBps, 100 * avgBwGBps / single64MiBAvgBwGBps,
        verifiedSlots > 0 ? "bytes checked (" + verifiedSlots + " slots)" : "bytes not checked");
    if (!Double.isNaN(rawCopyAvgBwGBps))
      base += String.format(Locale.ROOT, "  raw peer copy %6.2f GB/s (%3.0f%%)", rawCopyAvgBwGBps, 100 * avgBwGBps / rawCopyAvgBwGBps);
    if (mode.equals("stream"))
      base += String.format(Locale.ROOT, "%n    stream: prefill %.0f us per layer; exposed p50 %.0f us p99 %.0f us, one layer's transfer p50 %.0f us"
              + " (exposed - layer = %.0f us)", layerComputeUs, exposedP50Us, exposedP99Us, layerP50Us, exposedP50Us - layerP50Us);
    return base;
  }

  static String table(List<KvBenchRow> rows) {
    StringBuilder b = new StringBuilder("| model | tokens | mode | MiB | blocks | transfers (per-block) | p50 us | p99 us | GB/s | contiguous GB/s | % of contiguous | per-block GB/s | 64 MiB GB/s | % of 64 MiB | exposed p50/p99 us | layer p50 us | prefill us/layer | checked slots |\n"
        + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (KvBenchRow r : rows) {
      boolean st = r.mode.equals("stream");
      b.append(String.format(Locale.ROOT, "| %s | %d | %s | %.1f | %d | %d (%d) | %.0f | %.0f | %.2f | %.2f | %.0f%% | %.2f | %.2f | %.0f%% | %s | %s | %s | %d |%n",
          r.model, r.tokens, r.mode, r.bytes / 1048576.0, r.blocks, r.transfers, r.blockSlots, r.p50LatUs, r.p99LatUs, r.avgBwGBps,
          r.contiguousAvgBwGBps, 100 * r.avgBwGBps / r.contiguousAvgBwGBps, r.naiveAvgBwGBps, r.single64MiBAvgBwGBps,
          100 * r.avgBwGBps / r.single64MiBAvgBwGBps, st ? String.format(Locale.ROOT, "%.0f / %.0f", r.exposedP50Us, r.exposedP99Us) : "-",
          st ? String.format(Locale.ROOT, "%.0f", r.layerP50Us) : "-", st ? String.format(Locale.ROOT, "%.0f", r.layerComputeUs) : "-", r.verifiedSlots));
    }
    return b.toString();
  }

  static String json(List<KvBenchRow> rows) {
    StringBuilder b = new StringBuilder("[\n");
    for (int i = 0; i < rows.size(); i++) {
      KvBenchRow r = rows.get(i);
      b.append(String.format(Locale.ROOT, "  {\"model\": \"%s\", \"tokens\": %d, \"bytes\": %d, \"blocks\": %d, \"transfers\": %d, \"blockSlots\": %d, "
              + "\"mode\": \"%s\", \"backend\": \"%s\", \"avgBwGBps\": %s, \"p50LatUs\": %s, \"p99LatUs\": %s, \"contiguousAvgBwGBps\": %s, "
              + "\"naiveAvgBwGBps\": %s, \"single64MiBAvgBwGBps\": %s, \"exposedP50Us\": %s, \"exposedP99Us\": %s, \"layerP50Us\": %s, \"layerComputeUs\": %s, "
              + "\"verifiedSlots\": %d, \"registrationUs\": %s, \"rawCopyAvgBwGBps\": %s}%s%n",
          r.model, r.tokens, r.bytes, r.blocks, r.transfers, r.blockSlots, r.mode, r.backend, num(r.avgBwGBps), num(r.p50LatUs), num(r.p99LatUs),
          num(r.contiguousAvgBwGBps), num(r.naiveAvgBwGBps), num(r.single64MiBAvgBwGBps), num(r.exposedP50Us), num(r.exposedP99Us),
          num(r.layerP50Us), num(r.layerComputeUs), r.verifiedSlots, num(r.registrationUs), num(r.rawCopyAvgBwGBps), i + 1 < rows.size() ? "," : ""));
    }
    return b.append("]\n").toString();
  }

  private static String num(double v) {
    return Double.isNaN(v) ? "null" : String.format(Locale.ROOT, "%.3f", v);
  }
}
