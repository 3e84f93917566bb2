package org.mori4j.natives.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/**
 * {@link KernelArgs}' layout (8-byte slots, structs at their own alignment, little-endian values) and its two native
 * forms: {@link KernelArgs#toNative} and {@link KernelArgs#writeTo} into reused memory give the same pointers
 * relative to their buffers and the same bytes, and a buffer too small or an argument list too large is refused.
 */
class KernelArgsTest {
  @Test
  void layoutAndBothNativeFormsAgree() {
    byte[] struct = new byte[40];
    for (int i = 0; i < struct.length; i++) struct[i] = (byte) (i + 1);
    KernelArgs args = KernelArgs.of().pointer(0x1122_3344_5566_7788L).i32(-2).struct(struct, 32).f32(1.5f).i64(7);
    assertEquals(5, args.count());
    long[] offsets = {0, 8, 32, 72, 80};
    for (int i = 0; i < offsets.length; i++) assertEquals(offsets[i], args.offset(i), "offset " + i);
    assertEquals(88, args.totalBytes());
    assertArrayEquals(new byte[] {(byte) 0xFE, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0, 0, 0, 0}, args.bytes(1));
    assertArrayEquals(struct, args.bytes(2));
    assertThrows(IndexOutOfBoundsException.class, () -> args.bytes(5));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment a = args.toNative(arena);
      MemorySegment values = arena.allocate(256, KernelArgs.MAX_ALIGNMENT).fill((byte) 0x5A);
      MemorySegment pointers = arena.allocate(ValueLayout.ADDRESS, 8);
      assertEquals(pointers.address(), args.writeTo(values, pointers).address());
      long baseA = a.getAtIndex(ValueLayout.JAVA_LONG, 0);
      for (int i = 0; i < args.count(); i++) {
        assertEquals(offsets[i], a.getAtIndex(ValueLayout.JAVA_LONG, i) - baseA, "toNative pointer " + i);
        assertEquals(values.address() + offsets[i], pointers.getAtIndex(ValueLayout.JAVA_LONG, i), "writeTo pointer " + i);
        byte[] expected = args.bytes(i);
        assertArrayEquals(expected, values.asSlice(offsets[i], expected.length).toArray(ValueLayout.JAVA_BYTE), "writeTo value " + i);
        assertArrayEquals(expected, MemorySegment.ofAddress(baseA + offsets[i]).reinterpret(expected.length).toArray(ValueLayout.JAVA_BYTE),
            "toNative value " + i);
      }
      assertEquals(0x1122_3344_5566_7788L, values.get(ValueLayout.JAVA_LONG, 0));
      assertEquals(1.5f, values.get(ValueLayout.JAVA_FLOAT, 72));
      IllegalArgumentException small = assertThrows(IllegalArgumentException.class, () -> args.writeTo(values.asSlice(0, 80), pointers));
      assertTrue(small.getMessage().contains("88 value bytes"), small.getMessage());
      assertThrows(IllegalArgumentException.class, () -> args.writeTo(values, pointers.asSlice(0, 32)));
    }
    KernelArgs big = KernelArgs.of().i64(1);
    IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class, () -> big.struct(new byte[KernelArgs.MAX_TOTAL_BYTES], 8));
    assertTrue(tooMany.getMessage().contains("struct argument 1"), tooMany.getMessage());
    assertEquals(1, big.count());
    assertEquals(8, big.totalBytes());
    assertThrows(IllegalArgumentException.class, () -> big.struct(new byte[4], 3));
  }
}
