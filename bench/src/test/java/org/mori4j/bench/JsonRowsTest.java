package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonRowsTest {
  private static final Set<String> KEYS = Set.of("msgSize", "batchSize", "totalBytes", "maxBwGBps", "avgBwGBps",
      "minLatUs", "avgLatUs", "p50LatUs", "p99LatUs");

  private static Set<String> keysOf(String object) {
    Set<String> keys = new LinkedHashSet<>();
    Matcher m = Pattern.compile("\"(\\w+)\":").matcher(object);
    while (m.find()) keys.add(m.group(1));
    return keys;
  }

  @Test
  void mainFileIsAnArrayOfRowsWithExactlyTheIssueKeys(@TempDir Path dir) throws Exception {
    List<ResultRow> rows = List.of(ResultRow.fromLatencies(4096, 128, new long[] {100_000, 120_000}),
        ResultRow.fromLatencies(8, 1, new long[] {9_000}));
    Path f = dir.resolve("out/run.json");
    JsonRows.write(f, JsonRows.rowsToJson(rows));
    String json = Files.readString(f).trim();
    assertTrue(json.startsWith("[") && json.endsWith("]"), json);
    List<String> objects = Pattern.compile("\\{[^}]*}").matcher(json).results().map(r -> r.group()).toList();
    assertEquals(2, objects.size());
    for (String o : objects) assertEquals(KEYS, keysOf(o), o);
    assertTrue(objects.getFirst().contains("\"msgSize\": 4096"));
    assertTrue(objects.getFirst().contains("\"totalBytes\": 524288"));
    assertFalse(json.contains("NaN") || json.contains("Infinity"));
  }

  @Test
  void baselinesGoToTheirOwnFileWithNullsForMissingFigures() {
    assertEquals(Path.of("r/run.baselines.json"), JsonRows.baselinesPath(Path.of("r/run.json")));
    assertEquals(Path.of("run.baselines.json"), JsonRows.baselinesPath(Path.of("run")));
    assertEquals(Path.of("r/run.cpu.json"), JsonRows.cpuRowsPath(Path.of("r/run.json")));
    String json = JsonRows.baselinesToJson(List.of(
        new BaselineRow("iperf3", ResultRow.bandwidthOnly(0, 10, 3.25), "say \"hi\"\n"),
        BaselineRow.missing("ucx tag_lat", "ucx_perftest not installed")));
    assertTrue(json.contains("\"series\": \"iperf3\""), json);
    assertTrue(json.contains("\"avgBwGBps\": 3.25"), json);
    assertTrue(json.contains("\"maxBwGBps\": null"), json);
    assertTrue(json.contains("\"note\": \"say \\\"hi\\\"\\n\""), json);
    assertTrue(json.contains("\"msgSize\": null, \"batchSize\": null, \"totalBytes\": null"), json);
  }

  @Test
  void emptyArray() {
    assertEquals("[]\n", JsonRows.rowsToJson(List.of()));
  }
}
