package org.mori4j.io.internal;

/**
 * The scan of a batch entry's offset and size arrays that checks every block against both regions, counts the
 * neighbours that join (contiguous on both sides), sums the bytes and finds the smallest and largest block: what
 * the batch path used to do in four loops (check, count, join, sum) and the XGMI worker again in a fifth. The
 * check is branch-free (the sign bits of the differences the conditions compare are or-ed together) and kept in a
 * method and loop of its own that C2 vectorizes, then a loop as small asks whether the sizes differ, then one scalar
 * pass counts the joins (reading the sizes, and summing them and finding their bounds, only when they differ). Only
 * a batch that has a bad block takes the ordered pass that names the first one, with the messages the engine has
 * always given. Not thread-safe: one per call (it is a handful of fields the JIT keeps in registers when the call is
 * inlined). Public for the stage benchmark ({@code XgmiBatchStagesBenchmark}); not an API.
 */
public final class BatchBlocks {
  /** Bytes of every block together. */
  long total;
  long minBlock;
  long maxBlock;
  /** Blocks that start where the previous one ends, on both sides (the batch has {@code length - joins} blocks once joined). */
  int joins;

  /**
   * Scans blocks {@code lo[i], ro[i], sizes[i]} (equal lengths, at least one) against a local region of
   * {@code localSize} bytes and a remote one of {@code remoteSize}; null when every block is good, otherwise the
   * message naming the first bad one ({@code ln}, {@code rn}: the arguments' names).
   */
  public String scan(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize, String ln, String rn) {
    long s0 = sizes[0];
    if (outOfBounds(lo, ro, sizes, localSize, remoteSize) < 0) return firstBad(lo, ro, sizes, localSize, remoteSize, ln, rn);
    boolean sizesDiffer = sizesDiffer(sizes, s0);
    int n = lo.length;
    // one scalar pass for the neighbours that join: a plain loop with a branch that is almost never taken (a caller
    // rarely sends neighbours it could have sent as one block), each block's ends kept for the next. C2 does not
    // vectorize a loop that loads lo[i] and lo[i - 1] of one array (nor of two arrays at different offsets), so this
    // pass runs at about one block per cycle; the branch-free forms were slower, and a segment view that vectorizes
    // in isolation ran at 18 us inside the scan on the 1x H100 host. With one block size (the KV-cache case) the pass
    // reads no sizes and sums nothing: JMH scan of 4,096 blocks on the 2-core VM 2.28 -> 2.15 us. Asking whether the
    // sizes differ inside the bounds loop instead (a second reduction there) made that loop slower in the JMH scan
    // (3.5-3.7 us), though not in a standalone loop: hence the tiny loop of its own.
    int joined = 0;
    long endLo = lo[0] + s0, endRo = ro[0] + s0;
    if (!sizesDiffer) {
      for (int i = 1; i < n; i++) {
        long a = lo[i], b = ro[i];
        if (a == endLo && b == endRo) joined++;
        endLo = a + s0;
        endRo = b + s0;
      }
      // no pass for the sum and the bounds (s0 * n is the sum, wrapped as the sum would be)
      total = s0 * n;
      minBlock = s0;
      maxBlock = s0;
    } else {
      for (int i = 1; i < n; i++) {
        long a = lo[i], b = ro[i], s = sizes[i];
        if (a == endLo && b == endRo) joined++;
        endLo = a + s;
        endRo = b + s;
      }
      // same-index reductions in a loop of their own (C2 packs them)
      long sum = 0, min = Long.MAX_VALUE, max = 0;
      for (int i = 0; i < n; i++) {
        long s = sizes[i];
        sum += s;
        min = Math.min(min, s);
        max = Math.max(max, s);
      }
      total = sum;
      minBlock = min;
      maxBlock = max;
    }
    joins = joined;
    return null;
  }

  /** Whether some block's size is not {@code s0}: one same-index or-reduction (C2 packs it; ~0.1 us for 4,096 blocks). */
  private static boolean sizesDiffer(long[] sizes, long s0) {
    long differ = 0;
    for (int i = 0; i < sizes.length; i++) differ |= sizes[i] ^ s0;
    return differ != 0;
  }

  /**
   * Negative exactly when some block is out of bounds or not positive: only or-reductions of arithmetic on the same
   * index, in a method and loop body of their own so that C2 unrolls and packs it whatever it makes of the caller
   * (4,096 blocks: ~0.7-1 us vectorized on the 2-core VM and the 1x H100 host; ~9 us when a compare with the next
   * block shares the loop).
   */
  private static long outOfBounds(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    long bad = 0;
    for (int i = 0; i < lo.length; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      // negative exactly when one of: s <= 0, a < 0, a > localSize - s, b < 0, b > remoteSize - s (s > size is ls < 0,
      // and with ls >= 0, a >= 0 the difference ls - a cannot wrap)
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
    }
    return bad;
  }

  /** The message for the first bad block, in the order and words of the engine's checks. */
  private static String firstBad(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize, String ln, String rn) {
    for (int i = 0; i < lo.length; i++) {
      long s = sizes[i];
      if (s <= 0) return "sizes[" + i + "] must be positive: " + s;
      if (lo[i] < 0 || lo[i] > localSize - s)
        return "localOffsets[" + i + "] " + lo[i] + " + size " + s + " exceeds " + ln + " size " + localSize;
      if (ro[i] < 0 || ro[i] > remoteSize - s)
        return "remoteOffsets[" + i + "] " + ro[i] + " + size " + s + " exceeds " + rn + " size " + remoteSize;
    }
    throw new IllegalStateException("the batch check flagged a block that the ordered check finds good");
  }

  /**
   * Writes the {@code length - joins} joined blocks into {@code mlo}, {@code mro}, {@code ms} and sets
   * {@link #minBlock}/{@link #maxBlock} to the joined blocks' (call after a {@link #scan} that returned null and found joins).
   */
  void join(long[] lo, long[] ro, long[] sizes, long[] mlo, long[] mro, long[] ms) {
    int j = -1;
    long nextLo = -1, nextRo = -1;
    for (int i = 0; i < lo.length; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      if (a == nextLo && b == nextRo) {
        ms[j] += s;
      } else {
        j++;
        mlo[j] = a;
        mro[j] = b;
        ms[j] = s;
      }
      nextLo = a + s;
      nextRo = b + s;
    }
    long min = Long.MAX_VALUE, max = 0;
    for (int k = 0; k <= j; k++) {
      min = Math.min(min, ms[k]);
      max = Math.max(max, ms[k]);
    }
    minBlock = min;
    maxBlock = max;
  }
}
