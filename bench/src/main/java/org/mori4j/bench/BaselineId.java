package org.mori4j.bench;

import java.util.Locale;

/**
 * The stable name a script compares against, written as {@code "baseline"} beside each baseline row's display
 * {@code series} in the JSON: {@code nio-stream}, {@code nio-pingpong}, {@code iperf3}, {@code ucx-tag_bw},
 * {@code ucx-tag_lat}, {@code raw-copy} (the GPU driver's copies: H2D/D2H/D2D/peer, XGMI copies and loops),
 * {@code nccl}; any other series (shmem-bench's own rows) by its display name in lower case with spaces as dashes.
 */
public final class BaselineId {
  private BaselineId() {}

  public static String of(String series) {
    String s = series.trim();
    if (s.equals("nio-stream")) return "nio-stream";
    if (s.startsWith("nio-pingpong")) return "nio-pingpong";
    if (s.startsWith("iperf3")) return "iperf3";
    if (s.equals("ucx tag_bw")) return "ucx-tag_bw";
    if (s.equals("ucx tag_lat")) return "ucx-tag_lat";
    if (s.startsWith("cuMemcpy") || s.startsWith("hipMemcpy") || s.contains("-memcpy") || s.startsWith("raw ")) return "raw-copy";
    if (s.startsWith("nccl")) return "nccl";
    return s.toLowerCase(Locale.ROOT).replaceAll("\\s+", "-");
  }
}
