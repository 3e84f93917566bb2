package org.mori4j.bench.plot;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;

/**
 * A logarithmic axis: maps values of {@code [lo, hi]} onto pixels {@code [from, to]} (to may be smaller, for
 * a y axis growing upwards) and chooses its ticks: powers of two for sizes, 1-2-5 steps of decades for figures.
 * Sizes span 8 B .. 64 MiB and latencies microseconds to tens of milliseconds, so only a log axis shows the small
 * sizes at all.
 */
final class LogScale {
  final double lo;
  final double hi;
  private final double from;
  private final double to;

  private LogScale(double lo, double hi, double from, double to) {
    this.lo = lo;
    this.hi = hi;
    this.from = from;
    this.to = to;
  }

  /**
   * The axis over the positive finite {@code values}, widened by {@code pad} (a factor, on each side) and to at
   * least a factor of 10 overall so a single point or a flat line still has an axis around it; null when there is
   * no such value.
   */
  static LogScale over(List<Double> values, double pad, double from, double to) {
    double lo = Double.POSITIVE_INFINITY;
    double hi = 0;
    for (double v : values) {
      if (!Double.isFinite(v) || v <= 0) continue;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    if (hi == 0) return null;
    lo /= pad;
    hi *= pad;
    if (hi / lo < 10) {
      double mid = Math.sqrt(lo * hi);
      lo = mid / Math.sqrt(10);
      hi = mid * Math.sqrt(10);
    }
    return new LogScale(lo, hi, from, to);
  }

  double map(double v) {
    return from + (Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo)) * (to - from);
  }

  /** Powers of two inside the axis, every 2^k-th so that there are at most {@code max}. */
  List<Long> binaryTicks(int max) {
    int first = (int) Math.ceil(Math.log(lo) / Math.log(2) - 1e-9);
    int last = (int) Math.floor(Math.log(hi) / Math.log(2) + 1e-9);
    int step = 1;
    while ((last - first) / step + 1 > max) step *= 2;
    List<Long> out = new ArrayList<>();
    for (int e = first; e <= last; e++) {
      if (e >= 0 && e < 63 && Math.floorMod(e, step) == 0) out.add(1L << e);
    }
    return out;
  }

  /** 1, 2, 5 x 10^k inside the axis; decades only when that would make more than {@code max}. */
  List<Double> decimalTicks(int max) {
    List<Double> all = new ArrayList<>();
    List<Double> decades = new ArrayList<>();
    for (int e = (int) Math.floor(Math.log10(lo)); e <= (int) Math.ceil(Math.log10(hi)); e++) {
      for (int m : new int[] {1, 2, 5}) {
        double v = new BigDecimal(m).scaleByPowerOfTen(e).doubleValue();
        if (v < lo || v > hi) continue;
        all.add(v);
        if (m == 1) decades.add(v);
      }
    }
    if (all.size() <= max) return all;
    if (decades.size() <= max) return decades;
    List<Double> thinned = new ArrayList<>();
    int step = (decades.size() + max - 1) / max;
    for (int i = 0; i < decades.size(); i += step) thinned.add(decades.get(i));
    return thinned;
  }

  /** A tick's label: at most three significant digits, plain decimals (0.001 .. 100000), else 1e-5, 2e6. */
  static String label(double v) {
    BigDecimal d = new BigDecimal(v).round(new MathContext(3)).stripTrailingZeros();
    if (v >= 1e-3 && v < 1e6) return d.toPlainString();
    return d.unscaledValue() + "e" + (-d.scale());
  }
}
