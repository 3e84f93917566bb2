package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class LatencyStatsTest {
  @Test
  void percentilesAreNearestRankOfObservedSamples() {
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
    assertEquals(2000.0, r.p50LatUs(), 1e-9);
    assertEquals(3000.0, r.p99LatUs(), 1e-9);
  }
}
