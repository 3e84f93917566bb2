package org.mori4j.natives.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The arguments of one kernel launch, in the kernel's parameter order. A launch passes the driver an array
 * of pointers, one per parameter, each pointing at that parameter's value ({@code void** kernelParams});
 * {@link #toNative} lays the values out in one buffer and builds that array. Scalars and pointers take an
 * 8-byte slot each (every such type fits, with its natural alignment); a struct passed by value
 * ({@link #struct}) takes its own size at its own alignment, which is how a kernel receives more than 8 bytes
 * in one parameter (a table of peer addresses, say). The caller must match each value's width to the
 * kernel's parameter type: the driver copies {@code sizeof(param)} bytes from each slot and cannot check.
 */
public final class KernelArgs {
  /** The largest alignment a by-value parameter can ask for (CUDA's {@code __align__} maximum for params). */
  private static final int MAX_ALIGNMENT = 256;
  /** CUDA's limit on the total size of a launch's parameters before CUDA 12.1 (4 KiB); newer drivers take 32 KiB. */
  public static final int MAX_TOTAL_BYTES = 32_764;

  private final List<byte[]> values = new ArrayList<>();
  private final List<Integer> alignments = new ArrayList<>();

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

  /**
   * A struct passed by value: {@code value} holds its bytes exactly as the kernel's type lays them out
   * (little-endian, padding included), placed at a multiple of {@code alignment} (the struct's
   * {@code alignof}, a power of two up to 256).
   */
  public KernelArgs struct(byte[] value, int alignment) {
    if (value == null || value.length == 0) throw new IllegalArgumentException("struct argument " + values.size() + " has no bytes");
    if (alignment < 1 || alignment > MAX_ALIGNMENT || Integer.bitCount(alignment) != 1)
      throw new IllegalArgumentException("struct argument " + values.size() + ": alignment " + alignment + " is not a power of two in 1.." + MAX_ALIGNMENT);
    values.add(value.clone());
    alignments.add(alignment);
    if (totalBytes() > MAX_TOTAL_BYTES) {
      values.removeLast();
      alignments.removeLast();
      throw new IllegalArgumentException("kernel arguments would take more than " + MAX_TOTAL_BYTES + " bytes with struct argument "
          + values.size() + " of " + value.length + " bytes");
    }
    return this;
  }

  /** A struct passed by value, copied from {@code value} (any segment, e.g. one written through a {@code MemoryLayout}). */
  public KernelArgs struct(MemorySegment value, int alignment) {
    return struct(value.toArray(ValueLayout.JAVA_BYTE), alignment);
  }

  public int count() {
    return values.size();
  }

  /** The bytes of argument {@code index} as the kernel receives them (8 for scalars and pointers). */
  public byte[] bytes(int index) {
    return values.get(index).clone();
  }

  /** Where argument {@code index} sits in the parameter buffer that {@link #toNative} builds. */
  public long offset(int index) {
    long offset = 0;
    for (int i = 0; i <= index; i++) {
      offset = align(offset, alignments.get(i));
      if (i < index) offset += values.get(i).length;
    }
    return offset;
  }

  /** Bytes of the parameter buffer, padding included. */
  public long totalBytes() {
    return values.isEmpty() ? 0 : offset(values.size() - 1) + values.getLast().length;
  }

  /**
   * The {@code void**} array for the launch, allocated in {@code arena}: pointer i points at value i
   * (little-endian, so the low bytes a narrower parameter reads are the value itself).
   */
  public MemorySegment toNative(Arena arena) {
    int n = values.size();
    MemorySegment buffer = arena.allocate(Math.max(totalBytes(), 8), MAX_ALIGNMENT);
    MemorySegment pointers = arena.allocate(ValueLayout.ADDRESS, Math.max(n, 1));
    long offset = 0;
    for (int i = 0; i < n; i++) {
      byte[] v = values.get(i);
      offset = align(offset, alignments.get(i));
      MemorySegment.copy(v, 0, buffer, ValueLayout.JAVA_BYTE, offset, v.length);
      pointers.setAtIndex(ValueLayout.ADDRESS, i, buffer.asSlice(offset, v.length));
      offset += v.length;
    }
    return pointers;
  }

  private static long align(long offset, int alignment) {
    return (offset + alignment - 1) & -(long) alignment;
  }

  private KernelArgs add(long bits) {
    values.add(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(bits).array());
    alignments.add(8);
    return this;
  }
}
