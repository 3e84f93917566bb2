package org.mori4j.shmem.collectives;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The CPU reference the all-reduce kernels are checked against: bf16 and fp16 rounding (nearest, ties to even,
 * overflow to infinity, NaN kept), fp32 accumulation in PE order rounded once (which differs from rounding after
 * every addition, and from another order), and its argument checks.
 */
class AllReduceReferenceTest {

  @Test
  void bf16RoundsToNearestWithTiesToEven() {
    assertEquals((short) 0x3F80, AllReduceReference.floatToBf16(1.0f));
    // 1 + 2^-8 lies halfway between 1.0 (0x3F80, even) and 1.0078125 (0x3F81): ties go to the even one
    assertEquals((short) 0x3F80, AllReduceReference.floatToBf16(1.0f + 0x1p-8f));
    // 1.0078125 + 2^-8 lies halfway between 0x3F81 (odd) and 0x3F82: up to the even one
    assertEquals((short) 0x3F82, AllReduceReference.floatToBf16(1.0078125f + 0x1p-8f));
    // just above halfway rounds up
    assertEquals((short) 0x3F81, AllReduceReference.floatToBf16(Math.nextUp(1.0f + 0x1p-8f)));
    assertEquals((short) 0xBF80, AllReduceReference.floatToBf16(-1.0f - 0x1p-8f), "negative ties to even too");
    assertEquals((short) 0x7F80, AllReduceReference.floatToBf16(Float.MAX_VALUE), "overflow rounds to infinity");
    assertEquals((short) 0xFF80, AllReduceReference.floatToBf16(Float.NEGATIVE_INFINITY));
    assertTrue(Float.isNaN(AllReduceReference.bf16ToFloat(AllReduceReference.floatToBf16(Float.NaN))));
    assertEquals(3.140625f, AllReduceReference.bf16ToFloat(AllReduceReference.floatToBf16(3.14159f)));
  }

  @Test
  void fp16RoundsToNearestWithTiesToEven() {
    MemorySegment s = Arena.ofAuto().allocate(2);
    // 1 + 2^-11 is halfway between 1.0 (0x3C00) and 1 + 2^-10 (0x3C01): to the even one
    AllReduceReference.store(ShmemDataType.FLOAT16, s, 0, 1.0f + 0x1p-11f);
    assertEquals((short) 0x3C00, s.get(JAVA_SHORT_UNALIGNED, 0));
    AllReduceReference.store(ShmemDataType.FLOAT16, s, 0, 1.0f + 0x1p-10f + 0x1p-11f);
    assertEquals((short) 0x3C02, s.get(JAVA_SHORT_UNALIGNED, 0));
    AllReduceReference.store(ShmemDataType.FLOAT16, s, 0, 70000f);
    assertEquals((short) 0x7C00, s.get(JAVA_SHORT_UNALIGNED, 0), "above fp16's range: infinity");
    AllReduceReference.store(ShmemDataType.FLOAT16, s, 0, 0x1p-24f);
    assertEquals((short) 0x0001, s.get(JAVA_SHORT_UNALIGNED, 0), "the smallest subnormal survives");
  }

  @Test
  void bf16SumsAccumulateInFp32AndRoundOnce() {
    // three PEs hold 1.0, 2^-8 and 2^-8 in bf16: rounding after each add would give 1.0 + 2^-8 -> 1.0 (tie to
    // even) and again 1.0; accumulating in fp32 gives 1 + 2^-7 exactly, which bf16 holds (0x3F81)
    List<MemorySegment> in = List.of(bf16(1.0f), bf16(0x1p-8f), bf16(0x1p-8f));
    MemorySegment out = Arena.ofAuto().allocate(2);

    AllReduceReference.sum(ShmemDataType.BFLOAT16, in, out, 1);

    assertEquals((short) 0x3F81, out.get(JAVA_SHORT_UNALIGNED, 0));
    short stepwise = AllReduceReference.floatToBf16(AllReduceReference.bf16ToFloat(AllReduceReference.floatToBf16(1.0f + 0x1p-8f)) + 0x1p-8f);
    assertNotEquals(stepwise, out.get(JAVA_SHORT_UNALIGNED, 0), "rounding per addition would differ");
  }

  @Test
  void theOrderIsPeOrderBecauseFp32AdditionIsNotAssociative() {
    // (1e8 + 1) - 1e8 = 0 in fp32 (1 is lost), but 1e8 - 1e8 + 1 = 1
    List<MemorySegment> in = List.of(fp32(1e8f), fp32(1f), fp32(-1e8f));
    MemorySegment out = Arena.ofAuto().allocate(4);

    AllReduceReference.sum(ShmemDataType.FLOAT32, in, out, 1);
    assertEquals(0f, out.get(JAVA_FLOAT_UNALIGNED, 0));

    AllReduceReference.sum(ShmemDataType.FLOAT32, List.of(in.get(0), in.get(2), in.get(1)), out, 1);
    assertEquals(1f, out.get(JAVA_FLOAT_UNALIGNED, 0));
  }

  @Test
  void aSumMayBeWrittenOverItsFirstInputElementByElement() {
    MemorySegment a = Arena.ofAuto().allocate(8), b = Arena.ofAuto().allocate(8);
    for (int i = 0; i < 4; i++) {
      a.set(JAVA_SHORT_UNALIGNED, 2L * i, Float.floatToFloat16(i));
      b.set(JAVA_SHORT_UNALIGNED, 2L * i, Float.floatToFloat16(10 * i));
    }
    AllReduceReference.sum(ShmemDataType.FLOAT16, List.of(a, b), a, 4);
    for (int i = 0; i < 4; i++) assertEquals(11f * i, Float.float16ToFloat(a.get(JAVA_SHORT_UNALIGNED, 2L * i)));
  }

  @Test
  void argumentsAreChecked() {
    MemorySegment small = Arena.ofAuto().allocate(6);
    assertTrue(assertThrows(IllegalArgumentException.class, () -> AllReduceReference.sum(ShmemDataType.INT32, List.of(small), small, 1))
        .getMessage().contains("INT32"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> AllReduceReference.sum(ShmemDataType.FLOAT32, List.of(small), small, 2))
        .getMessage().contains("PE 0"));
    assertThrows(IllegalArgumentException.class, () -> AllReduceReference.sum(ShmemDataType.FLOAT32, List.of(), small, 1));
  }

  private static MemorySegment bf16(float v) {
    MemorySegment s = Arena.ofAuto().allocate(2);
    s.set(JAVA_SHORT_UNALIGNED, 0, AllReduceReference.floatToBf16(v));
    return s;
  }

  private static MemorySegment fp32(float v) {
    MemorySegment s = Arena.ofAuto().allocate(4);
    s.set(JAVA_FLOAT_UNALIGNED, 0, v);
    return s;
  }
}
