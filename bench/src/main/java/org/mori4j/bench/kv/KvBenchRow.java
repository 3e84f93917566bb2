package org.mori4j.bench.kv;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Locale;
import org.mori4j.bench.JsonRows;

/**
 * One kv-bench row: the migration beside, from the same iterations, the same bytes as one contiguous transfer and
 * the engine's single 64 MiB write, and the per-block loop; a stream row adds the exposed time beside one layer's
 * transfer on an idle link and the prefill time per layer that paced it; {@code verifiedSlots} is how many
 * (layer, tensor, block) slots the byte check compared (0: not checked); on XGMI {@code rawCopyAvgBwGBps} is the
 * driver's own peer copy of the largest request's bytes between the same two GPUs in the same run; {@code detail}
 * (stream rows only, else null) is where the exposed time went ({@link KvBenchStream}).
 */
record KvBenchRow(String model, int tokens, long bytes, int blocks, int transfers, int blockSlots, String mode, String backend,
                  double avgBwGBps, double p50LatUs, double p99LatUs, double contiguousAvgBwGBps, double naiveAvgBwGBps,
                  double single64MiBAvgBwGBps, double exposedP50Us, double exposedP99Us, double layerP50Us, double layerComputeUs,
                  int verifiedSlots, double registrationUs, double rawCopyAvgBwGBps,
                  StreamDetail detail) {

  /**
   * A stream row's breakdown, p50 over its iterations (us): one layer's transfer through the engine after
   * each stream ({@code rawLayer}, p50 and p99), how the prefill was paced, and the last layer's stages: layers still in
   * flight when it was sent ({@code backlogLayers}) and how long after its {@code sendLayers} they completed
   * ({@code drain}), the {@code sendLayers} call ({@code submit}), its send to the sender's completion
   * ({@code lastDone}), the landing notification's hop to the receiver ({@code notifyHop}; {@code notifyHopAllLayers}:
   * the median of every layer's hop in an iteration).
   */
  record StreamDetail(double rawLayerP50Us, double rawLayerP99Us, String pacing, double backlogLayers, double drainUs, double submitUs,
                      double lastDoneUs, double notifyHopUs, double notifyHopAllLayersUs, java.util.Map<String, Double> stagesP50Us) {}

  static KvBenchRow of(String model, int tokens, long bytes, int blocks, int transfers, int slots, String mode, String backend, KvBenchRuns.Paired p,
                       KvBenchRuns.Stats naive, int verified, double registrationUs) {
    KvBenchRuns.Stats s = p.run();
    return new KvBenchRow(model, tokens, bytes, blocks, transfers, slots, mode, backend, s.avgBwGBps(), s.p50Nanos() / 1e3, s.p99Nanos() / 1e3,
        p.contiguous().avgBwGBps(), naive == null ? Double.NaN : naive.avgBwGBps(), p.single64().avgBwGBps(), Double.NaN, Double.NaN,
        Double.NaN, Double.NaN, verified, registrationUs, Double.NaN, null);
  }

  KvBenchRow withRawCopy(double gbps) {
    return new KvBenchRow(model, tokens, bytes, blocks, transfers, blockSlots, mode, backend, avgBwGBps, p50LatUs, p99LatUs, contiguousAvgBwGBps,
        naiveAvgBwGBps, single64MiBAvgBwGBps, exposedP50Us, exposedP99Us, layerP50Us, layerComputeUs, verifiedSlots, registrationUs, gbps, detail);
  }

  static KvBenchRow stream(String model, int tokens, long bytes, int blocks, int transfers, int slots, String backend, KvBenchStream.Stats s,
                           KvBenchRuns.Stats layer, KvBenchRuns.Stats contig, KvBenchRuns.Stats naive, int verified, double registrationUs) {
    StreamDetail d = new StreamDetail(s.rawLayer().p50Nanos() / 1e3, s.rawLayer().p99Nanos() / 1e3, s.pacing(), p50(s.backlogLayers()),
        p50(s.drainNanos()) / 1e3, p50(s.submitNanos()) / 1e3, p50(s.lastDoneNanos()) / 1e3, p50(s.notifyNanos()) / 1e3,
        p50(s.notifyAllLayersNanos()) / 1e3, stagesP50(s.stages()));
    // time and bandwidth of a streamed request: first layer's compute start to all layers landed (compute included)
    return new KvBenchRow(model, tokens, bytes, blocks, transfers, slots, "stream", backend, s.total().avgBwGBps(), s.total().p50Nanos() / 1e3,
        s.total().p99Nanos() / 1e3, contig.avgBwGBps(), naive == null ? Double.NaN : naive.avgBwGBps(), s.single64().avgBwGBps(),
        s.exposed().p50Nanos() / 1e3, s.exposed().p99Nanos() / 1e3, layer.p50Nanos() / 1e3, s.computeNanos() / 1e3, verified, registrationUs, Double.NaN, d);
  }

  /** Each stage's p50 in us over the iterations that have it (-1: unknown). */
  private static java.util.Map<String, Double> stagesP50(java.util.Map<String, long[]> stages) {
    java.util.Map<String, Double> out = new java.util.LinkedHashMap<>();
    for (var e : stages.entrySet()) {
      long[] known = java.util.Arrays.stream(e.getValue()).filter(v -> v >= 0).toArray();
      out.put(e.getKey(), known.length == 0 ? Double.NaN : p50(known) / 1e3);
    }
    return out;
  }

  private static double p50(long[] v) {
    return new KvBenchRuns.Stats(0, v).p50Nanos();
  }

  String line() {
    String base = String.format(Locale.ROOT, "%-11s %6d tok %5s  %8.1f MiB  %5d blocks  %6d transfers (of %6d)  p50 %9.0f us  p99 %9.0f us  %6.2f GB/s"
            + "  contiguous %6.2f GB/s (%3.0f%%)  per-block %6.2f GB/s  64MiB %6.2f GB/s (%3.0f%%)  %s",
        model, tokens, mode, bytes / 1048576.0, blocks, transfers, blockSlots, p50LatUs, p99LatUs, avgBwGBps, contiguousAvgBwGBps,
        100 * avgBwGBps / contiguousAvgBwGBps, naiveAvgBwGBps, single64MiBAvgBwGBps, 100 * avgBwGBps / single64MiBAvgBwGBps,
        verifiedSlots > 0 ? "bytes checked (" + verifiedSlots + " slots)" : "bytes not checked");
    if (!Double.isNaN(rawCopyAvgBwGBps))
      base += String.format(Locale.ROOT, "  raw peer copy %6.2f GB/s (%3.0f%%)", rawCopyAvgBwGBps, 100 * avgBwGBps / rawCopyAvgBwGBps);
    if (detail != null) {
      double over = exposedP50Us - detail.rawLayerP50Us;
      base += String.format(Locale.ROOT, "%n    stream: prefill %.0f us per layer (%s); exposed p50 %.0f us p99 %.0f us; one layer through the engine"
              + " after each stream (the stream's requests, same idle gap) p50 %.0f us p99 %.0f us: exposed - layer = %.0f us (target <= 50: %s); one layer via sendLayers"
              + " on an idle link, receiver heard it, p50 %.0f us"
              + "%n    last layer, p50: %.0f earlier layers still in flight at its sendLayers, drained %.0f us after it; sendLayers call %.0f us;"
              + " its transfers completed at the sender %.0f us after sendLayers; landed notification to the receiver %.0f us"
              + " (every layer's hop, median %.0f us)",
          layerComputeUs, detail.pacing, exposedP50Us, exposedP99Us, detail.rawLayerP50Us, detail.rawLayerP99Us, over, over <= 50 ? "met" : "NOT met",
          layerP50Us, detail.backlogLayers, detail.drainUs, detail.submitUs, detail.lastDoneUs, detail.notifyHopUs, detail.notifyHopAllLayersUs);
      StringBuilder st = new StringBuilder(String.format("%n    stages, p50 us from the call (stream: the last layer's sendLayers; engine: batchWrite of the same"
          + " batch; alone: sendLayers of that layer only, fresh stream; wire: the receiver's backend recorded the write):"));
      for (var e : detail.stagesP50Us.entrySet()) st.append(String.format(Locale.ROOT, " %s %.0f", e.getKey(), e.getValue()));
      base += st;
    }
    return base;
  }

  static String table(List<KvBenchRow> rows) {
    StringBuilder b = new StringBuilder("| model | tokens | mode | MiB | blocks | transfers (per-block) | p50 us | p99 us | GB/s | contiguous GB/s | % of contiguous | per-block GB/s | 64 MiB GB/s | % of 64 MiB | exposed p50/p99 us | layer p50 us (engine / via sendLayers) | prefill us/layer | checked slots |\n"
        + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (KvBenchRow r : rows) {
      boolean st = r.mode.equals("stream");
      b.append(String.format(Locale.ROOT, "| %s | %d | %s | %.1f | %d | %d (%d) | %.0f | %.0f | %.2f | %.2f | %.0f%% | %.2f | %.2f | %.0f%% | %s | %s | %s | %d |%n",
          r.model, r.tokens, r.mode, r.bytes / 1048576.0, r.blocks, r.transfers, r.blockSlots, r.p50LatUs, r.p99LatUs, r.avgBwGBps,
          r.contiguousAvgBwGBps, 100 * r.avgBwGBps / r.contiguousAvgBwGBps, r.naiveAvgBwGBps, r.single64MiBAvgBwGBps,
          100 * r.avgBwGBps / r.single64MiBAvgBwGBps, st ? String.format(Locale.ROOT, "%.0f / %.0f", r.exposedP50Us, r.exposedP99Us) : "-",
          st ? String.format(Locale.ROOT, "%.0f / %.0f", r.detail == null ? Double.NaN : r.detail.rawLayerP50Us, r.layerP50Us) : "-", st ? String.format(Locale.ROOT, "%.0f", r.layerComputeUs) : "-", r.verifiedSlots));
    }
    return b.toString();
  }

  /** The rows as JSON through {@link JsonRows}: figures with 3 decimals, null where there is none (NaN, infinite). */
  static String json(List<KvBenchRow> rows) {
    List<ObjectNode> out = new java.util.ArrayList<>(rows.size());
    for (KvBenchRow r : rows) {
      ObjectNode o = JsonRows.object();
      o.put("model", r.model);
      o.put("tokens", r.tokens);
      o.put("bytes", r.bytes);
      o.put("blocks", r.blocks);
      o.put("transfers", r.transfers);
      o.put("blockSlots", r.blockSlots);
      o.put("mode", r.mode);
      o.put("backend", r.backend);
      o.put("avgBwGBps", num(r.avgBwGBps));
      o.put("p50LatUs", num(r.p50LatUs));
      o.put("p99LatUs", num(r.p99LatUs));
      o.put("contiguousAvgBwGBps", num(r.contiguousAvgBwGBps));
      o.put("naiveAvgBwGBps", num(r.naiveAvgBwGBps));
      o.put("single64MiBAvgBwGBps", num(r.single64MiBAvgBwGBps));
      o.put("exposedP50Us", num(r.exposedP50Us));
      o.put("exposedP99Us", num(r.exposedP99Us));
      o.put("layerP50Us", num(r.layerP50Us));
      o.put("layerComputeUs", num(r.layerComputeUs));
      o.put("verifiedSlots", r.verifiedSlots);
      o.put("registrationUs", num(r.registrationUs));
      o.put("rawCopyAvgBwGBps", num(r.rawCopyAvgBwGBps));
      StreamDetail d = r.detail;
      if (d != null) {
        o.put("rawLayerP50Us", num(d.rawLayerP50Us));
        o.put("rawLayerP99Us", num(d.rawLayerP99Us));
        o.put("pacing", d.pacing);
        ObjectNode last = o.putObject("lastLayer");
        last.put("backlogLayers", num(d.backlogLayers));
        last.put("drainUs", num(d.drainUs));
        last.put("submitUs", num(d.submitUs));
        last.put("doneUs", num(d.lastDoneUs));
        last.put("notifyHopUs", num(d.notifyHopUs));
        o.put("notifyHopAllLayersUs", num(d.notifyHopAllLayersUs));
        ObjectNode stages = o.putObject("stagesP50Us");
        for (var e : d.stagesP50Us.entrySet()) stages.put(e.getKey(), num(e.getValue()));
      }
      out.add(o);
    }
    return JsonRows.objectsToJson(out);
  }

  /** A figure as kv-bench's JSON has always had it, 3 decimals; null when it is not finite (JSON has no NaN or Infinity). */
  static BigDecimal num(double v) {
    return Double.isFinite(v) ? BigDecimal.valueOf(v).setScale(3, RoundingMode.HALF_UP) : null;
  }
}
