package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The batch path's one-pass check and join against the plain checks and {@link BlockJoin#join}. */
class BatchBlocksTest {
  private static final long L = 1 << 20, R = 3 << 19;

  /** The engine's per-block check as it was written before the one-pass scan: null or the first message. */
  private static String reference(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    for (int i = 0; i < lo.length; i++) {
      long s = sizes[i];
      if (s <= 0) return "sizes[" + i + "] must be positive: " + s;
      if (lo[i] < 0 || lo[i] > localSize - s)
        return "localOffsets[" + i + "] " + lo[i] + " + size " + s + " exceeds localSrc size " + localSize;
      if (ro[i] < 0 || ro[i] > remoteSize - s)
        return "remoteOffsets[" + i + "] " + ro[i] + " + size " + s + " exceeds remoteDst size " + remoteSize;
    }
    return null;
  }

  @Test
  void edgeValuesAreJudgedAsThePlainChecksJudgeThem() {
    long[] values = {Long.MIN_VALUE, Long.MIN_VALUE + 1, -L, -1, 0, 1, 7, L - 8, L - 1, L, L + 1, R - 1, R, R + 1,
        Long.MAX_VALUE - L, Long.MAX_VALUE - 1, Long.MAX_VALUE};
    for (long s : values) {
      for (long a : values) {
        for (long b : values) {
          long[] lo = {0, a}, ro = {0, b}, sizes = {1, s};
          String want = reference(lo, ro, sizes, L, R);
          assertEquals(want, new BatchBlocks().scan(lo, ro, sizes, L, R, "localSrc", "remoteDst"), "s=" + s + " a=" + a + " b=" + b);
        }
      }
    }
  }

  @Test
  void randomBatchesCountJoinBoundAndSumAsTheReference() {
    SplittableRandom rnd = new SplittableRandom(15);
    for (int round = 0; round < 2_000; round++) {
      int n = 1 + rnd.nextInt(64);
      long[] lo = new long[n], ro = new long[n], sizes = new long[n];
      long a = rnd.nextLong(64), b = rnd.nextLong(64);
      // a quarter with every block of one size: the scan then sums and bounds without a pass
      boolean same = rnd.nextInt(4) == 0;
      long common = 1 + rnd.nextLong(4096);
      for (int i = 0; i < n; i++) {
        long s = same ? common : 1 + rnd.nextLong(4096);
        // often contiguous on one side or both, sometimes a gap, rarely out of bounds
        if (rnd.nextInt(3) > 0) a += rnd.nextInt(4) == 0 ? 64 : 0;
        else a = rnd.nextLong(L);
        if (rnd.nextInt(3) > 0) b += rnd.nextInt(4) == 0 ? 128 : 0;
        else b = rnd.nextLong(R);
        lo[i] = a;
        ro[i] = b;
        sizes[i] = rnd.nextInt(500) == 0 ? -s : s;
        a += s;
        b += s;
      }
      BatchBlocks bb = new BatchBlocks();
      String got = bb.scan(lo, ro, sizes, L, R, "localSrc", "remoteDst");
      assertEquals(reference(lo, ro, sizes, L, R), got);
      if (got != null) continue;
      int m = BlockJoin.joinedCount(lo, ro, sizes);
      assertEquals(m, n - bb.joins);
      assertEquals(Arrays.stream(sizes).sum(), bb.total);
      long[] mlo = new long[m], mro = new long[m], ms = new long[m], jlo = new long[m], jro = new long[m], js = new long[m];
      BlockJoin.join(lo, ro, sizes, mlo, mro, ms);
      if (bb.joins > 0) {
        bb.join(lo, ro, sizes, jlo, jro, js);
        assertArrayEquals(mlo, jlo);
        assertArrayEquals(mro, jro);
        assertArrayEquals(ms, js);
      }
      assertEquals(Arrays.stream(ms).min().orElseThrow(), bb.minBlock);
      assertEquals(Arrays.stream(ms).max().orElseThrow(), bb.maxBlock);
    }
  }

  @Test
  void aFullWindowAndTheLastByteAreInBounds() {
    BatchBlocks bb = new BatchBlocks();
    assertNull(bb.scan(new long[] {0, L - 1}, new long[] {R - L, R - 1}, new long[] {L, 1}, L, R, "localSrc", "remoteDst"));
    assertEquals(L, bb.maxBlock);
    assertEquals(1, bb.minBlock);
    assertEquals(0, bb.joins);
  }
}
