package org.mori4j.bench.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.bench.Mori4jCommand;
import org.mori4j.io.TestGpuDevice;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * {@code kv-bench --backend xgmi --xgmi-single-process} on every build machine, on transport's in-memory device
 * (two "GPUs" with peer access, selected through {@code mori4j.gpu.runtime}): cache buffers from the runtime's
 * device allocation, the XGMI backend alone on both engines, push/pull/stream with the byte check reading the
 * device memory back, the engine's contiguous peer copy and the raw peer-copy baseline in the row. Figures mean
 * nothing here. The two-process mode starts a second JVM, which has no such device: it needs real GPUs.
 */
class KvBenchXgmiOnTestDeviceTest {
  private static final String MODE = "kv-bench-test-device";
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
  void gpu0ToGpu1InOneProcessChecksEveryByteAndReportsTheRawPeerCopy(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("kv.json");
    PrintStream saved = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    int code;
    try {
      code = Mori4jCommand.commandLine().execute("kv-bench", "--backend", "xgmi", "--xgmi-single-process", "--model", "deepseek-v3",
          "--tokens", "48", "--iters", "1", "--warmup", "0", "--naive-iters", "0", "--json", json.toString());
    } finally {
      System.setOut(saved);
    }
    String out = buf.toString(StandardCharsets.UTF_8);
    saved.print(out);
    assertEquals(0, code, out);
    assertTrue(out.contains("xgmi, GPU0 -> GPU1, one process"), out);
    JsonNode rows = new ObjectMapper().readTree(json.toFile());
    assertEquals(3, rows.size(), rows.toString());
    for (JsonNode r : rows) {
      assertEquals("xgmi", r.get("backend").asText());
      // 3 blocks x 61 layers x 1 latent tensor, every slot compared on the devices' bytes
      assertEquals(3 * 61, r.get("verifiedSlots").asInt(), r.toString());
      assertTrue(r.get("rawCopyAvgBwGBps").asDouble() > 0, "the raw peer copy of the same run: " + r);
      assertTrue(r.get("contiguousAvgBwGBps").asDouble() > 0, r.toString());
    }
    assertTrue(out.contains("raw " + org.mori4j.bench.baseline.XgmiCopyBaseline.copySeries(device, 0, 1)), out);
  }

  /**
   * Two pairs at once in one process, GPU0 -> GPU1 and GPU1 -> GPU0: both pairs' slots checked on the devices'
   * bytes, the raw peer copies of both pairs run together in every row, and a device the machine lacks refused.
   */
  @Test
  void twoPairsAtOnceCrossingTheTwoDevicesCheckEveryByte(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("kv-pairs.json");
    PrintStream saved = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    int code;
    try {
      code = Mori4jCommand.commandLine().execute("kv-bench", "--backend", "xgmi", "--xgmi-single-process", "--prefill-gpus", "0,1", "--decode-gpus", "1,0",
          "--model", "deepseek-v3", "--tokens", "48", "--iters", "1", "--warmup", "0", "--mode", "push,pull,stream", "--layer-compute-us", "50",
          "--json", json.toString());
    } finally {
      System.setOut(saved);
    }
    String out = buf.toString(StandardCharsets.UTF_8);
    saved.print(out);
    assertEquals(0, code, out);
    assertTrue(out.contains("pair 0: GPU0 -> GPU1") && out.contains("pair 1: GPU1 -> GPU0"), out);
    JsonNode rows = new ObjectMapper().readTree(json.toFile());
    assertEquals(3, rows.size(), rows.toString());
    for (JsonNode r : rows) {
      assertEquals("xgmi", r.get("backend").asText());
      assertEquals(2, r.get("pairs").asInt());
      assertEquals(2 * 3 * 61, r.get("verifiedSlots").asInt(), r.toString());
      assertTrue(r.get("rawCopyAvgBwGBps").asDouble() > 0 && r.get("rawCopySeries").asText().contains("GPU1->GPU0"), r.toString());
      assertEquals(r.get("rawCopyAvgBwGBps").asDouble(), r.get("contiguousAvgBwGBps").asDouble(), 1e-9, "over XGMI the reference is the driver's copies");
      assertEquals(2, r.get("perPair").size());
      assertEquals(1, r.get("perPair").get(1).get("prefillDevice").asInt());
      assertEquals(r.get("mode").asText().equals("stream"), r.get("layerP50Us").isNumber(), "one layer's reference in stream rows only: " + r);
      assertEquals(0, r.get("perPair").get(1).get("decodeDevice").asInt());
    }
    PrintStream savedErr = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    try {
      code = Mori4jCommand.commandLine().execute("kv-bench", "--backend", "xgmi", "--prefill-gpus", "0,1", "--decode-gpus", "2,3");
    } finally {
      System.setErr(savedErr);
    }
    assertEquals(2, code);
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("--decode-gpus: device 2 does not exist; this machine has 2"), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void aMissingDeviceIsNamedWithItsFlag() {
    KvBenchCommand c = new KvBenchCommand();
    String why = KvBenchCommand.gpuProblem(device, 0, 2);
    assertTrue(why != null && why.contains("--target-gpu-device 2") && why.contains("2 "), why);
    why = KvBenchCommand.gpuProblem(device, -1, 1);
    assertTrue(why != null && why.contains("--gpu-device -1"), why);
    new picocli.CommandLine(c).parseArgs("--xgmi-single-process");
    assertTrue(c.validate().contains("--xgmi-single-process needs --backend xgmi"), c.validate());
  }
}
