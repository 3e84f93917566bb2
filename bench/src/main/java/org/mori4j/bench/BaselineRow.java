package org.mori4j.bench;

import java.util.Objects;

/**
 * A baseline measurement printed beside mori4j's rows: which series it belongs to ("nio-stream",
 * "nio-pingpong", "iperf3", "ucx tag_bw", ...), the numbers in the same shape as a mori4j row, and a note
 * that says how the figure was obtained or why it is missing (tool not installed, tool failed).
 *
 * @param series short name of the baseline
 * @param row    the figures; null when the baseline could not be measured
 * @param note   how it was measured, or why it is missing; never null
 */
public record BaselineRow(String series, ResultRow row, String note) {
  public BaselineRow {
    Objects.requireNonNull(series, "series");
    note = note == null ? "" : note;
  }

  /** A baseline that could not be measured, with the reason. */
  public static BaselineRow missing(String series, String why) {
    return new BaselineRow(series, null, why);
  }
}
