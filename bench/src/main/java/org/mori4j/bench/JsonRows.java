package org.mori4j.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes results as JSON for machines. The {@code --json FILE} file is an array of mori4j rows with exactly
 * the keys of issue 2 ({@code msgSize}, {@code batchSize}, {@code totalBytes}, {@code maxBwGBps},
 * {@code avgBwGBps}, {@code minLatUs}, {@code avgLatUs}, {@code p50LatUs}, {@code p99LatUs}); baselines go to
 * a second array in {@code FILE.baselines.json} with the same keys plus {@code series} and {@code note}, and
 * null for figures a baseline cannot report. Keeping them apart means a consumer of the main file never has
 * to filter. Hand-written because the format is nine numbers per row and a JSON library would be the
 * module's largest dependency.
 */
public final class JsonRows {
  private JsonRows() {}

  /** The main file: mori4j rows only. */
  public static String rowsToJson(List<ResultRow> rows) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < rows.size(); i++) {
      sb.append(i == 0 ? "\n  " : ",\n  ");
      appendRow(sb, rows.get(i), null, null);
    }
    return sb.append(rows.isEmpty() ? "]\n" : "\n]\n").toString();
  }

  /**
   * Rows of one backend with what made them: the keys plus {@code backend} ({@code "rdma"},
   * {@code "tcp"}), {@code provider} (the RDMA verbs provider, {@code "ibverbs"} or {@code "software"}; null for
   * tcp) and {@code emulation} (true for the software provider, whose figures are never NIC performance). Used by
   * {@code bench --backend rdma}, whose rows must not be read without their provider.
   */
  public static String rowsToJson(List<ResultRow> rows, String backend, String provider, boolean emulation) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < rows.size(); i++) {
      sb.append(i == 0 ? "\n  " : ",\n  ");
      appendRow(sb, rows.get(i), null, null);
      sb.setLength(sb.length() - 1); // reopen the object for the backend's keys
      sb.append(", \"backend\": ").append(string(backend));
      sb.append(", \"provider\": ").append(provider == null ? "null" : string(provider));
      sb.append(", \"emulation\": ").append(emulation).append('}');
    }
    return sb.append(rows.isEmpty() ? "]\n" : "\n]\n").toString();
  }

  /** Where the TCP rows of {@code bench --backend rdma --compare-tcp} go ({@code run.json} -> {@code run.tcp.json}). */
  public static Path tcpRowsPath(Path main) {
    return sibling(main, "tcp");
  }

  /** The baselines file. */
  public static String baselinesToJson(List<BaselineRow> rows) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < rows.size(); i++) {
      BaselineRow b = rows.get(i);
      sb.append(i == 0 ? "\n  " : ",\n  ");
      appendRow(sb, b.row(), b.series(), b.note());
    }
    return sb.append(rows.isEmpty() ? "]\n" : "\n]\n").toString();
  }

  /** Where the baselines of {@code --json FILE} go. */
  public static Path baselinesPath(Path main) {
    return sibling(main, "baselines");
  }

  /** Where the CPU rows of {@code --compare-cpu} go ({@code run.json} -> {@code run.cpu.json}), in the main file's format. */
  public static Path cpuRowsPath(Path main) {
    return sibling(main, "cpu");
  }

  private static Path sibling(Path main, String kind) {
    String name = main.getFileName().toString();
    String stem = name.endsWith(".json") ? name.substring(0, name.length() - 5) : name;
    return main.resolveSibling(stem + "." + kind + ".json");
  }

  public static void write(Path file, String json) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) Files.createDirectories(parent);
    Files.writeString(file, json, StandardCharsets.UTF_8);
  }

  private static void appendRow(StringBuilder sb, ResultRow r, String series, String note) {
    sb.append('{');
    if (series != null) sb.append("\"series\": ").append(string(series)).append(", ");
    sb.append("\"msgSize\": ").append(r == null || r.msgSize() <= 0 ? "null" : Long.toString(r.msgSize()));
    sb.append(", \"batchSize\": ").append(r == null || r.batchSize() <= 0 ? "null" : Integer.toString(r.batchSize()));
    sb.append(", \"totalBytes\": ").append(r == null || r.totalBytes() <= 0 ? "null" : Long.toString(r.totalBytes()));
    sb.append(", \"maxBwGBps\": ").append(number(r == null ? Double.NaN : r.maxBwGBps()));
    sb.append(", \"avgBwGBps\": ").append(number(r == null ? Double.NaN : r.avgBwGBps()));
    sb.append(", \"minLatUs\": ").append(number(r == null ? Double.NaN : r.minLatUs()));
    sb.append(", \"avgLatUs\": ").append(number(r == null ? Double.NaN : r.avgLatUs()));
    sb.append(", \"p50LatUs\": ").append(number(r == null ? Double.NaN : r.p50LatUs()));
    sb.append(", \"p99LatUs\": ").append(number(r == null ? Double.NaN : r.p99LatUs()));
    if (series != null) sb.append(", \"note\": ").append(string(note));
    sb.append('}');
  }

  /** JSON has no NaN or Infinity: those become null. Double.toString is valid JSON for finite values. */
  static String number(double v) {
    return Double.isFinite(v) ? Double.toString(v) : "null";
  }

  static String string(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
          else sb.append(c);
        }
      }
    }
    return sb.append('"').toString();
  }
}
