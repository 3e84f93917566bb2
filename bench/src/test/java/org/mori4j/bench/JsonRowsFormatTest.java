package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Jackson writer against the files the hand-written writer produced before it (json-format/ in the test resources,
 * written by the old JsonRows from the rows below) and against files recorded in bench/results: byte for byte.
 */
class JsonRowsFormatTest {
  private static final List<ResultRow> ROWS = List.of(
      new ResultRow(4096, 128, 524288, 5.24288, 4.493884303187706, 100.0, 116.667, 120.0, 130.001),
      new ResultRow(8, 1, 8, 8.888888888888889E-4, 8.888888888888889E-4, 9.0, 9.0, 9.0, 9.0),
      new ResultRow(67108864, 1, 67108864, 4.465847335176267, 3.567532407007884, 15027.129, 18811.00333333333, 18701.658, 22704.223),
      new ResultRow(1, 1, 1, 1e-7, 1.0E10, 0.5, 123456789.125, 3.0, Double.POSITIVE_INFINITY));

  private static final List<BaselineRow> BASELINES = List.of(
      new BaselineRow("iperf3 single-stream", ResultRow.bandwidthOnly(0, 24999231382L, 4.999657289354462), "iperf3 -c 127.0.0.1 -t 5 (loopback, 1 stream)"),
      new BaselineRow("nio-stream", ROWS.get(0), "say \"hi\" \\ back\nslash\ttab\r"),
      new BaselineRow("ünïcode µs → GB/s", ROWS.get(1), ""),
      BaselineRow.missing("ucx tag_lat", "ucx_perftest not installed"),
      new BaselineRow("ucx tag_bw", new ResultRow(67108864, 1, 67108864, Double.NaN, 5.4501625036800005, Double.NaN, 12313.18, Double.NaN, Double.NaN), "UCX"));

  static String resource(String name) throws IOException {
    try (InputStream in = JsonRowsFormatTest.class.getResourceAsStream("/json-format/" + name)) {
      if (in == null) throw new IllegalStateException("missing test resource json-format/" + name);
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  @Test
  void sameBytesAsTheHandWrittenWriter() throws IOException {
    assertEquals(resource("rows.json"), JsonRows.rowsToJson(ROWS));
    assertEquals(resource("empty.json"), JsonRows.rowsToJson(List.of()));
    assertEquals(resource("backend-rdma.json"), JsonRows.rowsToJson(ROWS, "rdma", "software", true));
    assertEquals(resource("backend-tcp.json"), JsonRows.rowsToJson(ROWS.subList(0, 2), "tcp", null, false));
    assertEquals(resource("empty-backend.json"), JsonRows.rowsToJson(List.of(), "rdma", "ibverbs", false));
    assertEquals(resource("baselines.json"), JsonRows.baselinesToJson(BASELINES));
    assertEquals(resource("empty-baselines.json"), JsonRows.baselinesToJson(List.of()));
  }

  /** The databind declared in bench/pom.xml and the core Pekko brings must be one release, or Jackson may fail at run time. */
  @Test
  void jacksonCoreAndDatabindAreTheSameRelease() {
    assertEquals(com.fasterxml.jackson.core.json.PackageVersion.VERSION.toString(), com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION.toString());
  }

  @Test
  void recordedResultsReadBackAndWriteTheSameBytes(@TempDir Path dir) throws IOException {
    for (String name : List.of("recorded-write-sweep.json", "recorded-write-sweep.baselines.json", "recorded-rdma-write-64m.json",
        "recorded-rdma-write-64m.tcp.json", "recorded-shmem-bench.json")) {
      String recorded = resource(name);
      Path f = dir.resolve(name);
      Files.writeString(f, recorded);
      List<JsonRows.Entry> entries = JsonRows.read(f);
      assertTrue(entries.size() >= 1, name);
      JsonRows.Entry first = entries.getFirst();
      String again;
      if (first.series() != null) {
        again = JsonRows.baselinesToJson(entries.stream().map(JsonRows.Entry::baseline).toList());
      } else if (first.backend() != null) {
        again = JsonRows.rowsToJson(entries.stream().map(JsonRows.Entry::row).toList(), first.backend(), first.provider(), first.emulation());
      } else {
        again = JsonRows.rowsToJson(entries.stream().map(JsonRows.Entry::row).toList());
      }
      // files recorded before the "baseline" key existed: the same bytes once the key is taken out again
      assertEquals(recorded, again.replaceAll("\"baseline\": \"[^\"]*\", ", ""), name);
    }
  }

  @Test
  void readingKeepsMissingBaselinesAndBackends(@TempDir Path dir) throws IOException {
    Path f = dir.resolve("b.json");
    Files.writeString(f, JsonRows.baselinesToJson(BASELINES));
    List<JsonRows.Entry> e = JsonRows.read(f);
    assertEquals(5, e.size());
    assertNull(e.get(3).row());
    assertEquals("ucx_perftest not installed", e.get(3).note());
    assertEquals(0, e.get(0).row().msgSize());
    assertTrue(Double.isNaN(e.get(0).row().p50LatUs()));
    Path r = dir.resolve("r.json");
    Files.writeString(r, JsonRows.rowsToJson(ROWS, "rdma", "software", true));
    JsonRows.Entry rdma = JsonRows.read(r).getFirst();
    assertEquals("rdma", rdma.backend());
    assertEquals("software", rdma.provider());
    assertEquals(Boolean.TRUE, rdma.emulation());
  }

  @Test
  void notAResultsFileIsRefusedNamingTheFile(@TempDir Path dir) throws IOException {
    Path obj = dir.resolve("obj.json");
    Files.writeString(obj, "{\"msgSize\": 1}");
    assertTrue(assertThrows(IllegalArgumentException.class, () -> JsonRows.read(obj)).getMessage().contains("obj.json"));
    Path broken = dir.resolve("broken.json");
    Files.writeString(broken, "[{\"msgSize\": ");
    assertTrue(assertThrows(IllegalArgumentException.class, () -> JsonRows.read(broken)).getMessage().contains("broken.json is not JSON"));
    Path other = dir.resolve("jmh.json");
    Files.writeString(other, "[{\"benchmark\": \"x\"}]");
    assertTrue(assertThrows(IllegalArgumentException.class, () -> JsonRows.read(other)).getMessage().contains("not a mori4j results file"));
  }

  /**
   * The one place the bytes may differ from the old writer: control characters other than newline, return and tab, which
   * Jackson writes as a backslash with b, f or u00XX (upper-case hex) where the old writer wrote u00xx (lower-case).
   * The JSON value is the same.
   */
  @Test
  void otherControlCharactersAreEscapedToTheSameValue() throws IOException {
    String note = "bell\u0007 back\b feed\f unit\u001f";
    String json = JsonRows.baselinesToJson(List.of(new BaselineRow("s", null, note)));
    assertEquals(note, new ObjectMapper().readTree(json).get(0).get("note").asText());
  }
}
