package org.mori4j.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Renders result rows as MORI's benchmark prints them: a boxed table with a title, one header row and
 * right-aligned cells, sizes in binary units, bandwidths in GB/s and latencies in microseconds with two
 * decimals. Values a series cannot report are shown as "-". The baselines table has the same columns plus
 * the series name in front and its note behind, so the two tables line up column for column.
 */
public final class ResultTable {
  static final List<String> COLUMNS = List.of("MsgSize", "BatchSize", "TotalSize", "Max BW (GB/s)", "Avg BW (GB/s)",
      "Min Lat (us)", "Avg Lat (us)", "P50 Lat (us)", "P99 Lat (us)");

  private ResultTable() {}

  /** mori4j's own rows. */
  public static String render(String title, List<ResultRow> rows) {
    List<List<String>> cells = new ArrayList<>();
    for (ResultRow r : rows) cells.add(cells(r));
    return box(title, COLUMNS, cells);
  }

  /** Baselines: series name, the common columns, and the note. */
  public static String renderBaselines(String title, List<BaselineRow> rows) {
    List<String> header = new ArrayList<>();
    header.add("Baseline");
    header.addAll(COLUMNS);
    header.add("Note");
    List<List<String>> cells = new ArrayList<>();
    for (BaselineRow b : rows) {
      List<String> line = new ArrayList<>();
      line.add(b.series());
      if (b.row() == null) for (int i = 0; i < COLUMNS.size(); i++) line.add("-");
      else line.addAll(cells(b.row()));
      line.add(b.note());
      cells.add(line);
    }
    return box(title, header, cells, true, true);
  }

  /**
   * Rows of several backends in one table, each with its backend's label in front (for instance
   * {@code rdma (software provider: emulation)} beside {@code tcp}), so that no figure is read without the
   * backend that made it.
   */
  public static String renderWithBackend(String title, List<String> backends, List<ResultRow> rows) {
    if (backends.size() != rows.size()) throw new IllegalArgumentException(backends.size() + " labels for " + rows.size() + " rows");
    List<String> header = new ArrayList<>();
    header.add("Backend");
    header.addAll(COLUMNS);
    List<List<String>> cells = new ArrayList<>();
    for (int i = 0; i < rows.size(); i++) {
      List<String> line = new ArrayList<>();
      line.add(backends.get(i));
      line.addAll(cells(rows.get(i)));
      cells.add(line);
    }
    return box(title, header, cells, true, false);
  }

  static List<String> cells(ResultRow r) {
    return List.of(size(r.msgSize()), r.batchSize() > 0 ? Integer.toString(r.batchSize()) : "-", size(r.totalBytes()),
        num(r.maxBwGBps()), num(r.avgBwGBps()), num(r.minLatUs()), num(r.avgLatUs()), num(r.p50LatUs()),
        num(r.p99LatUs()));
  }

  private static String size(long bytes) {
    return bytes > 0 ? HumanSize.format(bytes) : "-";
  }

  static String num(double v) {
    return Double.isFinite(v) ? String.format(Locale.ROOT, "%.2f", v) : "-";
  }

  static String box(String title, List<String> header, List<List<String>> rows) {
    return box(title, header, rows, false, false);
  }

  /** {@code leadText}/{@code trailText}: the first/last column is free text (a name, a note), left-aligned. */
  static String box(String title, List<String> header, List<List<String>> rows, boolean leadText, boolean trailText) {
    int[] w = new int[header.size()];
    for (int i = 0; i < w.length; i++) w[i] = header.get(i).length();
    for (List<String> r : rows) for (int i = 0; i < w.length; i++) w[i] = Math.max(w[i], r.get(i).length());
    StringBuilder rule = new StringBuilder("+");
    for (int x : w) rule.append("-".repeat(x + 2)).append('+');
    int inner = rule.length() - 2;
    StringBuilder out = new StringBuilder();
    out.append("+").append("-".repeat(inner)).append("+\n");
    out.append('|').append(center(title, inner)).append("|\n");
    out.append(rule).append('\n');
    line(out, header, w, true, leadText, trailText);
    out.append(rule).append('\n');
    for (List<String> r : rows) line(out, r, w, false, leadText, trailText);
    out.append(rule).append('\n');
    return out.toString();
  }

  private static void line(StringBuilder out, List<String> cells, int[] w, boolean header, boolean leadText, boolean trailText) {
    out.append('|');
    for (int i = 0; i < w.length; i++) {
      String c = cells.get(i);
      // names and notes are free text: left-aligned reads better there; figures line up on the right
      boolean left = header || (i == w.length - 1 && trailText) || (i == 0 && leadText);
      String pad = " ".repeat(w[i] - c.length());
      out.append(' ').append(header ? center(c, w[i]) : left ? c + pad : pad + c).append(" |");
    }
    out.append('\n');
  }

  private static String center(String s, int width) {
    if (s.length() >= width) return s.substring(0, width);
    int left = (width - s.length()) / 2;
    return " ".repeat(left) + s + " ".repeat(width - s.length() - left);
  }
}
