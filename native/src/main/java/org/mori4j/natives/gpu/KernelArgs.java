package org.mori4j.natives.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * The arguments of one kernel launch, in the kernel's parameter order. A launch passes the driver an array
 * of pointers, one per parameter, each pointing at that parameter's value ({@code void** kernelParams});
 * {@link #toNative} lays the values out in 8-byte slots (every scalar and pointer type fits, with its
 * natural alignment) and builds that array. The caller must match each value's width to the kernel's
 * parameter type: the driver copies {@code sizeof(param)} bytes from each slot and cannot check.
 */
public final class KernelArgs {
  private long[] values = new long[8];
  private int count;

  public static KernelArgs of() {
    return new KernelArgs();
  }

  /** A device pointer ({@code T*}). */
  public KernelArgs pointer(long devicePointer) {
    return add(devicePointer);
  }

  /** An {@code int} or {@code unsigned int}. */
  public KernelArgs i32(int value) {
    return add(value & 0xFFFF_FFFFL);
  }

  /** A {@code long long}, {@code unsigned long long} or {@code size_t}. */
  public KernelArgs i64(long value) {
    return add(value);
  }

  public KernelArgs f32(float value) {
    return add(Float.floatToRawIntBits(value) & 0xFFFF_FFFFL);
  }

  public KernelArgs f64(double value) {
    return add(Double.doubleToRawLongBits(value));
  }

  public int count() {
    return count;
  }

  /**
   * The {@code void**} array for the launch, allocated in {@code arena}: slot i holds value i (little-endian,
   * so the low bytes a narrower parameter reads are the value itself).
   */
  public MemorySegment toNative(Arena arena) {
    MemorySegment slots = arena.allocate(ValueLayout.JAVA_LONG, Math.max(count, 1));
    MemorySegment pointers = arena.allocate(ValueLayout.ADDRESS, Math.max(count, 1));
    for (int i = 0; i < count; i++) {
      slots.setAtIndex(ValueLayout.JAVA_LONG, i, values[i]);
      pointers.setAtIndex(ValueLayout.ADDRESS, i, slots.asSlice(i * 8L, 8));
    }
    return pointers;
  }

  private KernelArgs add(long bits) {
    if (count == values.length) values = Arrays.copyOf(values, count * 2);
    values[count++] = bits;
    return this;
  }
}
