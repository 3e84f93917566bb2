package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code node} and {@code cluster-bench}: bad flags are usage errors (exit 2, flag and value named) before
 * anything starts; end to end on loopback, cluster-bench finds its peer through the cluster alone, both with
 * the node it spawns itself and with a running node it is pointed at by {@code --seed}, and prints a row.
 */
class ClusterCommandsTest {
  private record Outcome(int code, String out, String err) {}

  private static Outcome run(String... args) {
    return run(false, args);
  }

  /**
   * Runs the command; results come from System.out as in the real program, usage errors from picocli's err
   * writer, and run-time failures, which the commands print on System.err, only with {@code stderr} (replacing
   * System.err while picocli runs makes it drop the err writer set here, so usage errors need the other way).
   */
  private static Outcome run(boolean stderr, String... args) {
    CommandLine cl = Mori4jCommand.commandLine();
    StringWriter err = new StringWriter();
    cl.setErr(new PrintWriter(err, true));
    cl.setOut(new PrintWriter(new StringWriter(), true));
    PrintStream savedOut = System.out;
    PrintStream savedErr = System.err;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream sysErr = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    if (stderr) System.setErr(new PrintStream(sysErr, true, StandardCharsets.UTF_8));
    try {
      int code = cl.execute(args);
      return new Outcome(code, out.toString(StandardCharsets.UTF_8), err + sysErr.toString(StandardCharsets.UTF_8));
    } finally {
      System.setOut(savedOut);
      System.setErr(savedErr);
      System.out.print(out.toString(StandardCharsets.UTF_8));
      System.err.print(sysErr.toString(StandardCharsets.UTF_8));
    }
  }

  private static void assertUsageError(Outcome o, String... fragments) {
    assertEquals(2, o.code(), o.err());
    String firstLine = o.err().lines().findFirst().orElse("");
    for (String f : fragments) assertTrue(firstLine.contains(f), "expected '" + f + "' in: " + firstLine);
  }

  @Test
  void badClusterFlagsAreUsageErrorsNamingTheValue() {
    assertUsageError(run("node", "--seed", "localhost"), "seed 'localhost' is not host:port", "no port");
    assertUsageError(run("node", "--seed", "127.0.0.1:2552", "--seed", "127.0.0.1:x"), "seed '127.0.0.1:x'", "not a number");
    assertUsageError(run("node", "--port", "70000"), "port 70000 is out of range");
    assertUsageError(run("node", "--host", "two words"), "host 'two words'");
    assertUsageError(run("node", "--system-name", "bad name"), "system name 'bad name'");
    assertUsageError(run("node", "--tls"), "tls is enabled but no key-store is set");
    assertUsageError(run("node", "--tls", "--key-store", "/nonexistent/node.p12"), "tls key-store '/nonexistent/node.p12' is not a readable file");
    assertUsageError(run("node", "--key-store", "/nonexistent/node.p12"), "--key-store and --trust-store need --tls");
    assertUsageError(run("node", "--buffer-size", "-1"), "--buffer-size", "-1");
    assertUsageError(run("node", "--join-timeout", "0"), "--join-timeout", "0");
    assertUsageError(run("node", "--engine-key", " "), "--engine-key");
    assertUsageError(run("node", "--data-host", "a b"), "--data-host 'a b'");
    assertUsageError(run("cluster-bench", "--seed", "host"), "seed 'host' is not host:port");
    assertUsageError(run("cluster-bench", "--peer-engine", "node-1"), "--peer-engine needs --seed or MORI4J_SEED_NODES");
    assertUsageError(run("cluster-bench", "--iters", "0"), "--iters", "0");
    assertUsageError(run("cluster-bench", "--op-type", "copy"), "--op-type", "'copy'");
    assertUsageError(run("cluster-bench", "--wait", "0"), "--wait", "0");
    assertUsageError(run("cluster-bench", "--all", "--sweep-start-size", "1M", "--sweep-max-size", "4K"), "--sweep-max-size");
  }

  @Test
  void clusterBenchSpawnsANodeFindsItThroughTheClusterAndPrintsARow(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("c.json");
    Outcome o = run("cluster-bench", "--iters", "5", "--warmup-iters", "1", "--warmup-ms", "0", "--buffer-size", "64K",
        "--transfer-batch-size", "4", "--json", json.toString(), "--plot", dir.resolve("c.svg").toString());
    assertEquals(0, o.code(), o.err());
    assertTrue(o.out().contains("spawned node") && o.out().contains("registered through the cluster"), o.out());
    assertTrue(o.out().lines().anyMatch(l -> l.matches("\\|\\s+64 KiB \\|\\s+4 \\|\\s+256 KiB \\|.*")), "a 64 KiB x 4 row: " + o.out());
    assertTrue(Files.readString(json).contains("\"totalBytes\": 262144"), Files.readString(json));
    SvgDocument plot = SvgDocument.parse(dir.resolve("c.svg"));
    assertEquals(List.of("mori4j (cluster peer)"), List.copyOf(plot.series().keySet()));
    assertEquals(1, plot.points("mori4j (cluster peer)", "latency", "p50"));
  }

  @Test
  void clusterBenchJoinsARunningNodeThroughItsSeed() throws Exception {
    try (TargetProcess node = TargetProcess.start("node", List.of("--engine-key", "seed-node-under-test", "--buffer-size", "1M",
        "--stop-on-stdin-eof"), Duration.ofSeconds(90), System.err)) {
      ReadyLine r = node.ready();
      assertEquals(0, r.nioPort(), "a node runs no NIO baseline server");
      Outcome o = run("cluster-bench", "--seed", r.host() + ":" + r.port(), "--peer-engine", "seed-node-under-test", "--op-type", "read",
          "--enable-sess", "--iters", "5", "--warmup-iters", "1", "--warmup-ms", "0", "--transfer-batch-size", "2");
      assertEquals(0, o.code(), o.err());
      assertTrue(o.out().contains("peer engine 'seed-node-under-test'") && o.out().contains("running node"), o.out());
      assertTrue(o.out().lines().anyMatch(l -> l.matches("\\|\\s+4 KiB \\|\\s+2 \\|\\s+8 KiB \\|.*")), "a 4 KiB x 2 row: " + o.out());
      assertTrue(node.alive(), "the node keeps running after a cluster-bench left" + node.stderrTail());
      // a key that is not in the cluster: a clear failure within --wait, not a hang
      Outcome missing = run(true, "cluster-bench", "--seed", r.host() + ":" + r.port(), "--peer-engine", "no-such-engine", "--wait", "3",
          "--iters", "1", "--warmup-iters", "0", "--warmup-ms", "0", "--transfer-batch-size", "1");
      assertEquals(1, missing.code(), missing.err());
      assertTrue(missing.err().contains("engine 'no-such-engine' was not registered through the cluster within 3 s")
          && missing.err().contains("seed-node-under-test"), missing.err());
      // seeds from the configuration (what MORI4J_SEED_NODES sets) join the running node too: nothing is spawned
      System.setProperty("mori4j.cluster.node.seed-nodes", r.host() + ":" + r.port());
      com.typesafe.config.ConfigFactory.invalidateCaches();
      try {
        Outcome fromConfig = run("cluster-bench", "--peer-engine", "seed-node-under-test", "--iters", "3", "--warmup-iters", "1",
            "--warmup-ms", "0", "--transfer-batch-size", "1");
        assertEquals(0, fromConfig.code(), fromConfig.err());
        assertTrue(fromConfig.out().contains("running node"), fromConfig.out());
      } finally {
        System.clearProperty("mori4j.cluster.node.seed-nodes");
        com.typesafe.config.ConfigFactory.invalidateCaches();
      }
    }
  }
}
