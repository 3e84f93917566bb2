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
