package org.mori4j.bench.kv;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.List;
import java.util.Locale;
import org.mori4j.bench.JsonRows;

/**
 * One row of a multi-pair kv-bench run: one request length and mode migrated by every pair at once. An
 * iteration's time is its slowest pair's (common release to that pair's end), so {@code p50LatUs}/{@code p99LatUs}
 * are percentiles of the slowest pair per iteration and {@code avgBwGBps} is the aggregate (every pair's bytes over
 * the slowest pair's time, averaged over the iterations). Beside it, from the same run: every pair's engine moving
 * the same bytes as one contiguous transfer, all at once ({@code engineContiguous}), and over XGMI the driver's own
 * contiguous copies of every pair run together ({@code rawCopy}, null over TCP); {@code contiguousAvgBwGBps} in the
 * JSON is the latter over XGMI and the former over TCP. Stream rows add the exposed time (last {@code sendLayers}
 * to the receiver hearing all layers), slowest pair per iteration, beside one layer through every pair at once
 * ({@code layerSlowest}: layer 0 of a fresh stream sent at the release to its receiver hearing it); their times and GB/s include the simulated
 * prefill, so no share of the contiguous reference is given for them. {@code perPair} breaks it down by pair.
 */
record KvPairsRow(String model, int tokens, String mode, String backend, String where, KvPairs pairs, long bytesPerPair, int blocks,
                  KvBenchRuns.Stats slowest, KvBenchRuns.Stats engineContiguous, KvBenchRuns.Stats rawCopy, String rawSeries,
                  KvBenchRuns.Stats exposedSlowest, KvBenchRuns.Stats layerSlowest, double layerComputeUs, int verifiedSlots, List<PerPair> perPair) {

  /** One pair's share of a row: its own times from the common release, its transfers after coalescing. */
  record PerPair(KvPairs.Pair pair, int transfers, KvBenchRuns.Stats run, KvBenchRuns.Stats contiguous, KvBenchRuns.Stats exposed,
                 KvBenchRuns.Stats layer) {}

  long bytes() {
    return bytesPerPair * pairs.size();
  }

  int transfers() {
    return perPair.stream().mapToInt(PerPair::transfers).sum();
  }

  /** The contiguous reference of the row: the driver's copies over XGMI, the engine's own transfers over TCP. */
  KvBenchRuns.Stats reference() {
    return rawCopy != null ? rawCopy : engineContiguous;
  }

  String note() {
    String n = pairs.sharesDevice()
        ? "a GPU carries two engines of one side or a pair stays within one GPU: copies share a device's memory bandwidth; says nothing about NVLink/XGMI between GPUs"
        : pairs.xgmi() ? "every pair between two distinct GPUs" : "CPU memory over TCP on loopback";
    return n + "; " + where;
  }

  /** " (NN%)": the row's aggregate as a share of {@code reference}'s; nothing for a stream row (its time includes the prefill's). */
  private String percent(KvBenchRuns.Stats reference) {
    return exposedSlowest != null ? "" : String.format(Locale.ROOT, " (%3.0f%%)", 100 * slowest.avgBwGBps() / reference.avgBwGBps());
  }

  String line() {
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
        "%-11s %6d tok %6s  %d pairs x %8.1f MiB  slowest pair p50 %9.0f us  p99 %9.0f us  aggregate %7.2f GB/s  engine contiguous %7.2f GB/s%s",
        model, tokens, mode, pairs.size(), bytesPerPair / 1048576.0, slowest.p50Nanos() / 1e3, slowest.p99Nanos() / 1e3, slowest.avgBwGBps(),
        engineContiguous.avgBwGBps(), percent(engineContiguous)));
    if (rawCopy != null) b.append(String.format(Locale.ROOT, "  %s %7.2f GB/s%s", rawSeries, rawCopy.avgBwGBps(), percent(rawCopy)));
    if (exposedSlowest != null) b.append("  (stream: times include the simulated prefill; its figure is the exposed time)");
    if (exposedSlowest != null)
      b.append(String.format(Locale.ROOT, "%n    stream: exposed (slowest pair) p50 %.0f us p99 %.0f us; one layer through every pair at once (slowest pair)"
              + " p50 %.0f us: exposed - layer = %.0f us (issue 14's target <= 50: %s); prefill %.0f us/layer", exposedSlowest.p50Nanos() / 1e3,
          exposedSlowest.p99Nanos() / 1e3, layerSlowest.p50Nanos() / 1e3, overLayerUs(), overLayerUs() <= 50 ? "met" : "NOT met", layerComputeUs));
    b.append(verifiedSlots > 0 ? "  bytes checked (" + verifiedSlots + " slots, every pair)" : "  bytes not checked");
    for (PerPair p : perPair) {
      b.append(String.format(Locale.ROOT, "%n    pair %d %-28s %6d transfers  p50 %9.0f us  p99 %9.0f us  %7.2f GB/s  contiguous %7.2f GB/s",
          p.pair.index(), p.pair.route(), p.transfers, p.run.p50Nanos() / 1e3, p.run.p99Nanos() / 1e3, p.run.avgBwGBps(), p.contiguous.avgBwGBps()));
      if (p.exposed != null)
        b.append(String.format(Locale.ROOT, "  exposed p50 %.0f us, one layer p50 %.0f us", p.exposed.p50Nanos() / 1e3, p.layer.p50Nanos() / 1e3));
    }
    return b.toString();
  }

  /** Exposed p50 minus one layer's p50 (slowest pair each), us; NaN for push and pull rows. */
  double overLayerUs() {
    return exposedSlowest == null ? Double.NaN : (exposedSlowest.p50Nanos() - layerSlowest.p50Nanos()) / 1e3;
  }

  static String table(List<KvPairsRow> rows) {
    StringBuilder b = new StringBuilder("| model | tokens | mode | pairs | MiB per pair | transfers (all pairs) | slowest pair p50 us | p99 us | aggregate GB/s "
        + "| engine contiguous GB/s | raw copies GB/s | % of reference | exposed p50/p99 us | one layer p50 us | checked slots |\n"
        + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (KvPairsRow r : rows) {
      b.append(String.format(Locale.ROOT, "| %s | %d | %s | %d | %.1f | %d | %.0f | %.0f | %.2f | %.2f | %s | %s | %s | %s | %d |%n", r.model, r.tokens,
          r.mode, r.pairs.size(), r.bytesPerPair / 1048576.0, r.transfers(), r.slowest.p50Nanos() / 1e3, r.slowest.p99Nanos() / 1e3,
          r.slowest.avgBwGBps(), r.engineContiguous.avgBwGBps(), r.rawCopy == null ? "-" : String.format(Locale.ROOT, "%.2f", r.rawCopy.avgBwGBps()),
          r.exposedSlowest != null ? "-" : String.format(Locale.ROOT, "%.0f%%", 100 * r.slowest.avgBwGBps() / r.reference().avgBwGBps()),
          r.exposedSlowest == null ? "-" : String.format(Locale.ROOT, "%.0f / %.0f", r.exposedSlowest.p50Nanos() / 1e3, r.exposedSlowest.p99Nanos() / 1e3),
          r.layerSlowest == null ? "-" : String.format(Locale.ROOT, "%.0f", r.layerSlowest.p50Nanos() / 1e3), r.verifiedSlots));
    }
    return b.toString();
  }

  /** The rows as JSON through {@link JsonRows}, figures as {@link KvBenchRow#num} writes them. */
  static String json(List<KvPairsRow> rows) {
    List<ObjectNode> out = new java.util.ArrayList<>(rows.size());
    for (KvPairsRow r : rows) {
      ObjectNode o = JsonRows.object();
      o.put("model", r.model);
      o.put("tokens", r.tokens);
      o.put("bytes", r.bytes());
      o.put("bytesPerPair", r.bytesPerPair);
      o.put("blocks", r.blocks);
      o.put("transfers", r.transfers());
      o.put("mode", r.mode);
      o.put("backend", r.backend);
      o.put("pairs", r.pairs.size());
      o.put("sharedDevice", r.pairs.sharesDevice());
      o.put("note", r.note());
      o.put("avgBwGBps", num(r.slowest.avgBwGBps()));
      o.put("p50LatUs", us(r.slowest.p50Nanos()));
      o.put("p99LatUs", us(r.slowest.p99Nanos()));
      o.put("contiguousAvgBwGBps", num(r.reference().avgBwGBps()));
      o.put("engineContiguousAvgBwGBps", num(r.engineContiguous.avgBwGBps()));
      o.put("engineContiguousP50LatUs", us(r.engineContiguous.p50Nanos()));
      o.put("rawCopyAvgBwGBps", r.rawCopy == null ? null : num(r.rawCopy.avgBwGBps()));
      o.put("rawCopyP50LatUs", r.rawCopy == null ? null : us(r.rawCopy.p50Nanos()));
      o.put("rawCopySeries", r.rawCopy == null ? null : r.rawSeries);
      o.put("exposedP50Us", r.exposedSlowest == null ? null : us(r.exposedSlowest.p50Nanos()));
      o.put("exposedP99Us", r.exposedSlowest == null ? null : us(r.exposedSlowest.p99Nanos()));
      o.put("layerP50Us", r.layerSlowest == null ? null : us(r.layerSlowest.p50Nanos()));
      o.put("exposedOverLayerUs", num(r.overLayerUs()));
      o.put("layerComputeUs", num(r.layerComputeUs));
      o.put("verifiedSlots", r.verifiedSlots);
      var perPair = o.putArray("perPair");
      for (PerPair p : r.perPair) {
        ObjectNode q = perPair.addObject();
        q.put("pair", p.pair.index());
        q.put("prefillDevice", p.pair.prefill());
        q.put("decodeDevice", p.pair.decode());
        q.put("route", p.pair.route());
        q.put("transfers", p.transfers);
        q.put("avgBwGBps", num(p.run.avgBwGBps()));
        q.put("p50LatUs", us(p.run.p50Nanos()));
        q.put("p99LatUs", us(p.run.p99Nanos()));
        q.put("contiguousAvgBwGBps", num(p.contiguous.avgBwGBps()));
        q.put("exposedP50Us", p.exposed == null ? null : us(p.exposed.p50Nanos()));
        q.put("layerP50Us", p.layer == null ? null : us(p.layer.p50Nanos()));
      }
      out.add(o);
    }
    return JsonRows.objectsToJson(out);
  }

  private static BigDecimal us(long nanos) {
    return num(nanos / 1e3);
  }

  private static BigDecimal num(double v) {
    return KvBenchRow.num(v);
  }
}
