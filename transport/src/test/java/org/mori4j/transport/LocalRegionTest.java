package org.mori4j.transport;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

class LocalRegionTest {
  /** A region whose memory is never touched: contains() is pure arithmetic on its size. */
  private static LocalRegion ofSize(long size) {
    return new LocalRegion(1, 2, MemorySegment.ofAddress(0).reinterpret(size), false, -1);
  }

  @Test
  void rangesInsideAreContained() {
    LocalRegion r = ofSize(4096);
    assertTrue(r.contains(0, 1));
    assertTrue(r.contains(0, 4096));
    assertTrue(r.contains(4095, 1));
    assertTrue(r.contains(1, 4095));
    assertTrue(r.contains(2048, 2048));
  }

  @Test
  void rangesReachingPastTheEndAreRejected() {
    LocalRegion r = ofSize(4096);
    assertFalse(r.contains(0, 4097));
    assertFalse(r.contains(4096, 1));
    assertFalse(r.contains(4095, 2));
    assertFalse(r.contains(1, 4096));
  }

  @Test
  void emptyAndNegativeRangesAreRejected() {
    LocalRegion r = ofSize(4096);
    assertFalse(r.contains(0, 0));
    assertFalse(r.contains(-1, 1));
    assertFalse(r.contains(0, -1));
    assertFalse(r.contains(Long.MIN_VALUE, 1));
    assertFalse(r.contains(1, Long.MIN_VALUE));
    assertFalse(r.contains(-4096, 8192));
  }

  @Test
  void offsetPlusLengthOverflowIsRejected() {
    LocalRegion r = ofSize(4096);
    // offset + length wraps to a small or negative number: a naive "offset + length <= size" would accept these
    assertFalse(r.contains(Long.MAX_VALUE, 1));
    assertFalse(r.contains(1, Long.MAX_VALUE));
    assertFalse(r.contains(Long.MAX_VALUE, Long.MAX_VALUE));
    assertFalse(r.contains(Long.MAX_VALUE - 100, 200));
    assertFalse(r.contains(100, Long.MAX_VALUE - 50));
    assertFalse(r.contains(4000, Long.MAX_VALUE));
  }

  @Test
  void hugeRegionBoundariesAreExact() {
    long size = Long.MAX_VALUE;
    LocalRegion r = ofSize(size);
    assertTrue(r.contains(0, size));
    assertTrue(r.contains(size - 1, 1));
    assertFalse(r.contains(size, 1));
    assertFalse(r.contains(1, size));
    assertTrue(r.contains(size / 2, size / 2));
  }

  @Test
  void killMakesTheRegionDead() {
    try (Arena a = Arena.ofConfined()) {
      LocalRegion r = new LocalRegion(3, 4, a.allocate(16), false, -1);
      assertTrue(r.live());
      r.kill();
      assertFalse(r.live());
    }
  }

  @Test
  void windowCountCoversTheWholeRegion() {
    assertEquals(1, ofSize(1).windowCount());
    assertEquals(1, ofSize(LocalRegion.WINDOW).windowCount());
    assertEquals(2, ofSize(LocalRegion.WINDOW + 1).windowCount());
    assertEquals(3, ofSize(3 * LocalRegion.WINDOW).windowCount());
  }

  @Test
  void zeroSizedRegionIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new LocalRegion(1, 1, MemorySegment.NULL, false, -1));
  }
}
