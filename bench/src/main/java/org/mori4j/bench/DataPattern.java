package org.mori4j.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The bytes a benchmark row moves: a pseudo-random pattern that depends on a per-row seed and on the byte's
 * offset in the buffer, so a block that landed at the wrong offset, a stale block from an earlier row, or a
 * zero page all fail the check. Defined by absolute buffer offset (not by block) because blocks of a big
 * point reuse buffer slots, and a reused slot must hold the same bytes whichever block wrote it last.
 */
public final class DataPattern {
  private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private DataPattern() {}

  /** The byte at buffer offset {@code x} for {@code seed}. */
  public static byte byteAt(long seed, long x) {
    return (byte) (word(seed, x >>> 3) >>> ((x & 7) * 8));
  }

  private static long word(long seed, long k) {
    // SplitMix64 finaliser: cheap, and neighbouring words share no obvious bytes
    long z = seed + (k + 1) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** Writes the pattern over {@code [0, length)} of {@code seg}, rounded up to whole 8-byte words within the segment. */
  public static void fill(MemorySegment seg, long length, long seed) {
    long words = Math.min(seg.byteSize(), length + 7) >>> 3;
    for (long k = 0; k < words; k++) seg.set(WORD, k << 3, word(seed, k));
    for (long x = words << 3; x < Math.min(length, seg.byteSize()); x++) seg.set(ValueLayout.JAVA_BYTE, x, byteAt(seed, x));
  }

  /**
   * Writes the pattern of buffer offsets {@code [bufferOffset, bufferOffset + length)} into {@code [0, length)}
   * of {@code seg}: how a buffer that the CPU cannot address (device memory) gets its pattern, one staging
   * chunk at a time, with every chunk holding exactly the bytes of its place in the buffer.
   */
  public static void fillAt(MemorySegment seg, long bufferOffset, long length, long seed) {
    if (length > seg.byteSize()) throw new IndexOutOfBoundsException("length " + length + " > segment " + seg.byteSize());
    long x = 0;
    // whole words only where the buffer offset is word-aligned; the rest byte by byte
    for (; x < length && ((bufferOffset + x) & 7) != 0; x++) seg.set(ValueLayout.JAVA_BYTE, x, byteAt(seed, bufferOffset + x));
    for (; x + 8 <= length; x += 8) seg.set(WORD, x, word(seed, (bufferOffset + x) >>> 3));
    for (; x < length; x++) seg.set(ValueLayout.JAVA_BYTE, x, byteAt(seed, bufferOffset + x));
  }

  /**
   * Checks {@code length} bytes of {@code seg} starting at {@code segOffset} against the pattern at buffer
   * offset {@code bufferOffset}.
   *
   * @return the index (relative to {@code segOffset}) of the first wrong byte, or -1 when all match
   */
  public static long firstMismatch(MemorySegment seg, long segOffset, long bufferOffset, long length, long seed) {
    for (long i = 0; i < length; i++) {
      if (seg.get(ValueLayout.JAVA_BYTE, segOffset + i) != byteAt(seed, bufferOffset + i)) return i;
    }
    return -1;
  }
}
