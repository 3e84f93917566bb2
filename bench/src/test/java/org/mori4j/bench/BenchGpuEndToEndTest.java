package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.bench.baseline.GpuCopyBaseline;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * {@code mori4j bench --mem-type gpu} end to end on the GPU machine: device buffers on both ends (the target a
 * child JVM on the second GPU when there is one), writes and reads with the integrity check on device
 * memory, mixed CPU/GPU ends, and a run with baselines and {@code --compare-cpu} whose raw-copy rows, CPU
 * table and comparison line come out. Only that the command works is checked, not the figures. Runs with
 * {@code -Dgroups=gpu -DexcludedTestGroups=none}; skips, saying why, without a GPU runtime.
 */
@Tag("gpu")
class BenchGpuEndToEndTest {
  private static GpuRuntime gpu;

  @BeforeEach
  void requireGpu() {
    gpu = GpuRuntimes.select("auto");
    assumeTrue(gpu.available(), "no GPU runtime on this machine: " + gpu.version());
  }

  private static String targetDevice() {
    return gpu.deviceCount() > 1 ? "1" : "0";
  }

  private record Outcome(int code, String out) {}

  /** Runs the command with stdout captured (and still printed, so the tables show in the test log). */
  private static Outcome bench(String... args) {
    PrintStream saved = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream tee = new PrintStream(new OutputStream() {
      @Override
      public void write(int b) {
        buf.write(b);
        saved.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) {
        buf.write(b, off, len);
        saved.write(b, off, len);
      }
    }, true, StandardCharsets.UTF_8);
    System.setOut(tee);
    try {
      int code = Mori4jCommand.commandLine().execute(args);
      tee.flush();
      return new Outcome(code, buf.toString(StandardCharsets.UTF_8));
    } finally {
      System.setOut(saved);
    }
  }

  private static String[] args(String... extra) {
    List<String> a = new ArrayList<>(List.of("bench", "--iters", "3", "--warmup-iters", "1", "--warmup-ms", "0"));
    a.addAll(List.of(extra));
    return a.toArray(String[]::new);
  }

  @Test
  void gpuToGpuWritesAndReadsWithoutBaselines(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("g.json");
    Outcome w = bench(args("--mem-type", "gpu", "--target-gpu-device", targetDevice(), "--no-baselines", "--buffer-size", "1M",
        "--transfer-batch-size", "4", "--all-batch", "--json", json.toString()));
    assertEquals(0, w.code(), w.out());
    assertTrue(w.out().contains("GPU0 <-> target GPU" + targetDevice() + " memory"), w.out());
    assertEquals(3, Files.readString(json).split("\"msgSize\"").length - 1); // batches 1, 2, 4
    Outcome r = bench(args("--mem-type", "gpu", "--target-gpu-device", targetDevice(), "--no-baselines", "--buffer-size", "1M",
        "--transfer-batch-size", "3", "--op-type", "read", "--enable-sess", "--enable-batch-transfer"));
    assertEquals(0, r.code(), r.out());
    // the issue's own smoke command
    Outcome plain = bench(args("--mem-type", "gpu", "--no-baselines", "--buffer-size", "1M"));
    assertEquals(0, plain.code(), plain.out());
  }

  @Test
  void mixedEndsWork() {
    Outcome gpuToCpu = bench(args("--mem-type", "gpu", "--target-mem-type", "cpu", "--no-baselines", "--buffer-size", "1M",
        "--transfer-batch-size", "2"));
    assertEquals(0, gpuToCpu.code(), gpuToCpu.out());
    assertTrue(gpuToCpu.out().contains("GPU0 <-> target cpu memory"), gpuToCpu.out());
    Outcome cpuFromGpu = bench(args("--target-mem-type", "gpu", "--target-gpu-device", targetDevice(), "--op-type", "read",
        "--no-baselines", "--buffer-size", "1M", "--transfer-batch-size", "2"));
    assertEquals(0, cpuFromGpu.code(), cpuFromGpu.out());
    assertTrue(cpuFromGpu.out().contains("cpu <-> target GPU" + targetDevice() + " memory"), cpuFromGpu.out());
  }

  @Test
  void baselinesShowTheRawCopiesAndCompareCpuTheRatio(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("c.json");
    Outcome o = bench(args("--mem-type", "gpu", "--target-gpu-device", targetDevice(), "--buffer-size", "1M", "--transfer-batch-size", "1",
        "--compare-cpu", "--pingpong-iters", "200", "--iperf-seconds", "1", "--json", json.toString()));
    assertEquals(0, o.code(), o.out());
    String h2d = GpuCopyBaseline.h2dSeries(gpu);
    String d2h = GpuCopyBaseline.d2hSeries(gpu);
    for (String series : List.of(h2d, d2h, GpuCopyBaseline.d2dSeries(gpu), "nio-stream")) {
      assertTrue(o.out().contains("| " + series + " "), "baselines table has " + series + ":\n" + o.out());
    }
    assertTrue(o.out().contains("[--compare-cpu]"), "a second table with the CPU rows:\n" + o.out());
    Matcher m = Pattern.compile("1 MiB x 1: gpu avg BW [0-9.]+ GB/s = [0-9]+% of cpu<->cpu \\([0-9.]+ GB/s\\); raw H2D [0-9.]+ GB/s, D2H [0-9.]+ GB/s")
        .matcher(o.out());
    assertTrue(m.find(), "comparison line:\n" + o.out());
    String base = Files.readString(JsonRows.baselinesPath(json));
    Matcher raw = Pattern.compile("\"series\": \"" + Pattern.quote(h2d) + "\", \"baseline\": \"raw-copy\", \"msgSize\": 67108864, .*\"avgBwGBps\": [0-9]").matcher(base);
    assertTrue(raw.find(), "64 MiB H2D row with a bandwidth in " + base);
    assertTrue(Files.readString(JsonRows.cpuRowsPath(json)).contains("\"msgSize\": 1048576"));
    assertTrue(Files.readString(json).contains("\"msgSize\": 1048576"));
  }

  @Test
  void roundsPairTheGpuRowsWithTheCpuRowsAndTheBaselinesOfEachRound(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("r.json");
    Outcome o = bench(args("--mem-type", "gpu", "--target-gpu-device", targetDevice(), "--buffer-size", "1M", "--transfer-batch-size", "1",
        "--compare-cpu", "--rounds", "2", "--pingpong-iters", "200", "--iperf-seconds", "1", "--json", json.toString()));
    assertEquals(0, o.code(), o.out());
    assertTrue(o.out().contains("[--compare-cpu, round 2 of 2]"), o.out());
    String section = o.out().substring(o.out().indexOf("Paired rounds (2 rounds, same run)"));
    assertTrue(Pattern.compile("gpu write 1 MiB x 1 avg BW: [0-9]+% of cpu<->cpu, median of 2 ").matcher(section).find(), section);
    assertTrue(section.contains("cpu<->cpu write 1 MiB x 1 avg BW: "), section);
    String paired = Files.readString(TcpBenchRounds.pairedPath(json));
    assertTrue(paired.contains("\"scope\": \"gpu\"") && paired.contains("\"series\": \"cpu<->cpu\""), paired);
    assertTrue(Files.readString(JsonRows.cpuRowsPath(json)).contains("\"round\": 2"));
  }
}
