package org.mori4j.bench.plot;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What one SVG shows: a title (what was measured), the run it comes from ({@link RunInfo}: date, machine,
 * commit) and the series, measured rows first and then the baselines of the same run. {@link SvgPlot} draws it.
 *
 * @param title  what was measured, e.g. the bench table's title
 * @param run    when, where and from which commit
 * @param series the lines; names unique
 */
public record Plot(String title, RunInfo run, List<PlotSeries> series) {
  public Plot {
    Objects.requireNonNull(title, "title");
    Objects.requireNonNull(run, "run");
    series = List.copyOf(series);
    Set<String> names = new HashSet<>();
    for (PlotSeries s : series) {
      if (!names.add(s.name())) throw new IllegalArgumentException("two series named '" + s.name() + "' in one plot");
    }
  }
}
