package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ResultTableTest {
  @Test
  void humanSizes() {
    assertEquals("8 B", HumanSize.format(8));
    assertEquals("4 KiB", HumanSize.format(4096));
    assertEquals("1.5 KiB", HumanSize.format(1536));
    assertEquals("64 MiB", HumanSize.format(64L << 20));
    assertEquals("8 GiB", HumanSize.format(8L << 30));
    assertEquals(67108864L, HumanSize.parse("64M"));
    assertEquals(4096L, HumanSize.parse("4 KiB"));
    assertEquals(4096L, HumanSize.parse("4096"));
  }

  @Test
  void tableLinesAreAlignedAndCarryEveryColumn() {
    List<ResultRow> rows = List.of(
        ResultRow.fromLatencies(8, 128, new long[] {10_000, 20_000}),
        ResultRow.fromLatencies(64L << 20, 1, new long[] {20_000_000, 22_000_000}));
    String t = ResultTable.render("mori4j write", rows);
    List<String> lines = t.lines().toList();
    int width = lines.getFirst().length();
    for (String l : lines) assertEquals(width, l.length(), "line not aligned: " + l);
    assertTrue(lines.get(1).contains("mori4j write"));
    for (String col : ResultTable.COLUMNS) assertTrue(lines.get(3).contains(col), "missing column " + col);
    assertTrue(t.contains(" 64 MiB |"), t);
    assertTrue(t.contains("1 KiB"), t); // total of 8 B x 128
    assertEquals(2 + 3 + 2 + 1, lines.size()); // title box, header, two rows, rules
  }

  @Test
  void missingFiguresPrintAsDash() {
    BaselineRow iperf = new BaselineRow("iperf3", ResultRow.bandwidthOnly(0, 1000, 3.5), "loopback");
    BaselineRow ucx = BaselineRow.missing("ucx tag_bw", "ucx_perftest not installed");
    String t = ResultTable.renderBaselines("Baselines (same run)", List.of(iperf, ucx));
    String iperfLine = t.lines().filter(l -> l.startsWith("| iperf3")).findFirst().orElseThrow();
    assertTrue(iperfLine.contains("3.50"), iperfLine);
    assertTrue(iperfLine.contains(" - |"), iperfLine);
    assertTrue(t.contains("ucx_perftest not installed"), t);
    int width = t.lines().findFirst().orElseThrow().length();
    t.lines().forEach(l -> assertEquals(width, l.length(), l));
  }
}
