package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The allocator every PE runs: first fit, coalescing, deterministic, and the library's area kept out. */
class SymmetricHeapTest {
  private static final long MIB = 1 << 20;

  @Test
  void firstAllocationStartsAfterTheLibrarysWordsAndKeepsTheDefaultAlignment() {
    SymmetricHeap h = new SymmetricHeap(MIB);
    assertEquals(SymmetricHeap.INTERNAL_BYTES, h.allocate(1, 1));
    assertEquals(SymmetricHeap.INTERNAL_BYTES + 256, h.allocate(100, 8), "sizes are rounded up to 256 bytes");
    assertEquals(SymmetricHeap.INTERNAL_BYTES + 512, h.allocate(256, 256));
  }

  @Test
  void alignmentAboveTheDefaultLeavesTheGapFree() {
    SymmetricHeap h = new SymmetricHeap(MIB);
    h.allocate(256, 256); // [4096, 4352)
    long big = h.allocate(1000, 65536);
    assertEquals(65536, big);
    // the gap before it is still free and taken first by the next small allocation
    assertEquals(4352, h.allocate(256, 256));
  }

  @Test
  void firstFitTakesTheLowestHoleAndFreeRangesMerge() {
    SymmetricHeap h = new SymmetricHeap(MIB);
    long a = h.allocate(1024, 256), b = h.allocate(1024, 256), c = h.allocate(1024, 256), d = h.allocate(1024, 256);
    assertTrue(h.free(b));
    assertTrue(h.free(c));
    // b and c merged into one 2048-byte hole: a 2048-byte request fits there, not after d
    assertEquals(b, h.allocate(2048, 256));
    assertTrue(h.free(a));
    assertTrue(h.free(b));
    assertTrue(h.free(d));
    assertEquals(Map.of(SymmetricHeap.INTERNAL_BYTES, MIB - SymmetricHeap.INTERNAL_BYTES), h.freeRanges(), "everything merged back into one range");
    assertEquals(0, h.allocations());
  }

  @Test
  void twoHeapsGivenTheSameCallsGiveTheSameOffsets() {
    SymmetricHeap one = new SymmetricHeap(64 * MIB), two = new SymmetricHeap(64 * MIB);
    Random r = new Random(42);
    List<Long> live = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      if (!live.isEmpty() && r.nextInt(3) == 0) {
        long off = live.remove(r.nextInt(live.size()));
        assertEquals(one.free(off), two.free(off));
      } else {
        long size = 1 + r.nextInt(100_000);
        long align = 1L << r.nextInt(17);
        long x = one.allocate(size, align), y = two.allocate(size, align);
        assertEquals(x, y, "call " + i);
        if (x >= 0) {
          assertEquals(0, x % align);
          live.add(x);
        }
      }
    }
    assertEquals(one.freeRanges(), two.freeRanges());
  }

  @Test
  void noRoomAnswersMinusOneAndLeavesTheHeapAsItWas() {
    SymmetricHeap h = new SymmetricHeap(MIB);
    long a = h.allocate(MIB - SymmetricHeap.INTERNAL_BYTES, 256);
    assertEquals(SymmetricHeap.INTERNAL_BYTES, a);
    assertEquals(-1, h.allocate(1, 1));
    assertEquals(0, h.largestFree());
    assertTrue(h.free(a));
    assertEquals(MIB - SymmetricHeap.INTERNAL_BYTES, h.largestFree());
  }

  @Test
  void freeOfSomethingThatIsNotAnAllocationStartIsRefused() {
    SymmetricHeap h = new SymmetricHeap(MIB);
    long a = h.allocate(4096, 256);
    assertFalse(h.free(a + 256));
    assertFalse(h.free(0));
    assertTrue(h.free(a));
    assertFalse(h.free(a), "double free");
    assertNull(h.allocationAt(a));
  }

  @Test
  void badArgumentsAreRefused() {
    SymmetricHeap h = new SymmetricHeap(MIB);
    assertThrows(IllegalArgumentException.class, () -> h.allocate(0, 256));
    assertThrows(IllegalArgumentException.class, () -> h.allocate(16, 3));
    assertThrows(IllegalArgumentException.class, () -> new SymmetricHeap(SymmetricHeap.INTERNAL_BYTES));
  }
}
