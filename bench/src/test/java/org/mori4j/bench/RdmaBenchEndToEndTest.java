package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bench --backend rdma --rdma-provider software} end to end across two JVMs, with a few small points:
 * the run must exit 0, which it only does when the initiator's engine (whose only backend is RDMA) routed the
 * pair over RDMA, every transfer completed and every row's integrity sample matched; the rows must be labelled
 * emulation in the table and the JSON, and the TCP rows of {@code --compare-tcp} must sit beside them. The
 * second test drives a running {@code serve --backend rdma} by {@code --peer}, with reads, sessions, batch
 * calls, EVENT polling and two queue pairs. Performance is not checked.
 */
class RdmaBenchEndToEndTest {
  private static final String LABEL = "rdma (software provider: emulation)";

  private static long count(String text, String regex) {
    return Pattern.compile(regex, Pattern.MULTILINE).matcher(text).results().count();
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void softwareProviderWritesBesideTcpAndSaysEmulation(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("r.json");
    String out = CommandRun.ok("bench", "--backend", "rdma", "--rdma-provider", "software", "--iters", "5", "--warmup-iters", "1",
        "--warmup-ms", "0", "--no-baselines", "--buffer-size", "64K", "--transfer-batch-size", "2", "--all-batch", "--json", json.toString(),
        "--plot", dir.resolve("r.svg").toString());
    assertTrue(out.startsWith("mori4j bench: backend=" + LABEL + " op=write"), out);
    assertTrue(out.contains("not NIC performance"), out);
    assertTrue(out.contains("mori4j write over " + LABEL + " beside tcp"), out);
    // batches 1 and 2 of 64 KiB, each on both backends, each row naming its backend
    assertEquals(2, count(out, "^\\| " + Pattern.quote(LABEL) + " \\| +64 KiB \\| +[12] \\|"), out);
    assertEquals(2, count(out, "^\\| tcp +\\| +64 KiB \\| +[12] \\|"), out);
    assertTrue(out.contains("bytes verified: 4 row(s)"), out);
    assertTrue(out.contains("64 KiB x 2: " + LABEL + " avg BW"), out);

    String rdmaJson = Files.readString(json);
    assertEquals(2, count(rdmaJson, "\"backend\": \"rdma\", \"provider\": \"software\", \"emulation\": true"), rdmaJson);
    Matcher bw = Pattern.compile("\"avgBwGBps\": ([0-9.E-]+)").matcher(rdmaJson);
    while (bw.find()) assertTrue(Double.parseDouble(bw.group(1)) > 0, rdmaJson);
    String tcpJson = Files.readString(JsonRows.tcpRowsPath(json));
    assertEquals(2, count(tcpJson, "\"backend\": \"tcp\", \"provider\": null, \"emulation\": false"), tcpJson);
    // --plot: the rdma and tcp rows as separate series, one per batch size
    assertEquals(List.of(LABEL + " x 1", LABEL + " x 2", "tcp x 1", "tcp x 2"), List.copyOf(SvgDocument.parse(dir.resolve("r.svg")).series().keySet()));
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void runningRdmaServeIsUsedWithPeer() throws Exception {
    try (TargetProcess serve = TargetProcess.start(List.of("--backend", "rdma", "--rdma-provider", "software", "--poll-cq-mode", "EVENT",
        "--qp-per-transfer", "2", "--buffer-size", "1M"), Duration.ofSeconds(60), System.err)) {
      ReadyLine r = serve.ready();
      String out = CommandRun.ok("bench", "--backend", "rdma", "--rdma-provider", "software", "--peer", r.host() + ":" + r.port(),
          "--no-compare-tcp", "--poll-cq-mode", "EVENT", "--qp-per-transfer", "2", "--op-type", "read", "--enable-sess",
          "--enable-batch-transfer", "--buffer-size", "256K", "--transfer-batch-size", "3", "--iters", "5", "--warmup-iters", "1",
          "--warmup-ms", "0", "--no-baselines");
      assertTrue(out.contains("mori4j read over " + LABEL + ", cpu memory (batch-transfer on, session on)"), out);
      assertEquals(1, count(out, "^\\| " + Pattern.quote(LABEL) + " \\| +256 KiB \\| +3 \\|"), out);
      assertFalse(out.contains("| tcp "), out);
      assertTrue(out.contains("bytes verified: 1 row(s)"), out);
      assertTrue(serve.alive(), "serve keeps running after a bench" + serve.stderrTail());
    }
  }
}
