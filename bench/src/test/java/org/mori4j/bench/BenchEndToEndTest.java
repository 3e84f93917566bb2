package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command end to end across two JVMs: a spawned target and a running {@code serve} (--peer), small
 * enough to run with the unit tests. Performance is not checked here, only that rows come out, the integrity
 * check passed (exit code 0) and the JSON has the shape.
 */
class BenchEndToEndTest {
  private static int bench(String... args) {
    return Mori4jCommand.commandLine().execute(args);
  }

  @Test
  void spawnedTargetWritesAndReadsWithEveryCallStyle(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("w.json");
    Path svg = dir.resolve("w.svg");
    assertEquals(0, bench("bench", "--iters", "5", "--warmup-iters", "1", "--warmup-ms", "0", "--no-baselines", "--buffer-size", "64K",
        "--transfer-batch-size", "4", "--all-batch", "--json", json.toString(), "--plot", svg.toString()));
    String w = Files.readString(json);
    assertEquals(3, w.split("\"msgSize\"").length - 1, w); // batches 1, 2, 4
    assertTrue(w.contains("\"batchSize\": 4"), w);
    // --plot: one series per batch size, well formed
    assertEquals(List.of("mori4j x 1", "mori4j x 2", "mori4j x 4"), List.copyOf(SvgDocument.parse(svg).series().keySet()));
    assertEquals(0, bench("bench", "--iters", "5", "--warmup-iters", "1", "--warmup-ms", "0", "--no-baselines", "--op-type", "read",
        "--enable-sess", "--enable-batch-transfer", "--buffer-size", "1M", "--transfer-batch-size", "3"));
  }

  /**
   * Two rounds on one warm engine and target, with every baseline (a tool that is not installed is a missing row, as in a
   * plain run): each round printed and labelled, the second with its baselines first, then the paired section; the JSON
   * rows and baselines carry their round, the paired ratios have their own file, and plot --dir still reads the folder.
   */
  @Test
  void twoRoundsArePairedWithTheirBaselines(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("r.json");
    String out = CommandRun.ok("bench", "--rounds", "2", "--iters", "5", "--warmup-iters", "1", "--warmup-ms", "0", "--buffer-size", "4K",
        "--transfer-batch-size", "1", "--pingpong-iters", "200", "--iperf-seconds", "1", "--json", json.toString());
    int table1 = out.indexOf("[round 1 of 2]"), base1 = out.indexOf("Baselines (same run, round 1 of 2)");
    int table2 = out.indexOf("[round 2 of 2]"), base2 = out.indexOf("Baselines (same run, round 2 of 2)");
    int paired = out.indexOf("Paired rounds (2 rounds, same run)");
    assertTrue(table1 >= 0 && base1 > table1, "round 1: mori4j first\n" + out);
    assertTrue(base2 > base1 && table2 > base2, "round 2: baselines first\n" + out);
    assertTrue(out.indexOf("Comparison (same run, round 2 of 2):") > table2 && paired > table2, out);
    String section = out.substring(paired);
    assertTrue(section.contains("write 4 KiB x 1 p50: ") && section.contains("nio-pingpong"), section);
    assertTrue(section.contains("ucx tag_lat round-trip"), section); // a ratio line, or "missing in all 2 rounds" without UCX

    List<JsonRows.Entry> rows = JsonRows.read(json);
    assertEquals(2, rows.size());
    String main = Files.readString(json);
    assertTrue(main.contains("\"round\": 1") && main.contains("\"round\": 2"), main);
    String base = Files.readString(JsonRows.baselinesPath(json));
    assertTrue(base.contains("\"round\": 2, \"series\": \"nio-pingpong 4KiB\""), base);
    List<JsonRows.Entry> baselines = JsonRows.read(JsonRows.baselinesPath(json));
    assertEquals(0, baselines.size() % 2, "each round has the same baselines");
    com.fasterxml.jackson.databind.JsonNode p = new com.fasterxml.jackson.databind.ObjectMapper().readTree(TcpBenchRounds.pairedPath(json).toFile());
    assertEquals(dir.resolve("r.paired.json"), TcpBenchRounds.pairedPath(json));
    assertEquals(2, p.size(), p.toString()); // 4 KiB: nio-pingpong and ucx tag_lat
    assertEquals("nio-pingpong", p.get(0).get("baseline").asText());
    assertEquals(2, p.get(0).get("roundsUsed").asInt(), p.toString());
    assertEquals(2, p.get(0).get("ratios").size());
    assertEquals("ucx-tag_lat", p.get(1).get("baseline").asText());

    CommandRun.ok("plot", "--dir", dir.toString());
    assertTrue(Files.isRegularFile(dir.resolve("r.svg")));
    assertTrue(!Files.exists(dir.resolve("r.paired.svg")), "the paired ratios are not plotted as rows");
  }

  @Test
  void runningServeIsUsedWithPeer(@TempDir Path dir) throws Exception {
    try (TargetProcess serve = TargetProcess.start(List.of("--buffer-size", "1M"), Duration.ofSeconds(60), System.err)) {
      ReadyLine r = serve.ready();
      Path json = dir.resolve("p.json");
      assertEquals(0, bench("bench", "--peer", r.host() + ":" + r.port(), "--iters", "5", "--warmup-iters", "1", "--warmup-ms", "0",
          "--no-baselines", "--enable-sess", "--transfer-batch-size", "2", "--json", json.toString()));
      assertTrue(Files.readString(json).contains("\"totalBytes\": 8192"));
      assertTrue(serve.alive(), "serve keeps running after a bench" + serve.stderrTail());
    }
  }
}
