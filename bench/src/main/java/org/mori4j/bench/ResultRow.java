package org.mori4j.bench;

/**
 * One row of MORI's benchmark table: {@code batchSize} blocks of {@code msgSize} bytes moved per iteration.
 * Bandwidths are in GB/s with 1 GB = 10^9 bytes (MORI's and nixlbench's unit), latencies in microseconds per
 * iteration (all blocks of the batch issued and completed). A field that a series cannot report (for example
 * the latency of an iperf3 stream) is {@code NaN}, or 0 for the sizes; tables print it as "-" and JSON as null.
 *
 * @param msgSize    bytes per block
 * @param batchSize  blocks per iteration
 * @param totalBytes bytes per iteration, {@code msgSize * batchSize}
 * @param maxBwGBps  best iteration: {@code totalBytes / min latency}
 * @param avgBwGBps  all iterations: {@code totalBytes * iterations / sum of latencies}
 * @param minLatUs   fastest iteration
 * @param avgLatUs   mean iteration
 * @param p50LatUs   median iteration (nearest rank, at {@link LatencyStats}' histogram precision)
 * @param p99LatUs   99th percentile iteration (nearest rank, at {@link LatencyStats}' histogram precision)
 */
public record ResultRow(long msgSize, int batchSize, long totalBytes, double maxBwGBps, double avgBwGBps,
                        double minLatUs, double avgLatUs, double p50LatUs, double p99LatUs) {

  /** The row for iterations that each moved {@code msgSize * batchSize} bytes and took {@code latenciesNs[i]}. */
  public static ResultRow fromLatencies(long msgSize, int batchSize, long[] latenciesNs) {
    if (msgSize <= 0) throw new IllegalArgumentException("msgSize must be positive: " + msgSize);
    if (batchSize <= 0) throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
    LatencyStats s = LatencyStats.of(latenciesNs);
    long total = Math.multiplyExact(msgSize, (long) batchSize);
    // bytes per nanosecond is exactly GB/s (10^9 B per 10^9 ns); a zero-length timing is clamped to 1 ns
    // rather than reported as infinite bandwidth.
    double maxBw = (double) total / Math.max(1, s.minNs());
    double avgBw = (double) total * s.count() / Math.max(1, s.sumNs());
    return new ResultRow(msgSize, batchSize, total, maxBw, avgBw, s.minNs() / 1e3, s.meanNs() / 1e3,
        s.p50Ns() / 1e3, s.p99Ns() / 1e3);
  }

  /** A bandwidth-only row (streams measured by an external tool). */
  public static ResultRow bandwidthOnly(long msgSize, long totalBytes, double avgBwGBps) {
    return new ResultRow(msgSize, 0, totalBytes, Double.NaN, avgBwGBps, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
  }
}
