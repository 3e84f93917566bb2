package org.mori4j.bench.plot;

import java.util.Locale;

/**
 * The few SVG primitives {@link SvgPlot} writes, into one {@link StringBuilder}: text and attributes escaped for
 * XML (series names and notes come from tools' output and may hold {@code <}, {@code &} or quotes), coordinates
 * with one decimal. Elements are written as they come; {@link #open}/{@link #close} keep the nesting.
 */
final class Svg {
  private final StringBuilder out = new StringBuilder();
  private int depth;

  Svg open(String tag, String... attributes) {
    indent().append('<').append(tag);
    attributes(attributes);
    out.append(">\n");
    depth++;
    return this;
  }

  Svg close(String tag) {
    depth--;
    indent().append("</").append(tag).append(">\n");
    return this;
  }

  /** An element without children. */
  Svg empty(String tag, String... attributes) {
    indent().append('<').append(tag);
    attributes(attributes);
    out.append("/>\n");
    return this;
  }

  /** An element with text content, e.g. {@code text} or {@code title}. */
  Svg text(String tag, String content, String... attributes) {
    indent().append('<').append(tag);
    attributes(attributes);
    out.append('>').append(escape(content)).append("</").append(tag).append(">\n");
    return this;
  }

  /** An element holding only a tooltip ({@code <title>}), e.g. a marker that says its value on hover. */
  Svg withTooltip(String tag, String tooltip, String... attributes) {
    indent().append('<').append(tag);
    attributes(attributes);
    out.append("><title>").append(escape(tooltip)).append("</title></").append(tag).append(">\n");
    return this;
  }

  Svg raw(String s) {
    indent().append(s).append('\n');
    return this;
  }

  @Override
  public String toString() {
    return out.toString();
  }

  static String num(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

  static String escape(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '&' -> b.append("&amp;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&apos;");
        // XML 1.0 allows no other control characters, not even escaped: a note's stray one becomes a space
        case '\t', '\n', '\r' -> b.append(' ');
        default -> b.append(c < 0x20 || c == 0xFFFE || c == 0xFFFF ? ' ' : c);
      }
    }
    return b.toString();
  }

  private void attributes(String[] nameValue) {
    if (nameValue.length % 2 != 0) throw new IllegalArgumentException("attributes come in name, value pairs");
    for (int i = 0; i < nameValue.length; i += 2) {
      if (nameValue[i + 1] == null) continue;
      out.append(' ').append(nameValue[i]).append("=\"").append(escape(nameValue[i + 1])).append('"');
    }
  }

  private StringBuilder indent() {
    return out.append("  ".repeat(depth));
  }
}
