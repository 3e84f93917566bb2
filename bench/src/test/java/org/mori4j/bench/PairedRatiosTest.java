package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The paired section's arithmetic on hand-built rounds, one of which lacks UCX. */
class PairedRatiosTest {
  private static final long MIB64 = 64L << 20;

  private static ResultRow bwRow(double avgBw) {
    return new ResultRow(MIB64, 1, MIB64, avgBw, avgBw, 1, 1, 1, 1);
  }

  private static ResultRow latRow(double p50) {
    return new ResultRow(4096, 1, 4096, 1, 1, p50, p50, p50, p50);
  }

  private static BaselineRow ucxLat(double p50) {
    return new BaselineRow("ucx tag_lat", new ResultRow(4096, 1, 4096, Double.NaN, Double.NaN, Double.NaN, p50, p50, Double.NaN), "");
  }

  /** One round's ratios as the bench computes them: its 64 MiB and 4 KiB rows against its own baselines. */
  private static List<Comparison.Ratio> round(double mineBw, double nio, Double ucxBw, double mineLat, double ucxLatP50) {
    List<BaselineRow> base = new ArrayList<>();
    base.add(new BaselineRow("nio-stream", bwRow(nio), ""));
    base.add(ucxBw == null ? BaselineRow.missing("ucx tag_bw", "ucx_perftest failed") : new BaselineRow("ucx tag_bw", ResultRow.bandwidthOnly(MIB64, MIB64, ucxBw), ""));
    base.add(BaselineRow.missing("iperf3 single-stream", "iperf3 not installed"));
    base.add(ucxLat(ucxLatP50));
    return Comparison.ratios(List.of(bwRow(mineBw), latRow(mineLat)), base);
  }

  private static List<PairedRatios> threeRounds() {
    return PairedRatios.of(List.of(
        round(4.4, 4.0, 4.0, 11.0, 11.5),
        round(4.6, 5.0, null, 12.0, 11.0),
        round(4.5, 4.5, 5.0, 10.0, 10.0)));
  }

  @Test
  void medianRangeAndCountUseOnlyTheRoundsWithTheBaseline() {
    List<PairedRatios> p = threeRounds();
    // 64 MiB: nio-stream, iperf3, ucx tag_bw; 4 KiB: nio-pingpong, ucx tag_lat, in the order the comparison has them
    assertEquals(List.of("nio-stream", "iperf3 single-stream", "ucx tag_bw", "nio-pingpong 4KiB", "ucx tag_lat"),
        p.stream().map(x -> x.first().series()).toList());

    PairedRatios ucxBw = p.get(2);
    assertEquals(3, ucxBw.rounds());
    assertEquals(2, ucxBw.used().length);
    assertEquals(List.of(2), ucxBw.missingRounds());
    assertEquals(1.0, ucxBw.median(), 1e-12); // (1.1 + 0.9) / 2
    assertEquals(0.9, ucxBw.min(), 1e-12);
    assertEquals(1.1, ucxBw.max(), 1e-12);
    assertEquals(1, ucxBw.atOrBetter());
    assertEquals("write 64 MiB x 1 avg BW: 100% of ucx tag_bw, median of 2 of 3 rounds [90%..110%], >= 100% in 1 of 2 "
        + "(ucx tag_bw missing in round 2); medians 4.45 GB/s vs 4.50 GB/s", ucxBw.line("write"));

    PairedRatios nio = p.getFirst();
    assertEquals(1.0, nio.median(), 1e-12); // 1.1, 0.92, 1.0
    assertEquals(0.92, nio.min(), 1e-12);
    assertEquals(2, nio.atOrBetter());
    assertEquals("read 64 MiB x 1 avg BW: 100% of nio-stream, median of 3 [92%..110%], >= 100% in 2 of 3; medians 4.50 GB/s vs 4.50 GB/s",
        nio.line("read"));

    assertEquals("write 64 MiB x 1 avg BW: iperf3 missing in all 3 rounds", p.get(1).line("write"));
    assertEquals(0, p.get(1).used().length);

    // latency: lower is better, the exact tie (10.0 vs 10.0) counts
    PairedRatios lat = p.get(4);
    assertEquals(1.0, lat.median(), 1e-12); // 0.957, 1.091, 1.0
    assertEquals(11.0 / 11.5, lat.min(), 1e-12);
    assertEquals(12.0 / 11.0, lat.max(), 1e-12);
    assertEquals(2, lat.atOrBetter());
    assertEquals("write 4 KiB x 1 p50: 1.00x ucx tag_lat round-trip, median of 3 [0.96x..1.09x], <= 1.00x in 2 of 3; "
        + "medians 11.00 us vs 11.00 us", lat.line("write"));
  }

  @Test
  void theSectionAndTheJsonCarryTheSameFigures() throws Exception {
    List<PairedRatios> p = threeRounds();
    List<String> section = PairedRatios.section(p, "write");
    assertTrue(section.getFirst().startsWith("Paired rounds (3 rounds, same run)"), section.getFirst());
    assertEquals(1 + p.size(), section.size());
    ObjectNode o = p.get(2).json("write");
    assertEquals("ucx-tag_bw", o.get("baseline").asText());
    assertEquals("avgBwGBps", o.get("measure").asText());
    assertEquals("higher", o.get("better").asText());
    assertEquals(3, o.get("rounds").asInt());
    assertEquals(2, o.get("roundsUsed").asInt());
    assertEquals(1, o.get("atOrBetter").asInt());
    assertEquals(1.0, o.get("median").asDouble(), 1e-12);
    assertTrue(o.get("ratios").get(1).isNull(), o.toString());
    assertEquals(4.0, o.get("reference").get(0).asDouble(), 1e-12);
    assertEquals(4.6, o.get("mori4j").get(1).asDouble(), 1e-12);
    assertEquals("lower", p.get(4).json("write").get("better").asText());
    // the file: one object per line, the per-round arrays inline, and JSON a reader takes back
    String file = PairedRatios.toJson(p, "write");
    assertEquals(2 + p.size(), file.split("\n").length, file);
    assertTrue(file.contains("\"ratios\": [1.1, null, 0.9], "), file);
    assertEquals(p.size(), new com.fasterxml.jackson.databind.ObjectMapper().readTree(file).size());
    assertEquals("[]\n", PairedRatios.toJson(List.of(), "write"));
    ObjectNode none = p.get(1).json("write");
    assertTrue(none.get("median").isNull(), none.toString());
    assertEquals(0, none.get("roundsUsed").asInt());
  }

  @Test
  void aRoundWithoutARatioOfAKeyCountsAsMissingThere() {
    List<Comparison.Ratio> full = round(4.4, 4.0, 4.0, 11.0, 11.5);
    List<PairedRatios> p = PairedRatios.of(List.of(full.subList(0, 3), full));
    PairedRatios lat = p.get(4);
    assertEquals(List.of(1), lat.missingRounds());
    assertEquals(1, lat.used().length);
  }
}
