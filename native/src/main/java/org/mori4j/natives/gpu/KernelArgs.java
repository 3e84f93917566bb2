package org.mori4j.natives.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

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
  public static final int MAX_ALIGNMENT = 256;
  /** CUDA's limit on the total size of a launch's parameters before CUDA 12.1 (4 KiB); newer drivers take 32 KiB. */
  public static final int MAX_TOTAL_BYTES = 32_764;
  private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  // The values laid out as the parameter buffer will hold them (padding included), built as arguments are added,
  // so that a launch copies them in one piece: a launch per batch builds one of these, and the lists of boxed
  // 8-byte arrays it used to be were a measurable part of the launch call's host cost.
  private byte[] data = new byte[64];
  private int[] offsets = new int[8];
  private int[] sizes = new int[8];
  private int count;
  private int end;

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
    if (value == null || value.length == 0) throw new IllegalArgumentException("struct argument " + count + " has no bytes");
    if (alignment < 1 || alignment > MAX_ALIGNMENT || Integer.bitCount(alignment) != 1)
      throw new IllegalArgumentException("struct argument " + count + ": alignment " + alignment + " is not a power of two in 1.." + MAX_ALIGNMENT);
    long at = align(end, alignment);
    if (at + value.length > MAX_TOTAL_BYTES) {
      throw new IllegalArgumentException("kernel arguments would take more than " + MAX_TOTAL_BYTES + " bytes with struct argument "
          + count + " of " + value.length + " bytes");
    }
    int offset = place((int) at, value.length);
    System.arraycopy(value, 0, data, offset, value.length);
    return this;
  }

  /** A struct passed by value, copied from {@code value} (any segment, e.g. one written through a {@code MemoryLayout}). */
  public KernelArgs struct(MemorySegment value, int alignment) {
    return struct(value.toArray(ValueLayout.JAVA_BYTE), alignment);
  }

  public int count() {
    return count;
  }

  /** The bytes of argument {@code index} as the kernel receives them (8 for scalars and pointers). */
  public byte[] bytes(int index) {
    Objects.checkIndex(index, count);
    return Arrays.copyOfRange(data, offsets[index], offsets[index] + sizes[index]);
  }

  /** Where argument {@code index} sits in the parameter buffer that {@link #toNative} builds. */
  public long offset(int index) {
    Objects.checkIndex(index, count);
    return offsets[index];
  }

  /** Bytes of the parameter buffer, padding included. */
  public long totalBytes() {
    return end;
  }

  /**
   * The {@code void**} array for the launch, allocated in {@code arena}: pointer i points at value i
   * (little-endian, so the low bytes a narrower parameter reads are the value itself).
   */
  public MemorySegment toNative(Arena arena) {
    MemorySegment values = arena.allocate(Math.max(end, 8), MAX_ALIGNMENT);
    MemorySegment pointers = arena.allocate(ValueLayout.ADDRESS, Math.max(count, 1));
    return writeTo(values, pointers);
  }

  /**
   * {@link #toNative} into memory the caller owns and reuses: the values into {@code values} (at least
   * {@link #totalBytes()} bytes, aligned to {@link #MAX_ALIGNMENT}, or to the largest alignment asked for), the
   * pointers into {@code pointers} (at least {@link #count()} addresses). Returns {@code pointers}. Both must stay
   * untouched until the launch call that reads them has returned (the driver copies the values then).
   */
  public MemorySegment writeTo(MemorySegment values, MemorySegment pointers) {
    if (values.byteSize() < end || pointers.byteSize() < (long) count * ValueLayout.ADDRESS.byteSize()) {
      throw new IllegalArgumentException("kernel arguments need " + end + " value bytes and " + count + " pointers, got segments of "
          + values.byteSize() + " and " + pointers.byteSize() + " bytes");
    }
    MemorySegment.copy(data, 0, values, ValueLayout.JAVA_BYTE, 0, end);
    long base = values.address();
    for (int i = 0; i < count; i++) pointers.setAtIndex(ValueLayout.JAVA_LONG, i, base + offsets[i]);
    return pointers;
  }

  private static long align(long offset, int alignment) {
    return (offset + alignment - 1) & -(long) alignment;
  }

  /** Records argument {@code count} at {@code offset} with {@code size} bytes; returns the offset. */
  private int place(int offset, int size) {
    if (count == offsets.length) {
      offsets = Arrays.copyOf(offsets, count * 2);
      sizes = Arrays.copyOf(sizes, count * 2);
    }
    if (offset + size > data.length) data = Arrays.copyOf(data, Math.max(data.length * 2, offset + size));
    offsets[count] = offset;
    sizes[count] = size;
    count++;
    end = offset + size;
    return offset;
  }

  private KernelArgs add(long bits) {
    int offset = place((int) align(end, 8), 8);
    LONG_LE.set(data, offset, bits);
    return this;
  }
}
