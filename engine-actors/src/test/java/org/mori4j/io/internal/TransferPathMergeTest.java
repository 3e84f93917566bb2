package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** How a batch's blocks are joined before a backend sees them. */
class TransferPathMergeTest {
  private static long[][] joined(long[] lo, long[] ro, long[] sizes, int capacity) {
    int m = BlockJoin.joinedCount(lo, ro, sizes);
    long[] mlo = new long[capacity], mro = new long[capacity], ms = new long[capacity];
    Arrays.fill(ms, -1); // what a reused array may hold beyond the entries written
    BlockJoin.join(lo, ro, sizes, mlo, mro, ms);
    return new long[][] {Arrays.copyOf(mlo, m), Arrays.copyOf(mro, m), Arrays.copyOf(ms, m)};
  }

  @Test
  void contiguousRunsOnBothSidesBecomeOneBlockEach() {
    long[] lo = {0, 10, 30, 40, 100}, ro = {500, 510, 530, 545, 600}, sizes = {10, 20, 10, 5, 1};
    // 0+10 and 10+20 join on both sides, and so does 30 (530 follows 510+20); 40 follows 30+10 locally but
    // 545 != 530+10 remotely: a new block; 100 is apart
    assertEquals(3, BlockJoin.joinedCount(lo, ro, sizes));
    long[][] m = joined(lo, ro, sizes, 16);
    assertArrayEquals(new long[] {0, 40, 100}, m[0]);
    assertArrayEquals(new long[] {500, 545, 600}, m[1]);
    assertArrayEquals(new long[] {40, 5, 1}, m[2]);
  }

  @Test
  void blocksInReverseOrderStayApart() {
    long[] lo = {8192, 4096, 0}, ro = {8192, 4096, 0}, sizes = {4096, 4096, 4096};
    assertEquals(3, BlockJoin.joinedCount(lo, ro, sizes));
    long[][] m = joined(lo, ro, sizes, 3);
    assertArrayEquals(lo, m[0]);
    assertArrayEquals(ro, m[1]);
    assertArrayEquals(sizes, m[2]);
  }

  @Test
  void aWholeSequentialBatchIsOneBlock() {
    int n = 4096;
    long[] o = new long[n], s = new long[n];
    for (int i = 0; i < n; i++) {
      o[i] = 4096L * i;
      s[i] = 4096;
    }
    assertEquals(1, BlockJoin.joinedCount(o, o, s));
    assertArrayEquals(new long[] {4096L * n}, joined(o, o, s, 16)[2]);
  }
}
