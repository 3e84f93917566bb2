package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mori4j.io.TestGpuDevice;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * {@code mori4j bench --backend xgmi --xgmi-single-process} on every build machine, on transport's in-memory
 * device (two "GPUs" with peer access; registered and selected through {@code mori4j.gpu.runtime}): the rows
 * (whose integrity checks read the target's bytes back over XGMI), the raw-copy baselines and issue 4's
 * comparison lines all come out for a batch and for a session row. The figures mean nothing here; the command
 * and its checks are what is tested. The two-process mode spawns {@code serve}, which has no such device: it is
 * {@code XgmiBenchGpuTest}'s, on a GPU.
 */
class XgmiBenchOnTestDeviceTest {
  private static final String MODE = "xgmi-bench-test-device";
  private static HostBackedGpuRuntime device;

  @BeforeAll
  static void useTheTestDevice() {
    device = TestGpuDevice.select(MODE, new HostBackedGpuRuntime(2, 0));
  }

  @AfterAll
  static void forgetTheTestDevice() {
    TestGpuDevice.forget(MODE, device);
  }

  @Test
  void aBatchRowWithRawCopyBaselinesAndComparison(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path svg = dir.resolve("x.svg");
    String out = CommandRun.ok("bench", "--backend", "xgmi", "--xgmi-single-process", "--target-gpu-device", "1", "--buffer-size", "4K",
        "--transfer-batch-size", "64", "--enable-batch-transfer", "--op-type", "read", "--iters", "5", "--warmup-iters", "1",
        "--warmup-ms", "0", "--max-buffer-size", "4M", "--plot", svg.toString());
    // --plot: the xgmi row first, then each raw-copy baseline of the run as a series of its own
    SvgDocument plot = SvgDocument.parse(svg);
    List<String> names = List.copyOf(plot.series().keySet());
    assertEquals("mori4j xgmi GPU0->GPU1", names.getFirst(), names.toString());
    assertTrue(names.contains(org.mori4j.bench.baseline.XgmiCopyBaseline.loopSeries(device, 0, 1, 64)), names.toString());
    assertEquals(1, plot.points("mori4j xgmi GPU0->GPU1", "bandwidth", "bw"));
    assertTrue(out.contains("mori4j read over xgmi, GPU0 <-> target GPU1 memory, same process"), out);
    assertTrue(out.contains(org.mori4j.bench.baseline.XgmiCopyBaseline.loopSeries(device, 0, 1, 64)), out);
    assertTrue(out.contains("memory-memcpyPeerAsync GPU0->GPU1 "), "the test device is not named as the CUDA driver: " + out);
    assertTrue(out.contains("4 KiB x 64: avg BW") && out.contains("a loop of raw copies"), out);
  }

  @Test
  void sequentialBlocksAreJoinedIntoOneCopyReversedOnesAreOneKernelLaunchPerBatch() {
    String[] args = {"bench", "--backend", "xgmi", "--xgmi-single-process", "--target-gpu-device", "1", "--buffer-size", "4K",
        "--transfer-batch-size", "256", "--enable-batch-transfer", "--iters", "5", "--warmup-iters", "1", "--warmup-ms", "0",
        "--max-buffer-size", "4M", "--no-baselines"};
    int before = device.launchCount();
    CommandRun.ok(args);
    assertEquals(before, device.launchCount(), "sequential 4 KiB blocks are contiguous: the engine joins them into one copy");
    String[] reversed = java.util.Arrays.copyOf(args, args.length + 2);
    reversed[args.length] = "--block-order";
    reversed[args.length + 1] = "reversed";
    String out = CommandRun.ok(reversed);
    assertTrue(out.contains("blocks reversed"), out);
    // warm-up, measured iterations and nothing else: every batch is one launch (the integrity read-back is one copy)
    assertTrue(device.launchCount() - before >= 6, "launches: " + (device.launchCount() - before));
  }

  @Test
  void aSessionRowAndALargeWriteOnOneDevice() {
    String out = CommandRun.ok("bench", "--backend", "xgmi", "--xgmi-single-process", "--buffer-size", "4K", "--all", "--sweep-start-size", "4K",
        "--sweep-max-size", "1M", "--transfer-batch-size", "1", "--enable-sess", "--iters", "5", "--warmup-iters", "1", "--warmup-ms", "0",
        "--max-buffer-size", "4M");
    assertTrue(out.contains("GPU0 <-> target GPU0 memory, same process") && out.contains("session on"), out);
    assertTrue(out.contains("4 KiB x 1: p50") && out.contains("the raw 4 KiB copy + synchronize"), out);
    assertTrue(out.contains("1 MiB x 1: avg BW") && out.contains("of the raw copy"), out);
  }
}
