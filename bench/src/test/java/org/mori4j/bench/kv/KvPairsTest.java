package org.mori4j.bench.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.bench.Mori4jCommand;

/**
 * kv-bench's several pairs at once (issue 16, item 3): how options make pairs and what they refuse, and a tiny TCP
 * run of two prefill engines pushing to two decode engines (one JVM each) at once, every destination slot checked.
 */
class KvPairsTest {

  @Test
  void pairsAreIToIAndMismatchedListsAreRefusedNamingBoth() {
    assertNull(KvPairs.of("tcp", null, null, null), "no list and no --pairs: the one-pair run");
    KvPairs four = KvPairs.of("xgmi", "0,1", "2,3", null);
    assertEquals(List.of(new KvPairs.Pair(0, 0, 2), new KvPairs.Pair(1, 1, 3)), four.pairs());
    assertFalse(four.sharesDevice());
    assertFalse(KvPairs.of("xgmi", "0,1", "1,0", null).sharesDevice(), "0->1 and 1->0 at once: each GPU sends once and receives once");
    assertTrue(KvPairs.of("xgmi", "0,0", "0,0", 2).sharesDevice(), "one GPU for every engine");
    assertTrue(KvPairs.of("xgmi", "0,1", "2,2", null).sharesDevice(), "two decode engines on GPU2");
    assertTrue(KvPairs.of("xgmi", "0", "0", null).sharesDevice(), "a pair within one GPU");
    KvPairs tcp = KvPairs.of("tcp", null, null, 3);
    assertEquals(3, tcp.size());
    assertEquals("prefill 2 -> decode 2 (CPU)", tcp.pairs().get(2).route());
    assertFalse(tcp.sharesDevice());

    String[][] cases = {
        {"--backend", "xgmi", "--prefill-gpus", "0,1", "--decode-gpus", "2"}, {"--prefill-gpus 0,1 has 2", "--decode-gpus 2 has 1", "counts must match"},
        {"--backend", "xgmi", "--prefill-gpus", "0,1"}, {"--prefill-gpus 0,1 needs --decode-gpus"},
        {"--backend", "xgmi", "--decode-gpus", "1"}, {"--decode-gpus 1 needs --prefill-gpus"},
        {"--prefill-gpus", "0", "--decode-gpus", "1"}, {"need --backend xgmi", "tcp"},
        {"--backend", "xgmi", "--prefill-gpus", "0,x", "--decode-gpus", "1,2"}, {"--prefill-gpus '0,x'", "'x' is not a device index"},
        {"--backend", "xgmi", "--prefill-gpus", "0", "--decode-gpus", "-1"}, {"--decode-gpus -1", "negative"},
        {"--backend", "xgmi", "--prefill-gpus", "0,1", "--decode-gpus", "2,3", "--pairs", "3"}, {"--pairs 3", "makes 2 pair(s)"},
        {"--backend", "xgmi", "--pairs", "2"}, {"--pairs 2 with --backend xgmi", "--prefill-gpus"},
        {"--pairs", "0"}, {"--pairs must be in 1..16: 0"},
        {"--pairs", "17"}, {"--pairs must be in 1..16: 17"},
        {"--pairs", "2", "--plot", "x.svg"}, {"--plot", "one pair"},
    };
    for (int i = 0; i < cases.length; i += 2) {
      String why = KvBenchCommandTest.problem(cases[i]);
      assertTrue(why != null, String.join(" ", cases[i]) + " was accepted");
      for (String part : cases[i + 1]) assertTrue(why.contains(part), String.join(" ", cases[i]) + ": " + why);
    }
    assertNull(KvBenchCommandTest.problem("--pairs", "2"));
    assertNull(KvBenchCommandTest.problem("--backend", "xgmi", "--prefill-gpus", "0,1", "--decode-gpus", "2,3", "--pairs", "2"));
    assertThrows(IllegalArgumentException.class, () -> KvPairs.of("xgmi", "", "1", null));
  }

  @Test
  void twoPrefillEnginesPushToTwoDecodeEnginesAtOnceOverTcp(@TempDir Path dir) throws Exception {
    Path json = dir.resolve("kv-pairs.json");
    PrintStream saved = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    int code;
    // the two decode JVMs live for seconds: C1 alone and the serial collector halve their CPU time
    System.setProperty(KvBenchSetup.CHILD_OPTIONS_PROPERTY, "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    try {
      code = Mori4jCommand.commandLine().execute("kv-bench", "--pairs", "2", "--model", "llama3-8b", "--tokens", "64", "--iters", "2", "--warmup", "0",
          "--mode", "push,stream", "--layer-compute-us", "100", "--json", json.toString());
    } finally {
      System.setOut(saved);
      System.clearProperty(KvBenchSetup.CHILD_OPTIONS_PROPERTY);
    }
    String out = buf.toString(StandardCharsets.UTF_8);
    saved.print(out);
    assertEquals(0, code, out);
    assertTrue(out.contains("2 pairs at once") && out.contains("each decode engine in a JVM of its own"), out);
    JsonNode rows = new ObjectMapper().readTree(json.toFile());
    assertEquals(2, rows.size(), rows.toString());
    long perPair = 4L * 32 * 2 * 16 * 8 * 128 * 2; // 4 blocks x 32 layers x K,V x 16 tokens x 8 heads x 128 x bf16
    for (int i = 0; i < 2; i++) {
      JsonNode r = rows.get(i);
      assertEquals(i == 0 ? "push" : "stream", r.get("mode").asText());
      assertEquals("tcp", r.get("backend").asText());
      assertEquals(2, r.get("pairs").asInt());
      assertEquals(perPair, r.get("bytesPerPair").asLong());
      assertEquals(2 * perPair, r.get("bytes").asLong());
      assertEquals(2 * 4 * 32 * 2, r.get("verifiedSlots").asInt(), "every slot of both pairs checked: " + r);
      assertFalse(r.get("sharedDevice").asBoolean());
      for (String f : new String[] {"avgBwGBps", "p50LatUs", "p99LatUs", "contiguousAvgBwGBps", "engineContiguousAvgBwGBps"})
        assertTrue(r.get(f).isNumber() && r.get(f).asDouble() > 0, f + " in " + r);
      assertTrue(r.get("rawCopyAvgBwGBps").isNull(), "no driver copies over TCP: " + r);
      JsonNode per = r.get("perPair");
      assertEquals(2, per.size(), r.toString());
      for (int k = 0; k < 2; k++) {
        assertEquals(k, per.get(k).get("pair").asInt());
        assertTrue(per.get(k).get("p50LatUs").asDouble() > 0 && per.get(k).get("transfers").asInt() > 0, per.get(k).toString());
        // the slowest pair's p99 bounds each pair's own
        assertTrue(per.get(k).get("p99LatUs").asDouble() <= r.get("p99LatUs").asDouble() + 1e-3, r.toString());
      }
    }
    JsonNode st = rows.get(1);
    assertEquals(100, st.get("layerComputeUs").asDouble(), 1e-9);
    assertTrue(st.get("exposedP50Us").asDouble() > 0 && st.get("perPair").get(1).get("exposedP50Us").asDouble() > 0, st.toString());
    // the exposed time's reference: one layer through both pairs at once, and the difference
    assertTrue(st.get("layerP50Us").asDouble() > 0 && st.get("perPair").get(0).get("layerP50Us").asDouble() > 0, st.toString());
    assertEquals(st.get("exposedP50Us").asDouble() - st.get("layerP50Us").asDouble(), st.get("exposedOverLayerUs").asDouble(), 0.01, st.toString());
    assertTrue(rows.get(0).get("layerP50Us").isNull(), rows.get(0).toString());
    assertTrue(rows.get(0).get("exposedP50Us").isNull(), rows.get(0).toString());
    assertTrue(out.contains("bytes checked (512 slots, every pair)"), out);
    assertTrue(out.contains("| llama3-8b | 64 | push | 2 |"), out);
  }
}
