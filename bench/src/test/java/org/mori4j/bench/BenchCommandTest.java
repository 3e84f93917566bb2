package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
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
  void badBlockOrderNamesTheFlagAndTheValue() {
    assertUsageError(run("bench", "--block-order", "zigzag"), "--block-order", "sequential or reversed", "zigzag");
  }

  @Test
  void gpuMemoryWithoutAGpuRuntimeFailsAtOnceWithTheRuntimesMessage() {
    GpuRuntime gpu = GpuRuntimes.select("auto");
    assumeFalse(gpu.available(), "this machine has a GPU runtime (" + gpu.name() + "); the no-runtime message cannot be seen here");
    // exit 2 before anything starts: no target JVM, no engine; the runtime's one message says what was tried
    assertUsageError(run("bench", "--mem-type", "gpu"), "--mem-type gpu", "no GPU runtime available", "tried CUDA");
    assertUsageError(run("bench", "--target-mem-type", "gpu"), "--target-mem-type gpu", "no GPU runtime available");
    assertUsageError(run("serve", "--mem-type", "gpu"), "--mem-type gpu", "no GPU runtime available");
  }

  @Test
  void gpuFlagsAreCheckedBeforeAnythingStarts() {
    assertUsageError(run("bench", "--mem-type", "tpu"), "--mem-type", "'tpu'", "cpu or gpu");
    assertUsageError(run("bench", "--target-mem-type", "hbm"), "--target-mem-type", "'hbm'");
    assertUsageError(run("serve", "--mem-type", "tpu"), "--mem-type", "'tpu'");
    assertUsageError(run("bench", "--mem-type", "gpu", "--gpu-device", "-1"), "--gpu-device", "-1");
    assertUsageError(run("bench", "--mem-type", "gpu", "--target-gpu-device", "-2"), "--target-gpu-device", "-2");
    assertUsageError(run("bench", "--compare-cpu"), "--compare-cpu", "--mem-type gpu");
    assertUsageError(run("bench", "--mem-type", "gpu", "--compare-cpu-rounds", "3"), "--compare-cpu-rounds needs --compare-cpu");
    assertUsageError(run("bench", "--mem-type", "gpu", "--compare-cpu", "--compare-cpu-rounds", "-1"), "--compare-cpu-rounds", "-1");
    assertUsageError(run("bench", "--peer", "h:1", "--target-mem-type", "gpu"), "--target-mem-type", "--peer");
    assertUsageError(run("bench", "--peer", "h:1", "--mem-type", "gpu", "--target-gpu-device", "1"), "--target-gpu-device", "--peer");
  }

  @Test
  void otherBackendsAreRefusedClearly() {
    assertUsageError(run("bench", "--backend", "carrier-pigeon"), "--backend", "carrier-pigeon");
    assertUsageError(run("serve", "--backend", "carrier-pigeon"), "--backend", "carrier-pigeon", "tcp, xgmi or rdma");
  }

  @Test
  void xgmiFlagsAreCheckedBeforeAnythingStarts() {
    assertUsageError(run("bench", "--xgmi-single-process"), "--xgmi-single-process needs --backend xgmi");
    assertUsageError(run("bench", "--backend", "xgmi", "--mem-type", "cpu"), "--backend xgmi moves GPU memory only", "--mem-type cpu");
    assertUsageError(run("bench", "--backend", "xgmi", "--target-mem-type", "cpu"), "--backend xgmi moves GPU memory only", "target cpu");
    assertUsageError(run("bench", "--backend", "xgmi", "--peer", "h:1"), "--peer is for tcp");
    assertUsageError(run("bench", "--backend", "xgmi", "--compare-cpu"), "--compare-cpu");
    assertUsageError(run("serve", "--backend", "xgmi"), "--backend xgmi serves GPU memory", "--mem-type gpu");
  }

  @Test
  void xgmiWithoutAGpuRuntimeFailsAtOnceWithTheRuntimesMessage() {
    assumeFalse(BenchGpu.runtime().available(), "this machine has a GPU runtime");
    // --backend xgmi means GPU memory on both ends: exit 2 before anything starts, with the runtime's one message
    assertUsageError(run("bench", "--backend", "xgmi"), "--backend xgmi", "no GPU runtime available", "tried CUDA");
    assertUsageError(run("serve", "--backend", "xgmi", "--mem-type", "gpu"), "--mem-type gpu", "no GPU runtime available");
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
  void roundsAreCheckedBeforeAnythingStarts() {
    assertUsageError(run("bench", "--rounds", "0"), "--rounds", "1..50", ": 0");
    assertUsageError(run("bench", "--rounds", "51"), "--rounds", "1..50", ": 51");
    assertUsageError(run("bench", "--rounds", "many"), "--rounds", "'many'");
    assertUsageError(run("bench", "--rounds", "3", "--no-baselines"), "--rounds 3", "--no-baselines", "nothing to pair");
    assertUsageError(run("bench", "--rounds", "2", "--backend", "rdma", "--rdma-provider", "software"), "--rounds 2", "--backend tcp", "rdma");
    assertUsageError(run("bench", "--rounds", "2", "--backend", "xgmi"), "--rounds 2", "--backend tcp", "xgmi");
    assertUsageError(run("bench", "--rounds", "2", "--tls"), "--rounds 2", "--tls");
    assertUsageError(run("bench", "--rounds", "2", "--mem-type", "gpu", "--compare-cpu", "--compare-cpu-rounds", "3"),
        "--rounds 2", "--compare-cpu-rounds 3", "use one");
    // one round is a plain run: --no-baselines stays allowed there (BenchEndToEndTest runs it)
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
