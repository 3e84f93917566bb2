package org.mori4j.shmem.collectives;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The all-reduce the kernels compute, on the CPU, bit for bit: each element is the fp32 sum of the PEs' values
 * taken in PE order (PE 0's value, plus PE 1's, ...), rounded once to the element type with round to nearest,
 * ties to even. Summing in fp32 and rounding once is what makes bf16 and fp16 results differ from a sum rounded
 * after every addition, and the fixed order is what makes every PE (and this reference) get the same bits,
 * since fp32 addition is not associative. The tests and {@code shmem-bench} check GPU results against it.
 * NaN inputs give a NaN whose payload may differ from the GPU's; the checks use finite values.
 */
public final class AllReduceReference {
  private AllReduceReference() {}

  /**
   * Writes into {@code out} the all-reduce (sum) of {@code count} elements of {@code type} from each of
   * {@code inputs} (one segment per PE, in PE order, little-endian elements). {@code out} may be one of the inputs.
   */
  public static void sum(ShmemDataType type, List<MemorySegment> inputs, MemorySegment out, long count) {
    if (!type.reducible()) throw new IllegalArgumentException("type " + type + " is not reducible: all-reduce takes BFLOAT16, FLOAT16 or FLOAT32");
    if (inputs.isEmpty()) throw new IllegalArgumentException("inputs must hold one segment per PE, got none");
    long bytes = count * type.bytes();
    for (int p = 0; p < inputs.size(); p++)
      if (inputs.get(p).byteSize() < bytes)
        throw new IllegalArgumentException("input of PE " + p + " has " + inputs.get(p).byteSize() + " bytes, fewer than " + count + " x " + type);
    if (out.byteSize() < bytes) throw new IllegalArgumentException("out has " + out.byteSize() + " bytes, fewer than " + count + " x " + type);
    int step = type.bytes();
    for (long i = 0; i < count; i++) {
      long at = i * step;
      float acc = load(type, inputs.get(0), at);
      for (int p = 1; p < inputs.size(); p++) acc += load(type, inputs.get(p), at);
      store(type, out, at, acc);
    }
  }

  /** One element as fp32. */
  public static float load(ShmemDataType type, MemorySegment segment, long byteOffset) {
    return switch (type) {
      case BFLOAT16 -> bf16ToFloat(segment.get(JAVA_SHORT_UNALIGNED, byteOffset));
      case FLOAT16 -> Float.float16ToFloat(segment.get(JAVA_SHORT_UNALIGNED, byteOffset));
      case FLOAT32 -> segment.get(JAVA_FLOAT_UNALIGNED, byteOffset);
      default -> throw new IllegalArgumentException("type " + type + " is not reducible");
    };
  }

  /** Stores fp32 {@code value} rounded to the element type. */
  public static void store(ShmemDataType type, MemorySegment segment, long byteOffset, float value) {
    switch (type) {
      case BFLOAT16 -> segment.set(JAVA_SHORT_UNALIGNED, byteOffset, floatToBf16(value));
      case FLOAT16 -> segment.set(JAVA_SHORT_UNALIGNED, byteOffset, Float.floatToFloat16(value));
      case FLOAT32 -> segment.set(JAVA_FLOAT_UNALIGNED, byteOffset, value);
      default -> throw new IllegalArgumentException("type " + type + " is not reducible");
    }
  }

  /** bfloat16 (the upper half of an fp32) to fp32: exact. */
  public static float bf16ToFloat(short bits) {
    return Float.intBitsToFloat((bits & 0xFFFF) << 16);
  }

  /** fp32 to bfloat16, round to nearest, ties to even (overflow gives infinity); a NaN stays a quiet NaN. */
  public static short floatToBf16(float value) {
    int u = Float.floatToRawIntBits(value);
    if ((u & 0x7FFF_FFFF) > 0x7F80_0000) return (short) ((u >>> 16) | 0x40);
    u += 0x7FFF + ((u >>> 16) & 1);
    return (short) (u >>> 16);
  }
}
