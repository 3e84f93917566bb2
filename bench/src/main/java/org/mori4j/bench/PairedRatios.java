package org.mori4j.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The verdict of {@code bench --rounds N}: every {@link Comparison.Ratio} the rounds computed, paired across rounds by
 * point, reference and figure, as the median of the per-round ratios with their range and the count of rounds at or
 * better than the reference. Why a median of paired ratios: on the shared 2-core VM the neighbours move every figure
 * by 10-30% from minute to minute (UCX tag_bw alone 3.7-5.1 GB/s between consecutive runs), so one run's ratio says
 * little, while a ratio taken within one round compares two figures of nearly the same minute. A round whose
 * reference is missing is named and left out; the line says how many rounds were used.
 *
 * @param first    the ratio of the first round that has this key (what the lines name: point, reference, figure)
 * @param perRound each round's ratio, NaN where the reference was missing in that round (or the round had no such
 *                 ratio)
 * @param mine     each round's mori4j figure (NaN where that round had no such ratio)
 * @param base     each round's reference figure (NaN where missing)
 */
record PairedRatios(Comparison.Ratio first, double[] perRound, double[] mine, double[] base) {
  /** One object on one line, its per-round arrays inline ({@code "ratios": [0.95, null, 1.02]}), as the rows' files are laid out. */
  private static final ObjectWriter ONE_LINE = new ObjectMapper().writer(new DefaultPrettyPrinter(Separators.createDefaultInstance()
          .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
          .withObjectEntrySpacing(Separators.Spacing.AFTER)
          .withArrayValueSpacing(Separators.Spacing.AFTER))
      .withArrayIndenter(DefaultPrettyPrinter.NopIndenter.instance)
      .withObjectIndenter(DefaultPrettyPrinter.NopIndenter.instance));

  /** Pairs the ratios of {@code rounds} (round k's ratios at index k-1), in the order the keys first appear. */
  static List<PairedRatios> of(List<List<Comparison.Ratio>> rounds) {
    int n = rounds.size();
    Map<String, PairedRatios> byKey = new LinkedHashMap<>();
    for (int k = 0; k < n; k++) {
      for (Comparison.Ratio r : rounds.get(k)) {
        PairedRatios p = byKey.computeIfAbsent(r.key(), x -> new PairedRatios(r, nans(n), nans(n), nans(n)));
        p.perRound[k] = r.value();
        p.mine[k] = r.mine();
        p.base[k] = r.measured() ? r.base() : Double.NaN;
      }
    }
    return List.copyOf(byKey.values());
  }

  private static double[] nans(int n) {
    double[] a = new double[n];
    Arrays.fill(a, Double.NaN);
    return a;
  }

  int rounds() {
    return perRound.length;
  }

  /** The per-round ratios that were measured. */
  double[] used() {
    return used(perRound);
  }

  /** {@code v}'s values of the rounds whose ratio was measured. */
  private double[] used(double[] v) {
    return IntStream.range(0, v.length).filter(k -> Double.isFinite(perRound[k])).mapToDouble(k -> v[k]).toArray();
  }

  /** 1-based numbers of the rounds whose reference was missing. */
  List<Integer> missingRounds() {
    return IntStream.range(0, perRound.length).filter(k -> !Double.isFinite(perRound[k])).mapToObj(k -> k + 1).toList();
  }

  double median() {
    double[] u = used();
    return u.length == 0 ? Double.NaN : CpuGpuRounds.median(u);
  }

  double min() {
    return Arrays.stream(used()).min().orElse(Double.NaN);
  }

  double max() {
    return Arrays.stream(used()).max().orElse(Double.NaN);
  }

  /** Rounds at or above the reference's bandwidth (at or below its latency). */
  int atOrBetter() {
    boolean higher = first.measure().higherIsBetter;
    return (int) Arrays.stream(used()).filter(v -> higher ? v >= 1 : v <= 1).count();
  }

  /**
   * {@code "write 64 MiB x 1 avg BW: 97% of ucx tag_bw, median of 5 [88%..106%], >= 100% in 2 of 5; medians 4.41 GB/s vs 4.55 GB/s"}
   * (the medians of both figures over the rounds used), with the rounds whose reference was missing named; {@code op} is
   * "write" or "read".
   */
  String line(String op) {
    Comparison.Ratio r = first;
    boolean bw = r.measure().higherIsBetter;
    String head = r.scope() + op + " " + r.point() + (bw ? " avg BW" : " p50");
    List<Integer> missing = missingRounds();
    double[] u = used();
    if (u.length == 0) return head + ": " + r.name() + " missing in all " + rounds() + " rounds";
    String of = bw ? " of " : " ";
    StringBuilder sb = new StringBuilder(head).append(": ").append(r.format(median())).append(of).append(r.name())
        .append(", median of ").append(u.length);
    if (u.length < rounds()) sb.append(" of ").append(rounds()).append(" rounds");
    sb.append(" [").append(r.format(min())).append("..").append(r.format(max())).append("], ")
        .append(bw ? ">= 100%" : "<= 1.00x").append(" in ").append(atOrBetter()).append(" of ").append(u.length);
    if (!missing.isEmpty()) {
      sb.append(" (").append(r.name()).append(" missing in round").append(missing.size() > 1 ? "s " : " ")
          .append(missing.stream().map(String::valueOf).collect(Collectors.joining(", "))).append(")");
    }
    sb.append(String.format(Locale.ROOT, "; medians %s vs %s", r.figure(CpuGpuRounds.median(used(mine))), r.figure(CpuGpuRounds.median(used(base)))));
    return sb.toString();
  }

  /** The section printed after the rounds: a heading and one line per paired ratio. */
  static List<String> section(List<PairedRatios> paired, String op) {
    List<String> out = new ArrayList<>();
    int n = paired.isEmpty() ? 0 : paired.getFirst().rounds();
    out.add("Paired rounds (" + n + " rounds, same run): per-round ratio of mori4j to the reference measured in the same round, "
        + "median [min..max], rounds at or better:");
    if (paired.isEmpty()) out.add("  (no row has a reference to compare with: a 4 KiB, >= 1 MiB or burst row is needed)");
    for (PairedRatios p : paired) out.add("  " + p.line(op));
    return out;
  }

  /** One object for {@code <json>.paired.json} (see bench/docs/json-and-plots.md for the keys). */
  ObjectNode json(String op) {
    Comparison.Ratio r = first;
    ObjectNode o = JsonRows.object();
    o.put("op", op);
    o.put("scope", r.scope().trim());
    o.put("msgSize", r.row().msgSize());
    o.put("batchSize", r.row().batchSize());
    o.put("measure", r.measure().key);
    o.put("better", r.measure().higherIsBetter ? "higher" : "lower");
    o.put("series", r.series());
    o.put("baseline", BaselineId.of(r.series()));
    o.put("rounds", rounds());
    o.put("roundsUsed", used().length);
    o.put("median", number(median()));
    o.put("min", number(min()));
    o.put("max", number(max()));
    o.put("atOrBetter", atOrBetter());
    array(o.putArray("ratios"), perRound);
    array(o.putArray("mori4j"), mine);
    array(o.putArray("reference"), base);
    return o;
  }

  /** {@code <json>.paired.json}: an array of {@link #json} objects, one per line. */
  static String toJson(List<PairedRatios> paired, String op) {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < paired.size(); i++) {
      try {
        sb.append(i == 0 ? "\n  " : ",\n  ").append(ONE_LINE.writeValueAsString(paired.get(i).json(op)));
      } catch (JsonProcessingException e) {
        // a tree of numbers and strings always serializes; this would be a Jackson bug
        throw new UncheckedIOException(e);
      }
    }
    return sb.append(paired.isEmpty() ? "]\n" : "\n]\n").toString();
  }

  private static void array(ArrayNode a, double[] v) {
    for (double d : v) a.add(number(d));
  }

  private static Double number(double v) {
    return Double.isFinite(v) ? v : null;
  }
}
