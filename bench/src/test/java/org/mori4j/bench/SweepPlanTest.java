package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class SweepPlanTest {
  private static final long MIB = 1 << 20;

  @Test
  void singlePointByDefault() {
    SweepPlan p = SweepPlan.of(4096, 128, false, false, 8, 64 * MIB, 256 * MIB);
    assertEquals(List.of(new SweepPlan.Point(4096, 128)), p.points());
    assertEquals(4096 * 128, p.bufferBytes());
  }

  @Test
  void allSweepsEightBytesTo64MiB() {
    SweepPlan p = SweepPlan.of(4096, 1, true, false, 8, 64 * MIB, 256 * MIB);
    assertEquals(24, p.points().size()); // 2^3 .. 2^26
    assertEquals(8, p.points().getFirst().msgSize());
    assertEquals(64 * MIB, p.points().getLast().msgSize());
    assertEquals(64 * MIB, p.bufferBytes());
  }

  @Test
  void allBatchSweepsPowersOfTwoAndTheRequestedSize() {
    SweepPlan p = SweepPlan.of(4096, 100, false, true, 8, 64 * MIB, 256 * MIB);
    assertEquals(List.of(1, 2, 4, 8, 16, 32, 64, 100), p.points().stream().map(SweepPlan.Point::batchSize).toList());
  }

  @Test
  void bufferIsCappedButHoldsTheLargestMessage() {
    SweepPlan p = SweepPlan.of(4096, 128, true, false, 8, 64 * MIB, 256 * MIB);
    assertEquals(256 * MIB, p.bufferBytes()); // 64 MiB x 128 would be 8 GiB
    SweepPlan q = SweepPlan.of(64 * MIB, 1, false, false, 8, 64 * MIB, MIB);
    assertEquals(64 * MIB, q.bufferBytes());
    assertEquals(8192, SweepPlan.of(13, 600, false, false, 8, 8, MIB).bufferBytes()); // 7800 rounded to pages
  }

  @Test
  void blocksCycleOverTheSlotsThatFit() {
    assertArrayEquals(new long[] {0, 4096, 8192}, SweepPlan.offsets(4096, 3, MIB));
    assertArrayEquals(new long[] {0, 32 * MIB, 0, 32 * MIB}, SweepPlan.offsets(32 * MIB, 4, 64 * MIB));
    assertThrows(IllegalArgumentException.class, () -> SweepPlan.offsets(2 * MIB, 1, MIB));
    // reversed: the same slots, last first, so that no block starts where the one before it ends
    assertArrayEquals(new long[] {8192, 4096, 0}, SweepPlan.offsets(4096, 3, MIB, true));
    assertArrayEquals(new long[] {32 * MIB, 0, 32 * MIB, 0}, SweepPlan.offsets(32 * MIB, 4, 64 * MIB, true));
    long[] r = SweepPlan.offsets(4096, 4096, 16 * MIB, true);
    for (int j = 1; j < r.length; j++) assertNotEquals(r[j - 1] + 4096, r[j], "block " + j + " continues block " + (j - 1));
  }

  @Test
  void badArgumentsNameTheFlag() {
    var e = assertThrows(IllegalArgumentException.class, () -> SweepPlan.of(4096, 0, false, false, 8, 8, MIB));
    assertEquals("--transfer-batch-size must be in 1..32768: 0", e.getMessage());
  }
}
