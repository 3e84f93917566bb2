package org.mori4j.bench.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.bench.Mori4jCommand;
import org.mori4j.io.kv.KvCacheLayout;
import picocli.CommandLine;

/** kv-bench's options, its byte check, and one short run end to end (two JVMs on loopback). */
class KvBenchCommandTest {

  /** What kv-bench's validation says of {@code args} (null when they are fine); KvPairsTest uses it too. */
  static String problem(String... args) {
    KvBenchCommand c = new KvBenchCommand();
    new CommandLine(c).parseArgs(args);
    return c.validate();
  }

  @Test
  void defaultsAreSaneAndBadOptionsAreNamedWithTheirValue() {
    KvBenchCommand c = new KvBenchCommand();
    new CommandLine(c).parseArgs();
    assertNull(c.validate());
    assertEquals("llama3-70b", c.model);
    assertArrayEquals(new int[] {512, 4096}, c.tokens);
    assertArrayEquals(new String[] {"push", "pull", "stream"}, c.modes);
    assertTrue(c.verify, "the byte check is on by default");
    assertEquals("model", c.layerCompute);
    // Llama-3-70B, 4,096 tokens at 400 TFLOP/s: 2 x 70.6e9 / 80 x 4096 / 4e14 s = 18.07 ms per layer; 8B: 5.14 ms
    assertEquals(18_073, KvModel.preset("llama3-70b").prefillNanosPerLayer(4096, 400) / 1000);
    assertEquals(5_139, KvModel.preset("llama3-8b").prefillNanosPerLayer(4096, 400) / 1000);
    KvBenchCommand off = new KvBenchCommand();
    new CommandLine(off).parseArgs("--no-verify");
    assertTrue(!off.verify);

    String[][] cases = {
        {"--model", "gpt-2"}, {"gpt-2"},
        {"--block-tokens", "0"}, {"--block-tokens", "0"},
        {"--fragmentation", "1.5"}, {"--fragmentation", "1.5"},
        {"--iters", "0"}, {"--iters", "0"},
        {"--warmup", "-1"}, {"--warmup", "-1"},
        {"--naive-iters", "-2"}, {"--naive-iters", "-2"},
        {"--tokens", "512,0"}, {"--tokens", "0"},
        {"--mode", "push,sideways"}, {"--mode", "sideways"},
        {"--layer-compute-us", "-5"}, {"--layer-compute-us", "-5"},
        {"--layer-compute-us", "fast"}, {"--layer-compute-us", "'model' or 'link'", "fast"},
        {"--prefill-tflops", "0"}, {"--prefill-tflops must be positive: 0.0"},
        {"--backend", "rdma"}, {"--backend must be tcp or xgmi: rdma"},
    };
    for (int i = 0; i < cases.length; i += 2) {
      String why = problem(cases[i]);
      assertTrue(why != null, String.join(" ", cases[i]) + " was accepted");
      for (String part : cases[i + 1]) assertTrue(why.contains(part), String.join(" ", cases[i]) + ": " + why);
    }
    // through the command line: exit 2 and the reason on stderr, nothing started
    PrintStream savedErr = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
    int code;
    try {
      code = Mori4jCommand.commandLine().execute("kv-bench", "--fragmentation", "2");
    } finally {
      System.setErr(savedErr);
    }
    assertEquals(2, code);
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("kv-bench: --fragmentation must be in [0, 1]: 2.0"), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void theByteCheckSeesAFlippedByteAndASlotInTheWrongPlace() {
    KvCacheLayout layout = KvCacheLayout.perLayerTensor(3, 2, 8, 96);
    try (Arena arena = Arena.ofShared()) {
      KvBenchMemory.Host a = (KvBenchMemory.Host) KvBenchMemory.host(layout, arena), b = (KvBenchMemory.Host) KvBenchMemory.host(layout, arena);
      int[] src = {5, 1, 7}, dst = {0, 6, 2};
      KvBenchCheck.fill(a, src, 42);
      // what a correct migration does, slot by slot
      for (int l = 0; l < 3; l++)
        for (int t = 0; t < 2; t++)
          for (int i = 0; i < src.length; i++)
            MemorySegment.copy(a.buffers.get(layout.bufferOf(l, t)), layout.offset(l, t, src[i]), b.buffers.get(layout.bufferOf(l, t)),
                layout.offset(l, t, dst[i]), 96);
      assertEquals(KvBenchCheck.sum(a, src), KvBenchCheck.sum(b, dst));
      // two blocks landed in each other's place
      assertNotEquals(KvBenchCheck.sum(a, src), KvBenchCheck.sum(b, new int[] {6, 0, 2}));
      // one flipped byte in the last layer's V
      MemorySegment v = b.buffers.get(layout.bufferOf(2, 1));
      long at = layout.offset(2, 1, 2) + 95;
      v.set(ValueLayout.JAVA_BYTE, at, (byte) ~v.get(ValueLayout.JAVA_BYTE, at));
      assertNotEquals(KvBenchCheck.sum(a, src), KvBenchCheck.sum(b, dst));
      // a fresh seed gives other bytes, so a migration that moved nothing is seen
      long before = KvBenchCheck.sum(a, src);
      KvBenchCheck.fill(a, src, 43);
      assertNotEquals(before, KvBenchCheck.sum(a, src));
    }
  }

  @Test
  void aShortRunMigratesChecksAndWritesJsonAndPlot(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("kv.json"), svg = dir.resolve("kv.svg");
    PrintStream saved = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    int code;
    // the target JVM lives for seconds: C1 alone and the serial collector cut its CPU time
    System.setProperty(KvBenchSetup.CHILD_OPTIONS_PROPERTY, "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    try {
      code = Mori4jCommand.commandLine().execute("kv-bench", "--model", "llama3-8b", "--tokens", "64", "--iters", "1", "--warmup", "0",
          "--naive-iters", "1", "--json", json.toString(), "--plot", svg.toString());
    } finally {
      System.setOut(saved);
      System.clearProperty(KvBenchSetup.CHILD_OPTIONS_PROPERTY);
    }
    String out = buf.toString(StandardCharsets.UTF_8);
    saved.print(out);
    assertEquals(0, code, out);
    JsonNode rows = new ObjectMapper().readTree(json.toFile());
    assertEquals(3, rows.size(), rows.toString());
    String[] modes = {"push", "pull", "stream"};
    for (int i = 0; i < 3; i++) {
      JsonNode r = rows.get(i);
      assertEquals(modes[i], r.get("mode").asText());
      assertEquals("llama3-8b", r.get("model").asText());
      assertEquals("tcp", r.get("backend").asText());
      assertEquals(64, r.get("tokens").asInt());
      assertEquals(4, r.get("blocks").asInt());
      assertEquals(4L * 32 * 2 * 16 * 8 * 128 * 2, r.get("bytes").asLong());
      assertEquals(4 * 32 * 2, r.get("verifiedSlots").asInt(), "every slot checked: " + r);
      for (String f : new String[] {"transfers", "avgBwGBps", "p50LatUs", "p99LatUs", "contiguousAvgBwGBps", "single64MiBAvgBwGBps"})
        assertTrue(r.get(f).isNumber() && r.get(f).asDouble() > 0, f + " in " + r);
    }
    assertTrue(rows.get(2).get("exposedP50Us").asDouble() > 0 && rows.get(2).get("layerP50Us").asDouble() > 0, rows.get(2).toString());
    JsonNode st = rows.get(2);
    assertTrue(st.get("rawLayerP50Us").asDouble() > 0 && st.get("lastLayer").get("doneUs").asDouble() > 0, st.toString());
    assertTrue(st.get("pacing").asText().startsWith("model: llama3-8b prefill of 64 tokens"), st.toString());
    assertTrue(out.contains("landed notification to the receiver"), out);
    assertTrue(out.contains("bytes checked (256 slots)"), out);
    String plot = Files.readString(svg);
    assertTrue(plot.contains("<svg") && plot.contains("kv push") && plot.contains("contiguous transfer, same bytes"), plot.substring(0, Math.min(400, plot.length())));
  }
}
