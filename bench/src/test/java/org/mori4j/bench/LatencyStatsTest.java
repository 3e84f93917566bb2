package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class LatencyStatsTest {
  @Test
  void smallSamplesGiveExactNearestRankPercentiles() {
    long[] s = new long[100];
    for (int i = 0; i < 100; i++) s[i] = 100 - i; // 1..100, unsorted
    LatencyStats st = LatencyStats.of(s);
    assertEquals(1, st.minNs());
    assertEquals(100, st.maxNs());
    assertEquals(50, st.p50Ns());
    assertEquals(99, st.p99Ns());
    assertEquals(5050, st.sumNs());
    assertEquals(50.5, st.meanNs(), 1e-9);
    assertEquals(100, s[0], "input is not reordered");
  }

  @Test
  void p99OfShortRunIsAnObservedSample() {
    long[] s = new long[128];
    for (int i = 0; i < 128; i++) s[i] = i + 1;
    LatencyStats st = LatencyStats.of(s);
    assertEquals(127, st.p99Ns()); // ceil(0.99 * 128) = 127th smallest
    assertEquals(64, st.p50Ns());
  }

  @Test
  void singleSample() {
    LatencyStats st = LatencyStats.of(new long[] {7});
    assertEquals(7, st.p50Ns());
    assertEquals(7, st.p99Ns());
  }

  @Test
  void emptyOrNegativeSamplesAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> LatencyStats.of(new long[0]));
    assertThrows(IllegalArgumentException.class, () -> LatencyStats.of(new long[] {5, -1}));
  }

  @Test
  void rowBandwidthsFollowMoriDefinitions() {
    // 4 iterations of 1 MiB x 4 blocks: 4 MiB each, taking 1, 2, 2 and 3 ms
    long[] lat = {1_000_000, 2_000_000, 2_000_000, 3_000_000};
    ResultRow r = ResultRow.fromLatencies(1 << 20, 4, lat);
    long total = 4L << 20;
    assertEquals(total, r.totalBytes());
    assertEquals(total / 1e6, r.maxBwGBps(), 1e-9); // best iteration: 4 MiB in 1 ms
    assertEquals(total * 4 / 8e6, r.avgBwGBps(), 1e-9); // 16 MiB in 8 ms
    assertEquals(1000.0, r.minLatUs(), 1e-9);
    assertEquals(2000.0, r.avgLatUs(), 1e-9);
    // percentiles at the histogram's precision: 2,000,000 ns lies in a bucket 1,024 ns wide whose top is 2,000,895
    assertEquals(2000.895, r.p50LatUs(), 1e-9);
    assertEquals(3000.0, r.p99LatUs(), 1e-9); // the largest sample: clamped to it
  }

  /** Nearest rank over the sorted samples: what the bench computed by hand before HdrHistogram. */
  private static long nearestRank(long[] samples, double p) {
    long[] sorted = samples.clone();
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
  }

  @Test
  void percentilesMatchNearestRankWithinThreeSignificantDigits() {
    assertEquals(3, LatencyStats.SIGNIFICANT_DIGITS);
    Random random = new Random(18);
    for (int run = 0; run < 200; run++) {
      int n = 1 + random.nextInt(run < 100 ? 200 : 20_000);
      long[] s = new long[n];
      // a body of tens of microseconds and a tail up to tens of milliseconds, as bench rows have
      for (int i = 0; i < n; i++) s[i] = random.nextInt(10) == 0 ? 1 + random.nextLong(50_000_000) : 20_000 + random.nextLong(40_000);
      LatencyStats st = LatencyStats.of(s);
      for (double p : new double[] {50, 99}) {
        long exact = nearestRank(s, p);
        long got = p == 50 ? st.p50Ns() : st.p99Ns();
        assertTrue(got >= exact && got - exact <= exact / 1024, "p" + p + " of " + n + " samples: " + got + " vs nearest rank " + exact);
        assertTrue(got <= st.maxNs());
      }
      assertEquals(Arrays.stream(s).min().getAsLong(), st.minNs());
      assertEquals(Arrays.stream(s).max().getAsLong(), st.maxNs());
      assertEquals(Arrays.stream(s).sum(), st.sumNs());
    }
  }

  @Test
  void percentilesBelow2048NsAreExact() {
    long[] s = new long[1000];
    for (int i = 0; i < s.length; i++) s[i] = (i * 7919L) % 2048;
    LatencyStats st = LatencyStats.of(s);
    assertEquals(nearestRank(s, 50), st.p50Ns());
    assertEquals(nearestRank(s, 99), st.p99Ns());
  }
}
