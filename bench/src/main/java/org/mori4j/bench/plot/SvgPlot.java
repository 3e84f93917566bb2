package org.mori4j.bench.plot;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import org.mori4j.bench.HumanSize;

/**
 * Draws a {@link Plot} as a self-contained SVG for a browser: two panels side by side, average bandwidth by
 * message size and p50/p99 latency by message size, both axes logarithmic; one group
 * {@code <g class="series" data-name=... data-kind=...>} per series holding its lines and its markers
 * ({@code <circle class="point" data-panel=... data-stat=...>}, each with its value as a tooltip); a legend below
 * with one entry per series, baselines that were not measured included with the reason. A figure without a size
 * (an iperf3 stream) is a dashed level across the bandwidth panel. Measured series are drawn bold with filled
 * markers, baselines thin with hollow ones.
 */
public final class SvgPlot {
  private static final String[] COLOURS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
      "#bcbd22", "#17becf"};
  private static final int WIDTH = 1200;
  private static final int TOP = 96;
  private static final int BOTTOM = 416;
  private static final int PANEL_WIDTH = 460;
  private static final int[] PANEL_LEFT = {90, 690};
  private static final int LEGEND_TOP = 478;
  private static final int LEGEND_ROW = 20;

  private SvgPlot() {}

  /** Writes the SVG to {@code file}, creating its folder. */
  public static void write(Plot plot, Path file) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) Files.createDirectories(parent);
    Files.writeString(file, render(plot), StandardCharsets.UTF_8);
  }

  /** The SVG document. */
  public static String render(Plot plot) {
    List<PlotSeries> series = plot.series();
    int legendRows = (series.size() + 1) / 2;
    int height = LEGEND_TOP + Math.max(1, legendRows) * LEGEND_ROW + 16;
    Svg svg = new Svg();
    svg.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
    svg.open("svg", "xmlns", "http://www.w3.org/2000/svg", "width", Integer.toString(WIDTH), "height", Integer.toString(height), "viewBox",
        "0 0 " + WIDTH + " " + height, "font-family", "DejaVu Sans, Helvetica, Arial, sans-serif", "font-size", "12");
    svg.text("title", plot.title() + " (" + plot.run().subtitle() + ")");
    svg.empty("rect", "width", Integer.toString(WIDTH), "height", Integer.toString(height), "fill", "white");
    // a long title (the bench's table titles reach 150 characters) gets a smaller font rather than running off the page
    int titleSize = Math.max(11, Math.min(18, 18 * 100 / Math.max(1, plot.title().length())));
    svg.text("text", plot.title(), "class", "title", "x", "20", "y", "30", "font-size", Integer.toString(titleSize), "font-weight", "bold");
    svg.text("text", plot.run().subtitle(), "class", "subtitle", "x", "20", "y", "52", "fill", "#444");

    List<Double> sizes = new ArrayList<>();
    List<Double> bandwidths = new ArrayList<>();
    List<Double> latencies = new ArrayList<>();
    for (PlotSeries s : series) {
      for (PlotPoint p : s.points()) {
        if (p.hasBandwidth()) bandwidths.add(p.bandwidthGBps());
        if (p.sizeBytes() > 0 && (p.hasBandwidth() || p.hasLatency())) sizes.add((double) p.sizeBytes());
        if (p.sizeBytes() > 0) {
          latencies.add(p.p50Us());
          latencies.add(p.p99Us());
        }
      }
    }
    // a plot of size-less figures only (iperf3 alone) still gets a size axis: the bench's usual range
    if (sizes.isEmpty()) sizes = List.of(4096.0, 64.0 * (1 << 20));
    LogScale[] x = new LogScale[2];
    for (int i = 0; i < 2; i++) x[i] = LogScale.over(sizes, 1.4, PANEL_LEFT[i], PANEL_LEFT[i] + PANEL_WIDTH);
    LogScale bw = LogScale.over(bandwidths, 1.3, BOTTOM, TOP);
    LogScale lat = LogScale.over(latencies, 1.3, BOTTOM, TOP);
    panel(svg, "bandwidth", "Bandwidth by message size", "average bandwidth (GB/s, log scale)", x[0], bw, 0);
    panel(svg, "latency", "Latency by message size: p50 solid, p99 dashed", "latency per iteration (\u00b5s, log scale)", x[1], lat, 1);

    for (int i = 0; i < series.size(); i++) {
      PlotSeries s = series.get(i);
      String colour = COLOURS[i % COLOURS.length];
      boolean measured = s.kind() == PlotSeries.Kind.MEASURED;
      svg.open("g", "class", "series", "data-name", s.name(), "data-kind", measured ? "measured" : "baseline", "data-points",
          Integer.toString(s.points().size()), "stroke", colour, "fill", "none", "stroke-width", measured ? "2.5" : "1.5");
      if (bw != null) {
        curve(svg, s, "bandwidth", "bw", x[0], bw, PlotPoint::bandwidthGBps, colour, measured, null, " GB/s");
        for (PlotPoint p : s.points()) {
          if (p.sizeBytes() != 0 || !p.hasBandwidth()) continue;
          double y = bw.map(p.bandwidthGBps());
          svg.withTooltip("line", s.name() + ": " + fmt(p.bandwidthGBps()) + " GB/s (no message size)", "class", "level", "data-panel", "bandwidth",
              "x1", Integer.toString(PANEL_LEFT[0]), "x2", Integer.toString(PANEL_LEFT[0] + PANEL_WIDTH), "y1", Svg.num(y), "y2", Svg.num(y),
              "stroke-dasharray", "2 4");
        }
      }
      if (lat != null) {
        curve(svg, s, "latency", "p50", x[1], lat, PlotPoint::p50Us, colour, measured, null, " \u00b5s");
        curve(svg, s, "latency", "p99", x[1], lat, PlotPoint::p99Us, colour, measured, "6 4", " \u00b5s");
      }
      svg.close("g");
    }
    legend(svg, series);
    svg.close("svg");
    return svg.toString();
  }

  /** Axes, grid, ticks and labels of one panel; "no data" when nothing of this kind was measured. */
  private static void panel(Svg svg, String name, String title, String yLabel, LogScale x, LogScale y, int index) {
    int left = PANEL_LEFT[index];
    int right = left + PANEL_WIDTH;
    svg.open("g", "class", "panel", "data-panel", name);
    svg.text("text", title, "x", Integer.toString(left), "y", Integer.toString(TOP - 14), "font-size", "14", "font-weight", "bold");
    svg.empty("rect", "x", Integer.toString(left), "y", Integer.toString(TOP), "width", Integer.toString(PANEL_WIDTH), "height",
        Integer.toString(BOTTOM - TOP), "fill", "none", "stroke", "#888");
    for (long t : x.binaryTicks(9)) {
      String px = Svg.num(x.map(t));
      svg.empty("line", "x1", px, "x2", px, "y1", Integer.toString(TOP), "y2", Integer.toString(BOTTOM), "stroke", "#e4e4e4");
      svg.text("text", HumanSize.format(t), "x", px, "y", Integer.toString(BOTTOM + 18), "text-anchor", "middle");
    }
    svg.text("text", "message size (bytes per transfer, log scale)", "x", Integer.toString(left + PANEL_WIDTH / 2), "y", Integer.toString(BOTTOM + 40),
        "text-anchor", "middle");
    if (y == null) {
      svg.text("text", "no data", "x", Integer.toString(left + PANEL_WIDTH / 2), "y", Integer.toString((TOP + BOTTOM) / 2), "text-anchor", "middle",
          "fill", "#888");
    } else {
      for (double t : y.decimalTicks(10)) {
        String py = Svg.num(y.map(t));
        svg.empty("line", "x1", Integer.toString(left), "x2", Integer.toString(right), "y1", py, "y2", py, "stroke", "#e4e4e4");
        svg.text("text", LogScale.label(t), "x", Integer.toString(left - 6), "y", py, "text-anchor", "end", "dominant-baseline", "middle");
      }
    }
    int lx = left - 58;
    int ly = (TOP + BOTTOM) / 2;
    svg.text("text", yLabel, "x", Integer.toString(lx), "y", Integer.toString(ly), "text-anchor", "middle",
        "transform", "rotate(-90 " + lx + " " + ly + ")");
    svg.close("g");
  }

  /** One statistic of a series: a line through its sized points in size order, and a marker with a tooltip per point. */
  private static void curve(Svg svg, PlotSeries s, String panel, String stat, LogScale x, LogScale y, ToDoubleFunction<PlotPoint> value,
                            String colour, boolean measured, String dash, String unit) {
    List<PlotPoint> pts = s.points().stream()
        .filter(p -> p.sizeBytes() > 0 && PlotPoint.usable(value.applyAsDouble(p)))
        .sorted(Comparator.comparingLong(PlotPoint::sizeBytes)).toList();
    if (pts.size() >= 2) {
      StringBuilder coords = new StringBuilder();
      for (PlotPoint p : pts) coords.append(Svg.num(x.map(p.sizeBytes()))).append(',').append(Svg.num(y.map(value.applyAsDouble(p)))).append(' ');
      svg.empty("polyline", "class", "line", "data-panel", panel, "data-stat", stat, "points", coords.toString().trim(), "stroke-dasharray", dash);
    }
    boolean p99 = stat.equals("p99");
    for (PlotPoint p : pts) {
      double v = value.applyAsDouble(p);
      svg.withTooltip("circle", s.name() + ", " + HumanSize.format(p.sizeBytes()) + ": " + (stat.equals("bw") ? "" : stat + " ") + fmt(v) + unit,
          "class", "point", "data-panel", panel, "data-stat", stat, "cx", Svg.num(x.map(p.sizeBytes())), "cy", Svg.num(y.map(v)),
          "r", p99 ? "3" : "4", "fill", measured && !p99 ? colour : "white", "stroke-width", "1.5");
    }
  }

  /** Two columns; each entry a line sample in the series' style, its name, and for a baseline its note as a tooltip. */
  private static void legend(Svg svg, List<PlotSeries> series) {
    svg.open("g", "class", "legend");
    int rows = (series.size() + 1) / 2;
    for (int i = 0; i < series.size(); i++) {
      PlotSeries s = series.get(i);
      int col = i / Math.max(1, rows);
      int x = PANEL_LEFT[0] + col * (PANEL_LEFT[1] - PANEL_LEFT[0]);
      int y = LEGEND_TOP + (i % Math.max(1, rows)) * LEGEND_ROW;
      boolean measured = s.kind() == PlotSeries.Kind.MEASURED;
      String colour = COLOURS[i % COLOURS.length];
      svg.open("g", "class", "legend-entry", "data-name", s.name());
      if (!s.note().isEmpty()) svg.text("title", s.note());
      // a series drawn only as a level (no sizes) shows the level's dotted line and no marker
      boolean level = !s.empty() && s.points().stream().allMatch(p -> p.sizeBytes() == 0);
      svg.empty("line", "x1", Integer.toString(x), "x2", Integer.toString(x + 28), "y1", Integer.toString(y), "y2", Integer.toString(y),
          "stroke", colour, "stroke-width", measured ? "2.5" : "1.5", "stroke-dasharray", s.empty() ? "2 3" : level ? "2 4" : null);
      if (!level) {
        svg.empty("circle", "cx", Integer.toString(x + 14), "cy", Integer.toString(y), "r", "4", "stroke", colour, "stroke-width", "1.5", "fill",
            measured ? colour : "white");
      }
      String label = s.name() + (measured ? "" : " (baseline)") + (s.empty() ? " \u2014 " + shorten(s.note().isEmpty() ? "nothing to draw" : s.note(), 60) : "");
      svg.text("text", label, "x", Integer.toString(x + 36), "y", Integer.toString(y), "dominant-baseline", "middle", "fill", s.empty() ? "#666" : "#000");
      svg.close("g");
    }
    svg.close("g");
  }

  private static String shorten(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max - 1) + "\u2026";
  }

  static String fmt(double v) {
    return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : v >= 1 ? String.format(Locale.ROOT, "%.2f", v) : String.format(Locale.ROOT, "%.3g", v);
  }
}
