package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import org.junit.jupiter.api.Test;

/** How a batch's blocks are joined before a backend sees them, and that the caller's arrays are never kept. */
class TransferPathMergeTest {
  @Test
  void contiguousRunsOnBothSidesBecomeOneBlockEach() {
    long[][] m = TransferPath.merge(new long[] {0, 10, 30, 40, 100}, new long[] {500, 510, 530, 545, 600}, new long[] {10, 20, 10, 5, 1});
    // 0+10 and 10+20 join on both sides; 30 follows on the local side but 530 follows 510+20, so it joins too;
    // 40 follows 30+10 locally but 545 != 530+10 remotely: a new block; 100 is apart
    assertArrayEquals(new long[] {0, 40, 100}, m[0]);
    assertArrayEquals(new long[] {500, 545, 600}, m[1]);
    assertArrayEquals(new long[] {40, 5, 1}, m[2]);
  }

  @Test
  void blocksInReverseOrderStayApartAndAreCopied() {
    long[] lo = {8192, 4096, 0}, ro = {8192, 4096, 0}, sizes = {4096, 4096, 4096};
    long[][] m = TransferPath.merge(lo, ro, sizes);
    assertArrayEquals(lo, m[0]);
    assertArrayEquals(ro, m[1]);
    assertArrayEquals(sizes, m[2]);
    assertNotSame(lo, m[0]);
    assertNotSame(ro, m[1]);
    assertNotSame(sizes, m[2]);
  }

  @Test
  void aWholeSequentialBatchIsOneBlock() {
    int n = 4096;
    long[] o = new long[n], s = new long[n];
    for (int i = 0; i < n; i++) {
      o[i] = 4096L * i;
      s[i] = 4096;
    }
    long[][] m = TransferPath.merge(o, o, s);
    assertArrayEquals(new long[] {0}, m[0]);
    assertArrayEquals(new long[] {0}, m[1]);
    assertArrayEquals(new long[] {4096L * n}, m[2]);
  }

  @Test
  void oneBlockIsCopiedAsItIs() {
    long[] lo = {7}, ro = {9}, sizes = {3};
    long[][] m = TransferPath.merge(lo, ro, sizes);
    assertArrayEquals(new long[] {7}, m[0]);
    assertNotSame(lo, m[0]);
  }
}
