package org.mori4j.bench;

import java.util.Arrays;

/**
 * Summary of a series of measured latencies in nanoseconds: minimum, maximum, mean, the sum (the measured
 * time as a whole) and nearest-rank percentiles. Nearest-rank is used instead of interpolation so that every
 * reported percentile is a latency that was actually observed, which keeps p99 of a short run honest (with
 * 128 samples p99 is the second-largest sample, not a blend of the two largest).
 *
 * @param count   number of samples
 * @param minNs   smallest sample
 * @param maxNs   largest sample
 * @param sumNs   sum of all samples
 * @param p50Ns   median (nearest rank)
 * @param p99Ns   99th percentile (nearest rank)
 */
public record LatencyStats(int count, long minNs, long maxNs, long sumNs, long p50Ns, long p99Ns) {

  /** Computes the summary; {@code samples} is not modified. */
  public static LatencyStats of(long[] samples) {
    if (samples == null || samples.length == 0) throw new IllegalArgumentException("no latency samples");
    long[] sorted = samples.clone();
    Arrays.sort(sorted);
    if (sorted[0] < 0) throw new IllegalArgumentException("negative latency sample: " + sorted[0]);
    long sum = 0;
    for (long s : sorted) sum = Math.addExact(sum, s);
    return new LatencyStats(sorted.length, sorted[0], sorted[sorted.length - 1], sum,
        percentile(sorted, 50), percentile(sorted, 99));
  }

  /** Nearest-rank percentile of an ascending array: the smallest sample with at least p% of samples at or below it. */
  static long percentile(long[] sorted, double p) {
    if (p <= 0) return sorted[0];
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
  }

  public double meanNs() {
    return (double) sumNs / count;
  }
}
