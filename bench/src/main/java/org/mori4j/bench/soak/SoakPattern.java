package org.mori4j.bench.soak;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The bytes the soak moves, derived from a seed so that the side that checks them needs nothing but the
 * seed: every node fills its read area with {@link #fixed} of the soak's seed (a reader verifies any range
 * of any node, whichever incarnation served it), and a write carries {@link #fill} of its own uid (the
 * writer reads the range back and compares). Eight bytes at a time from a 64-bit mix of seed and position,
 * so a byte moved to another offset, a stale block or a zeroed page never checks out.
 */
final class SoakPattern {
  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

  private SoakPattern() {}

  /** The 8-byte word at word index {@code word} of the stream of {@code seed}. */
  static long word(long seed, long word) {
    long z = seed + word * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** Fills {@code len} bytes (a multiple of 8) at {@code off} with the stream of {@code seed} from its start. */
  static void fill(MemorySegment seg, long off, long len, long seed) {
    for (long i = 0; i < len; i += 8) seg.set(LONG, off + i, word(seed, i >>> 3));
  }

  /** Fills the read area: the stream of {@code seed} indexed by absolute offset, so any sub-range checks on its own. */
  static void fixed(MemorySegment seg, long off, long len, long seed) {
    for (long i = 0; i < len; i += 8) seg.set(LONG, off + i, word(seed, (off + i) >>> 3));
  }

  /** The first differing byte offset (relative to {@code off}) against {@link #fill}, or -1 when all match. */
  static long checkFill(MemorySegment seg, long off, long len, long seed) {
    return checkStream(seg, off, len, seed, 0);
  }

  /**
   * As {@link #checkFill}, against the part of {@code seed}'s stream that starts at byte {@code streamOff}
   * (a block of a batch that landed somewhere else than its neighbours).
   */
  static long checkStream(MemorySegment seg, long off, long len, long seed, long streamOff) {
    for (long i = 0; i < len; i += 8) if (seg.get(LONG, off + i) != word(seed, (streamOff + i) >>> 3)) return i;
    return -1;
  }

  /**
   * The first differing byte offset of {@code len} bytes at {@code off} of {@code seg} against the read
   * area's bytes at {@code areaOff}, or -1 when all match.
   */
  static long checkFixed(MemorySegment seg, long off, long len, long seed, long areaOff) {
    for (long i = 0; i < len; i += 8) if (seg.get(LONG, off + i) != word(seed, (areaOff + i) >>> 3)) return i;
    return -1;
  }

  /** Overwrites a range with a value no pattern word is likely to be, so bytes not moved never check out. */
  static void poison(MemorySegment seg, long off, long len) {
    seg.asSlice(off, len).fill((byte) 0xA5);
  }
}
