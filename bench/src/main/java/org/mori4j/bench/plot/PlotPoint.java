package org.mori4j.bench.plot;

import org.mori4j.bench.ResultRow;

/**
 * One measured point of a plotted series: the message size (bytes per transfer; 0 for a figure that belongs to
 * no size, such as an iperf3 stream, which the bandwidth panel draws as a level across the sizes), the average
 * bandwidth in GB/s and the p50/p99 latency in microseconds. A figure the series cannot report is {@code NaN}
 * and is simply not drawn.
 *
 * @param sizeBytes     message size, or 0 for none
 * @param bandwidthGBps average bandwidth, GB/s (10^9 B/s)
 * @param p50Us         median latency, microseconds
 * @param p99Us         99th percentile latency, microseconds
 */
public record PlotPoint(long sizeBytes, double bandwidthGBps, double p50Us, double p99Us) {
  public PlotPoint {
    if (sizeBytes < 0) throw new IllegalArgumentException("sizeBytes must not be negative: " + sizeBytes);
  }

  /** The point of a bench row: its message size, average bandwidth, p50 and p99. */
  public static PlotPoint of(ResultRow r) {
    return new PlotPoint(Math.max(0, r.msgSize()), r.avgBwGBps(), r.p50LatUs(), r.p99LatUs());
  }

  boolean hasBandwidth() {
    return Double.isFinite(bandwidthGBps) && bandwidthGBps > 0;
  }

  boolean hasLatency() {
    return sizeBytes > 0 && (usable(p50Us) || usable(p99Us));
  }

  static boolean usable(double v) {
    return Double.isFinite(v) && v > 0;
  }
}
