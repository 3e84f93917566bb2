package org.mori4j.bench;

import java.util.Locale;

/**
 * Byte counts in binary units for tables and messages ("8 B", "4 KiB", "1.5 MiB", "64 MiB"), and the
 * parser for size flags, which accepts the same spellings plus plain byte counts and K/M/G suffixes so that
 * {@code --buffer-size 64M} and {@code --buffer-size 67108864} mean the same.
 */
public final class HumanSize {
  private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB"};

  private HumanSize() {}

  /** Formats {@code bytes}; exact powers print without decimals, others with up to two. */
  public static String format(long bytes) {
    if (bytes < 0) throw new IllegalArgumentException("negative size: " + bytes);
    int unit = 0;
    double v = bytes;
    while (v >= 1024 && unit < UNITS.length - 1) {
      v /= 1024;
      unit++;
    }
    if (v == Math.rint(v)) return (long) v + " " + UNITS[unit];
    String s = String.format(Locale.ROOT, "%.2f", v);
    // trim "1.50" to "1.5" but keep "1.05"
    if (s.endsWith("0")) s = s.substring(0, s.length() - 1);
    return s + " " + UNITS[unit];
  }

  /** Parses "4096", "4K", "4KiB", "4 KB", "64M", "1G" (binary multiples); throws with the text on error. */
  public static long parse(String text) {
    if (text == null) throw new IllegalArgumentException("size is missing");
    String t = text.trim().toUpperCase(Locale.ROOT).replace(" ", "");
    long mult = 1;
    String digits = t;
    String[][] suffixes = {{"KIB", "KB", "K"}, {"MIB", "MB", "M"}, {"GIB", "GB", "G"}};
    outer:
    for (int i = 0; i < suffixes.length; i++) {
      for (String s : suffixes[i]) {
        if (t.endsWith(s)) {
          mult = 1L << (10 * (i + 1));
          digits = t.substring(0, t.length() - s.length());
          break outer;
        }
      }
    }
    if (digits.endsWith("B")) digits = digits.substring(0, digits.length() - 1);
    try {
      long v = Long.parseLong(digits);
      if (v <= 0) throw new IllegalArgumentException("size must be positive: '" + text + "'");
      return Math.multiplyExact(v, mult);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException("not a size: '" + text + "' (use bytes or a K/M/G suffix, e.g. 4096 or 64M)");
    }
  }
}
