package org.mori4j.io.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Batches' arrays come back for later batches of a similar size; idle arrays are bounded; huge ones are not kept. */
class BlockArrayPoolTest {
  @Test
  void arraysGivenBackServeTheNextBatchOfTheSameCapacity() {
    BlockArrayPool pool = new BlockArrayPool();
    BlockArrayPool.Arrays a = pool.take(4096);
    assertEquals(4096, a.localOffsets.length);
    assertEquals(4096, a.remoteOffsets.length);
    assertEquals(4096, a.sizes.length);
    pool.give(a);
    assertSame(a, pool.take(3000), "3,000 blocks fit the 4,096 capacity");
    BlockArrayPool.Arrays small = pool.take(2);
    assertEquals(16, small.sizes.length, "the smallest capacity");
    assertNotSame(a, pool.take(4097), "a bigger batch needs the next capacity");
    assertEquals(3, pool.created());
  }

  @Test
  void idleArraysPerCapacityAreBoundedByBytes() {
    BlockArrayPool pool = new BlockArrayPool();
    int n = 32768; // 768 KiB a set: 5 sets fit in 4 MiB
    BlockArrayPool.Arrays[] sets = new BlockArrayPool.Arrays[20];
    for (int i = 0; i < sets.length; i++) sets[i] = pool.take(n);
    for (BlockArrayPool.Arrays s : sets) pool.give(s);
    assertEquals(BlockArrayPool.BYTES_KEPT_PER_CAPACITY / (24L * n), pool.idle());
  }

  @Test
  void batchesBeyondTheLargestCapacityGetArraysOfTheirOwnAndAreNotKept() {
    BlockArrayPool pool = new BlockArrayPool();
    int n = (1 << 20) + 1;
    BlockArrayPool.Arrays a = pool.take(n);
    assertEquals(n, a.sizes.length);
    pool.give(a);
    assertEquals(0, pool.idle());
    assertTrue(pool.take(n) != a);
  }
}
