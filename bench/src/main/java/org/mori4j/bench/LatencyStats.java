package org.mori4j.bench;

import java.util.Arrays;
import java.util.LongSummaryStatistics;
import org.HdrHistogram.Histogram;

/**
 * Summary of a series of measured latencies in nanoseconds: minimum, maximum, mean and sum (exact, over the
 * samples) and the 50th and 99th percentiles from an HdrHistogram of {@value #SIGNIFICANT_DIGITS} significant
 * digits. The histogram finds the nearest-rank sample (the smallest with at least p% of samples at or below it,
 * so p99 of 128 samples is the second-largest, never a blend of the two largest) and reports the top of that
 * sample's bucket: at or above the sample by less than 1/1024 of it, exact below 2,048 ns, and never above the
 * largest sample (clamped to it). That is the convention of the JVM latency tools and of mori4j's metrics, so a
 * bench row and a metric of the same transfers read the same.
 *
 * @param count   number of samples
 * @param minNs   smallest sample
 * @param maxNs   largest sample
 * @param sumNs   sum of all samples
 * @param p50Ns   median (nearest rank, at the histogram's precision)
 * @param p99Ns   99th percentile (nearest rank, at the histogram's precision)
 */
public record LatencyStats(int count, long minNs, long maxNs, long sumNs, long p50Ns, long p99Ns) {
  /** Decimal digits the percentiles keep: buckets 1/1024 of their value wide at most. */
  public static final int SIGNIFICANT_DIGITS = 3;

  /** Computes the summary; {@code samples} is not modified. */
  public static LatencyStats of(long[] samples) {
    if (samples == null || samples.length == 0) throw new IllegalArgumentException("no latency samples");
    LongSummaryStatistics all = Arrays.stream(samples).summaryStatistics();
    if (all.getMin() < 0) throw new IllegalArgumentException("negative latency sample: " + all.getMin());
    // auto-resizing: covers whatever the largest sample is, from 1 ns
    Histogram h = new Histogram(SIGNIFICANT_DIGITS);
    for (long s : samples) h.recordValue(s);
    return new LatencyStats(samples.length, all.getMin(), all.getMax(), all.getSum(), percentile(h, 50, all.getMax()),
        percentile(h, 99, all.getMax()));
  }

  private static long percentile(Histogram h, double p, long max) {
    return Math.min(h.getValueAtPercentile(p), max);
  }

  public double meanNs() {
    return (double) sumNs / count;
  }
}
