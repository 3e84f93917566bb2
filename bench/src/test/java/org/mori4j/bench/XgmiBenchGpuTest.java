package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.bench.baseline.XgmiCopyBaseline;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * {@code mori4j bench --backend xgmi} end to end on a GPU: the target engine in this JVM and in a child JVM,
 * a batch with the raw-copy baselines and the comparison lines, and a 4 KiB session row; the rows' integrity
 * checks read the target's bytes back. Only that the command works is checked here, not the figures
 * ({@code bench/record-xgmi-results.sh} records those). Tagged {@code gpu}; skips, saying why, without a GPU.
 */
@Tag("gpu")
class XgmiBenchGpuTest {
  private static GpuRuntime gpu;

  @BeforeEach
  void requireGpu() {
    gpu = GpuRuntimes.select("auto");
    assumeTrue(gpu.available(), "no GPU runtime on this machine: " + gpu.version());
  }

  @Test
  void singleProcessBatchWithRawCopyBaselines() {
    int target = gpu.deviceCount() > 1 ? 1 : 0;
    String out = CommandRun.ok("bench", "--backend", "xgmi", "--xgmi-single-process", "--target-gpu-device", Integer.toString(target),
        "--buffer-size", "4K", "--transfer-batch-size", "64", "--enable-batch-transfer", "--iters", "5", "--warmup-iters", "1",
        "--warmup-ms", "0", "--max-buffer-size", "64M");
    assertTrue(out.contains("over xgmi") && out.contains("same process"), out);
    assertTrue(out.contains(XgmiCopyBaseline.loopSeries(gpu, 0, target, 64)), out);
    assertTrue(out.contains("4 KiB x 64: avg BW"), out);
  }

  @Test
  void twoProcessSessionRow() {
    String out = CommandRun.ok("bench", "--backend", "xgmi", "--buffer-size", "4096", "--transfer-batch-size", "1", "--enable-sess", "--iters", "50",
        "--warmup-iters", "5", "--warmup-ms", "0", "--no-baselines");
    assertTrue(out.contains("over xgmi") && out.contains("two processes"), out);
  }
}
