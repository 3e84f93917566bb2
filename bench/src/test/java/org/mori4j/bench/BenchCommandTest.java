package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Usage errors are reported before anything is started, with exit code 2 and the flag and value named. */
class BenchCommandTest {
  private record Outcome(int code, String err) {}

  private static Outcome run(String... args) {
    CommandLine cl = Mori4jCommand.commandLine();
    StringWriter err = new StringWriter();
    cl.setErr(new PrintWriter(err, true));
    cl.setOut(new PrintWriter(new StringWriter(), true));
    int code = cl.execute(args);
    return new Outcome(code, err.toString());
  }

  private static void assertUsageError(Outcome o, String... fragments) {
    assertEquals(2, o.code(), o.err());
    String firstLine = o.err().lines().findFirst().orElse("");
    for (String f : fragments) assertTrue(firstLine.contains(f), "expected '" + f + "' in: " + firstLine);
  }

  @Test
  void badOpTypeNamesTheFlagAndTheValue() {
    assertUsageError(run("bench", "--op-type", "copy"), "--op-type", "'copy'", "read", "write");
  }

  @Test
  void gpuMemoryIsRefusedClearly() {
    assertUsageError(run("bench", "--mem-type", "gpu"), "--mem-type gpu", "not available in this build");
  }

  @Test
  void otherBackendsAreRefusedClearly() {
    assertUsageError(run("bench", "--backend", "rdma"), "--backend rdma", "not available in this build");
    assertUsageError(run("bench", "--backend", "carrier-pigeon"), "--backend", "carrier-pigeon");
  }

  @Test
  void badNumbersAndSizesNameTheFlag() {
    assertUsageError(run("bench", "--transfer-batch-size", "0"), "--transfer-batch-size", "0");
    assertUsageError(run("bench", "--iters", "0"), "--iters", "0");
    assertUsageError(run("bench", "--buffer-size", "lots"), "--buffer-size", "lots");
    assertUsageError(run("bench", "--all", "--sweep-start-size", "1M", "--sweep-max-size", "4K"), "--sweep-max-size");
  }

  @Test
  void badPeerIsRefused() {
    assertUsageError(run("bench", "--peer", "localhost"), "--peer", "localhost");
    assertUsageError(run("bench", "--peer", "localhost:70000"), "--peer", "70000");
    assertUsageError(run("bench", "--peer-nio", "1234"), "--peer-nio needs --peer");
  }

  @Test
  void missingCommandIsAUsageError() {
    assertUsageError(run(), "missing command");
  }

  @Test
  void opConverterAcceptsBothCases() {
    assertEquals(EngineBenchmark.Op.READ, new BenchCommand.OpConverter().convert("READ"));
    assertEquals(EngineBenchmark.Op.WRITE, new BenchCommand.OpConverter().convert("write"));
  }
}
