package org.mori4j.bench;

import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes results as JSON for machines, through Jackson. The {@code --json FILE} file is an array of mori4j
 * rows with exactly the keys of issue 2 ({@code msgSize}, {@code batchSize}, {@code totalBytes},
 * {@code maxBwGBps}, {@code avgBwGBps}, {@code minLatUs}, {@code avgLatUs}, {@code p50LatUs}, {@code p99LatUs});
 * baselines go to a second array in {@code FILE.baselines.json} with the same keys plus {@code series} (the display
 * name), {@code baseline} (its stable name for scripts, {@link BaselineId}) and {@code note}, and null for figures a
 * baseline cannot report. Keeping them apart means a consumer of the main
 * file never has to filter. The layout (one object per line, {@code "key": value, ...}, numbers as
 * {@link Double#toString}) is the one the recorded results in {@code bench/results/} and the scripts reading
 * them have always had; {@link #read} reads any of these files back (the plot of a recorded run).
 */
public final class JsonRows {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** {@code [}, each object on a line of its own indented by two spaces, {@code ]}; inside an object {@code "k": v, "k": v}. */
  private static final ObjectWriter WRITER = MAPPER.writer(new DefaultPrettyPrinter(Separators.createDefaultInstance()
          .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
          .withObjectEntrySpacing(Separators.Spacing.AFTER)
          .withArrayValueSpacing(Separators.Spacing.NONE)
          .withArrayEmptySeparator("")
          .withObjectEmptySeparator(""))
      .withArrayIndenter(new DefaultIndenter("  ", "\n"))
      .withObjectIndenter(DefaultPrettyPrinter.NopIndenter.instance));

  private JsonRows() {}

  /**
   * One object of a results file as read back: {@code series} and {@code note} for baselines (null in a main
   * file), {@code backend}/{@code provider}/{@code emulation} for the rows of {@code bench --backend rdma} (null
   * elsewhere), and the figures ({@code row} null for a baseline that was not measured).
   */
  public record Entry(String series, ResultRow row, String note, String backend, String provider, Boolean emulation) {
    /** As a baseline row (the series named "" when the file had none). */
    public BaselineRow baseline() {
      return new BaselineRow(series == null ? "" : series, row, note);
    }
  }

  /** The main file: mori4j rows only. */
  public static String rowsToJson(List<ResultRow> rows) {
    ArrayNode array = MAPPER.createArrayNode();
    for (ResultRow r : rows) array.add(rowNode(r, null, null));
    return toJson(array);
  }

  /**
   * Rows of one backend with what made them: the keys plus {@code backend} ({@code "rdma"},
   * {@code "tcp"}), {@code provider} (the RDMA verbs provider, {@code "ibverbs"} or {@code "software"}; null for
   * tcp) and {@code emulation} (true for the software provider, whose figures are never NIC performance). Used by
   * {@code bench --backend rdma}, whose rows must not be read without their provider.
   */
  public static String rowsToJson(List<ResultRow> rows, String backend, String provider, boolean emulation) {
    ArrayNode array = MAPPER.createArrayNode();
    for (ResultRow r : rows) {
      ObjectNode o = rowNode(r, null, null);
      o.put("backend", backend);
      o.put("provider", provider);
      o.put("emulation", emulation);
      array.add(o);
    }
    return toJson(array);
  }

  /** An empty object for a command whose rows have keys of their own (kv-bench), written by {@link #objectsToJson}. */
  public static ObjectNode object() {
    return MAPPER.createObjectNode();
  }

  /** {@code objects} as an array in this class's layout (one object per line). */
  public static String objectsToJson(List<? extends JsonNode> objects) {
    ArrayNode array = MAPPER.createArrayNode();
    array.addAll(objects);
    return toJson(array);
  }

  /** Where the TCP rows of {@code bench --backend rdma --compare-tcp} go ({@code run.json} -> {@code run.tcp.json}). */
  public static Path tcpRowsPath(Path main) {
    return sibling(main, "tcp");
  }

  /** The baselines file. */
  public static String baselinesToJson(List<BaselineRow> rows) {
    ArrayNode array = MAPPER.createArrayNode();
    for (BaselineRow b : rows) array.add(rowNode(b.row(), b.series(), b.note()));
    return toJson(array);
  }

  /** One row of {@link #rowsToJson} as an object, for a writer that adds keys of its own ({@code bench --rounds}: {@code round}). */
  public static ObjectNode rowObject(ResultRow row) {
    return rowNode(row, null, null);
  }

  /** One baseline of {@link #baselinesToJson} as an object, for a writer that adds keys of its own. */
  public static ObjectNode baselineObject(BaselineRow b) {
    return rowNode(b.row(), b.series(), b.note());
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

  /**
   * The objects of any of the files above, in order. A file that is not such an array fails with an
   * {@link IllegalArgumentException} naming the file and what was wrong.
   */
  public static List<Entry> read(Path file) throws IOException {
    JsonNode root;
    try {
      root = MAPPER.readTree(file.toFile());
    } catch (com.fasterxml.jackson.core.JacksonException e) {
      throw new IllegalArgumentException(file + " is not JSON: " + e.getOriginalMessage(), e);
    }
    if (root == null || !root.isArray()) throw new IllegalArgumentException(file + " is not a JSON array of result rows");
    List<Entry> out = new ArrayList<>();
    for (JsonNode o : root) {
      if (!o.isObject()) throw new IllegalArgumentException(file + ": element " + out.size() + " is not an object");
      if (!o.has("msgSize") || !o.has("avgBwGBps"))
        throw new IllegalArgumentException(file + ": element " + out.size() + " has no msgSize/avgBwGBps: not a mori4j results file");
      out.add(new Entry(text(o, "series"), row(o), text(o, "note"), text(o, "backend"), text(o, "provider"),
          o.hasNonNull("emulation") ? o.get("emulation").asBoolean() : null));
    }
    return out;
  }

  /** The figures of one object; null when every size and figure is null (a baseline that was not measured). */
  private static ResultRow row(JsonNode o) {
    ResultRow r = new ResultRow(size(o, "msgSize"), (int) size(o, "batchSize"), size(o, "totalBytes"), figure(o, "maxBwGBps"),
        figure(o, "avgBwGBps"), figure(o, "minLatUs"), figure(o, "avgLatUs"), figure(o, "p50LatUs"), figure(o, "p99LatUs"));
    boolean empty = r.msgSize() == 0 && r.batchSize() == 0 && r.totalBytes() == 0 && Double.isNaN(r.maxBwGBps()) && Double.isNaN(r.avgBwGBps())
        && Double.isNaN(r.minLatUs()) && Double.isNaN(r.avgLatUs()) && Double.isNaN(r.p50LatUs()) && Double.isNaN(r.p99LatUs());
    return empty ? null : r;
  }

  private static long size(JsonNode o, String key) {
    return o.hasNonNull(key) ? o.get(key).asLong() : 0;
  }

  private static double figure(JsonNode o, String key) {
    return o.hasNonNull(key) ? o.get(key).asDouble() : Double.NaN;
  }

  private static String text(JsonNode o, String key) {
    return o.hasNonNull(key) ? o.get(key).asText() : null;
  }

  /** Sizes of 0 (not applicable) and figures that are not finite (JSON has no NaN or Infinity) are written as null. */
  private static ObjectNode rowNode(ResultRow r, String series, String note) {
    ObjectNode o = MAPPER.createObjectNode();
    if (series != null) {
      o.put("series", series);
      o.put("baseline", BaselineId.of(series));
    }
    o.put("msgSize", r == null || r.msgSize() <= 0 ? null : r.msgSize());
    o.put("batchSize", r == null || r.batchSize() <= 0 ? null : r.batchSize());
    o.put("totalBytes", r == null || r.totalBytes() <= 0 ? null : r.totalBytes());
    o.put("maxBwGBps", number(r == null ? Double.NaN : r.maxBwGBps()));
    o.put("avgBwGBps", number(r == null ? Double.NaN : r.avgBwGBps()));
    o.put("minLatUs", number(r == null ? Double.NaN : r.minLatUs()));
    o.put("avgLatUs", number(r == null ? Double.NaN : r.avgLatUs()));
    o.put("p50LatUs", number(r == null ? Double.NaN : r.p50LatUs()));
    o.put("p99LatUs", number(r == null ? Double.NaN : r.p99LatUs()));
    if (series != null) o.put("note", note);
    return o;
  }

  private static Double number(double v) {
    return Double.isFinite(v) ? v : null;
  }

  private static String toJson(ArrayNode array) {
    try {
      return WRITER.writeValueAsString(array) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      // a tree of numbers and strings always serializes; this would be a Jackson bug
      throw new UncheckedIOException(e);
    }
  }
}
