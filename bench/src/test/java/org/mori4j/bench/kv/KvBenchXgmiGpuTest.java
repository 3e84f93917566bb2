package org.mori4j.bench.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.bench.Mori4jCommand;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * {@code mori4j kv-bench --backend xgmi} on real GPUs, GPU0 -> GPU1 (or GPU0 -> GPU0 on a one-GPU machine): the
 * receiver in this JVM and in a child JVM (its cache reached through IPC handles), push/pull/stream with every slot
 * checked on the devices' bytes and the driver's raw peer copy in each row. Only that the command works is
 * checked, not the figures. Tagged {@code gpu}; skips, saying why, without a GPU.
 */
@Tag("gpu")
class KvBenchXgmiGpuTest {
  private static GpuRuntime gpu;

  @BeforeEach
  void requireGpu() {
    gpu = GpuRuntimes.select("auto");
    assumeTrue(gpu.available(), "no GPU runtime on this machine: " + gpu.version());
  }

  private static JsonNode run(Path json, boolean singleProcess) throws Exception {
    int target = gpu.deviceCount() > 1 ? 1 : 0;
    List<String> args = new ArrayList<>(List.of("kv-bench", "--backend", "xgmi", "--target-gpu-device", Integer.toString(target), "--model", "llama3-8b",
        "--tokens", "256", "--iters", "3", "--warmup", "1", "--naive-iters", "1", "--json", json.toString()));
    if (singleProcess) args.add("--xgmi-single-process");
    PrintStream saved = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    int code;
    try {
      code = Mori4jCommand.commandLine().execute(args.toArray(String[]::new));
    } finally {
      System.setOut(saved);
    }
    String out = buf.toString(StandardCharsets.UTF_8);
    saved.print(out);
    assertEquals(0, code, out);
    assertTrue(out.contains(singleProcess ? "one process" : "two processes"), out);
    JsonNode rows = new ObjectMapper().readTree(json.toFile());
    assertEquals(3, rows.size(), rows.toString());
    for (JsonNode r : rows) {
      assertEquals(16 * 32 * 2, r.get("verifiedSlots").asInt(), r.toString());
      assertTrue(r.get("rawCopyAvgBwGBps").asDouble() > 0, r.toString());
    }
    return rows;
  }

  @Test
  void oneProcess(@TempDir Path dir) throws Exception {
    assertEquals("xgmi", run(dir.resolve("kv.json"), true).get(0).get("backend").asText());
  }

  @Test
  void twoProcesses(@TempDir Path dir) throws Exception {
    assertEquals("xgmi-2proc", run(dir.resolve("kv.json"), false).get(0).get("backend").asText());
  }
}
