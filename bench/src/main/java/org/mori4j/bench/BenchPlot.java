package org.mori4j.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.mori4j.bench.plot.Plot;
import org.mori4j.bench.plot.PlotSeries;
import org.mori4j.bench.plot.RunInfo;
import org.mori4j.bench.plot.SvgPlot;

/**
 * {@code --plot FILE.svg} of the bench commands: the rows of this run, each measured row kind a series, beside
 * the baselines of the same run, drawn by {@link SvgPlot} with this run's date, machine and commit.
 */
final class BenchPlot {
  private final List<PlotSeries> series = new ArrayList<>();

  /** Checks the flag before anything is measured: an SVG file, so that a long run does not end on a wrong name. */
  static void check(Path file, Function<String, ? extends RuntimeException> usage) {
    if (file == null) return;
    String name = file.getFileName() == null ? "" : file.getFileName().toString();
    if (!name.toLowerCase(java.util.Locale.ROOT).endsWith(".svg")) throw usage.apply("--plot must name an .svg file: " + file);
  }

  /** mori4j's rows under {@code name} (one series per batch size when there are several). */
  BenchPlot measured(String name, List<ResultRow> rows) {
    if (!rows.isEmpty()) series.addAll(PlotSeries.measured(name, rows));
    return this;
  }

  BenchPlot baselines(List<BaselineRow> rows) {
    series.addAll(PlotSeries.baselines(rows));
    return this;
  }

  /** Writes the SVG and says so on stderr, where the bench says where its JSON went. */
  void write(Path file, String title, String machineExtra) throws IOException {
    SvgPlot.write(new Plot(title, RunInfo.current(machineExtra), series), file);
    System.err.println("wrote " + file);
  }
}
