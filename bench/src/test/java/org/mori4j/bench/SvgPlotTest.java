package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.bench.plot.Plot;
import org.mori4j.bench.plot.PlotPoint;
import org.mori4j.bench.plot.PlotSeries;
import org.mori4j.bench.plot.RunInfo;
import org.mori4j.bench.plot.SvgPlot;
import picocli.CommandLine;

/** The SVG plot: well formed, one series group per measured row kind and per baseline, one marker per figure. */
class SvgPlotTest {
  private static ResultRow row(long size, double bw, double p50, double p99) {
    return new ResultRow(size, 1, size, bw, bw, p50, p50, p50, p99);
  }

  @Test
  void oneSeriesPerRowKindAndBaselineAndOneMarkerPerFigure() throws Exception {
    List<ResultRow> ours = List.of(row(4096, 0.1, 40, 90), row(1 << 20, 2.5, 400, 900), row(64 << 20, 4.2, 16000, 21000));
    List<ResultRow> tcp = List.of(row(4096, 0.12, 35, 80), row(64 << 20, 4.7, 14000, 19000));
    List<BaselineRow> base = List.of(
        new BaselineRow("nio-stream", row(4096, 0.18, 22, 40), "1 blocking SocketChannel"),
        new BaselineRow("nio-stream", row(1 << 20, 6.0, 176, 213), "1 blocking SocketChannel"),
        new BaselineRow("nio-pingpong 4KiB", row(4096, 0.16, 24.5, 46.9), "10000 round trips"),
        new BaselineRow("iperf3 single-stream", ResultRow.bandwidthOnly(0, 24999231382L, 5.0), "iperf3 -c 127.0.0.1"),
        new BaselineRow("ucx tag_bw", new ResultRow(64 << 20, 1, 64 << 20, Double.NaN, 5.45, Double.NaN, 12313.18, Double.NaN, Double.NaN), "UCX"),
        BaselineRow.missing("ucx tag_lat", "ucx_perftest not installed"),
        new BaselineRow("odd <name> & \"quotes\"", row(8, 0.001, 9, 9), "a note with \u0001 control & <markup>"));
    List<PlotSeries> series = new ArrayList<>(PlotSeries.measured("rdma (software provider: emulation)", ours));
    series.addAll(PlotSeries.measured("tcp", tcp));
    series.addAll(PlotSeries.baselines(base));
    String svg = SvgPlot.render(new Plot("mori4j write <over> rdma & tcp", new RunInfo("2026-11-24 12:00 UTC", "test machine", "abcdef0"), series));

    SvgDocument doc = SvgDocument.parse(svg);
    // 2 measured row kinds + 6 distinct baselines (nio-stream's two rows are one series)
    assertEquals(List.of("rdma (software provider: emulation)", "tcp", "nio-stream", "nio-pingpong 4KiB", "iperf3 single-stream", "ucx tag_bw",
        "ucx tag_lat", "odd <name> & \"quotes\""), List.copyOf(doc.series().keySet()));
    assertEquals(List.copyOf(doc.series().keySet()), doc.legend());
    assertEquals("measured", doc.series().get("tcp").getAttribute("data-kind"));
    assertEquals("baseline", doc.series().get("nio-stream").getAttribute("data-kind"));
    for (String stat : List.of("p50", "p99")) assertEquals(3, doc.points("rdma (software provider: emulation)", "latency", stat));
    assertEquals(3, doc.points("rdma (software provider: emulation)", "bandwidth", "bw"));
    assertEquals(2, doc.points("tcp", "bandwidth", "bw"));
    assertEquals(2, doc.points("nio-stream", "latency", "p99"));
    assertEquals(1, doc.points("nio-pingpong 4KiB", "latency", "p50"));
    // iperf3 has no size: a level across the bandwidth panel, no marker
    assertEquals(1, doc.elements("iperf3 single-stream", "line", "level"));
    assertEquals(0, doc.points("iperf3 single-stream", "bandwidth", "bw"));
    // UCX tag_bw reports bandwidth only, tag_lat was not measured: in the legend, nothing drawn
    assertEquals(1, doc.points("ucx tag_bw", "bandwidth", "bw"));
    assertEquals(0, doc.points("ucx tag_bw", "latency", "p50"));
    assertEquals(0, doc.points("ucx tag_lat", "bandwidth", "bw") + doc.points("ucx tag_lat", "latency", "p50"));
    assertTrue(svg.contains("ucx tag_lat (baseline) \u2014 not measured: ucx_perftest not installed"), "legend says why");
    // lines: one per statistic of a series with two points or more
    assertEquals(3, doc.elements("rdma (software provider: emulation)", "polyline", "line"));
    assertTrue(svg.contains("2026-11-24 12:00 UTC \u00b7 test machine \u00b7 commit abcdef0"));
    assertTrue(svg.contains("mori4j write &lt;over&gt; rdma &amp; tcp"));
  }

  @Test
  void batchSweepsAreOneSeriesPerBatchSize() {
    List<ResultRow> rows = List.of(new ResultRow(4096, 1, 4096, 1, 1, 1, 1, 1, 1), new ResultRow(4096, 8, 32768, 1, 1, 1, 1, 1, 1),
        new ResultRow(8192, 8, 65536, 1, 1, 1, 1, 1, 1));
    List<PlotSeries> s = PlotSeries.measured("mori4j", rows);
    assertEquals(List.of("mori4j x 1", "mori4j x 8"), s.stream().map(PlotSeries::name).toList());
    assertEquals(2, s.get(1).points().size());
    assertThrows(IllegalArgumentException.class, () -> new Plot("t", new RunInfo("d", "m", "c"), List.of(s.getFirst(), s.getFirst())));
  }

  @Test
  void emptyPlotIsStillAWellFormedSvgSayingNoData() throws Exception {
    String svg = SvgPlot.render(new Plot("nothing", new RunInfo("d", "m", "c"), List.of(PlotSeries.baselines(
        List.of(BaselineRow.missing("iperf3 single-stream", "iperf3 not installed"))).getFirst())));
    SvgDocument doc = SvgDocument.parse(svg);
    assertEquals(List.of("iperf3 single-stream"), List.copyOf(doc.series().keySet()));
    assertTrue(svg.contains(">no data</text>"));
  }

  @Test
  void recordedRunIsPlottedWithItsBaselinesAndMachine(@TempDir Path dir) throws Exception {
    Path run = dir.resolve("20261123T1749Z-732e56c");
    Files.createDirectories(run);
    Files.writeString(run.resolve("write-sweep.json"), JsonRowsFormatTest.resource("recorded-write-sweep.json"));
    Files.writeString(run.resolve("write-sweep.baselines.json"), JsonRowsFormatTest.resource("recorded-write-sweep.baselines.json"));
    Files.writeString(run.resolve("machine.txt"), "date:    2026-11-23T17:49:27Z\ncommit:  732e56c1d527f0977afe41762307a7ce9988a95c\n"
        + "host:    Linux 6.18.44 x86_64, 2 CPUs, AMD EPYC\n");
    Files.writeString(run.resolve("write-sweep.txt"), "== mori4j bench --all\n+------+\n|   mori4j write over tcp, cpu memory   |\n+--+\n");
    Path svg = dir.resolve("out/sweep.svg");
    assertEquals(0, execute("plot", "--json", run.resolve("write-sweep.json").toString(), "--out", svg.toString()).code());
    SvgDocument doc = SvgDocument.parse(svg);
    assertEquals(List.of("mori4j", "nio-stream", "nio-pingpong 4KiB", "iperf3 single-stream", "ucx tag_bw", "ucx tag_lat"),
        List.copyOf(doc.series().keySet()));
    assertEquals(15, doc.points("mori4j", "bandwidth", "bw")); // 4 KiB .. 64 MiB
    assertEquals(15, doc.points("nio-stream", "latency", "p50"));
    String text = Files.readString(svg);
    assertTrue(text.contains("2026-11-23 17:49 UTC \u00b7 Linux 6.18.44 x86_64, 2 CPUs, AMD EPYC \u00b7 commit 732e56c"), text.substring(0, 600));
    assertTrue(text.contains(">mori4j write over tcp, cpu memory</text>"));

    // --dir: one SVG per main file, named after it; a file that is no results file is skipped, not fatal
    Files.writeString(run.resolve("jmh.json"), "[{\"benchmark\": \"x\"}]");
    Files.writeString(run.resolve("rdma.json"), JsonRowsFormatTest.resource("recorded-rdma-write-64m.json"));
    Files.writeString(run.resolve("rdma.tcp.json"), JsonRowsFormatTest.resource("recorded-rdma-write-64m.tcp.json"));
    assertEquals(0, execute("plot", "--dir", run.toString()).code());
    assertTrue(Files.isRegularFile(run.resolve("write-sweep.svg")));
    assertTrue(Files.notExists(run.resolve("jmh.svg")));
    assertEquals(List.of("rdma (software provider: emulation)", "tcp"), List.copyOf(SvgDocument.parse(run.resolve("rdma.svg")).series().keySet()));
  }

  @Test
  void badPlotArgumentsAreUsageErrors(@TempDir Path dir) {
    assertUsage(execute("bench", "--plot", "run.png"), "--plot must name an .svg file: run.png");
    assertUsage(execute("cluster-bench", "--plot", "x.pdf"), "--plot must name an .svg file");
    assertUsage(execute("plot"), "give either --json FILE (with --out) or --dir FOLDER");
    assertUsage(execute("plot", "--json", dir.resolve("none.json").toString(), "--out", "x.svg"), "--json: no such file", "none.json");
    assertUsage(execute("plot", "--json", "a.json"), "--json needs --out FILE.svg");
    assertUsage(execute("plot", "--dir", dir.resolve("nowhere").toString()), "--dir is not a folder");
  }

  private record Outcome(int code, String err) {}

  private static Outcome execute(String... args) {
    CommandLine cl = Mori4jCommand.commandLine();
    StringWriter err = new StringWriter();
    cl.setErr(new PrintWriter(err, true));
    cl.setOut(new PrintWriter(new StringWriter(), true));
    return new Outcome(cl.execute(args), err.toString());
  }

  private static void assertUsage(Outcome o, String... fragments) {
    assertEquals(2, o.code(), o.err());
    String first = o.err().lines().findFirst().orElse("");
    for (String f : fragments) assertTrue(first.contains(f), "expected '" + f + "' in: " + first);
  }

  @Test
  void pointsWithoutSizeOrFigureAreKeptButNotDrawn() {
    PlotSeries s = new PlotSeries("s", PlotSeries.Kind.BASELINE, List.of(new PlotPoint(0, Double.NaN, 5, 5)), "");
    assertTrue(s.empty());
    assertThrows(IllegalArgumentException.class, () -> new PlotPoint(-1, 1, 1, 1));
  }
}
