package org.mori4j.io;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32;

/**
 * A deterministic byte pattern both processes of the XGMI tests can compute: byte {@code o} of pattern
 * {@code seed} is byte {@code o & 7} (little-endian) of a SplitMix64 value of {@code seed} and {@code o >>> 3}.
 */
final class GpuPattern {
  private GpuPattern() {}

  private static final ValueLayout.OfLong LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

  private static long word(long seed, long index) {
    long z = seed + (index + 1) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** Fills all of {@code seg} (whose offset 0 is pattern offset 0) with pattern {@code seed}. */
  static void fill(MemorySegment seg, long seed) {
    long n = seg.byteSize();
    long i = 0;
    for (; i + 8 <= n; i += 8) seg.set(LE, i, word(seed, i >>> 3));
    for (; i < n; i++) seg.set(ValueLayout.JAVA_BYTE, i, (byte) (word(seed, i >>> 3) >>> ((i & 7) * 8)));
  }

  static long crc(MemorySegment seg) {
    CRC32 c = new CRC32();
    c.update(seg.asByteBuffer());
    return c.getValue();
  }
}
