package org.mori4j.io.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The scan of a batch entry's offset and size arrays that checks every block against both regions, counts the
 * neighbours that join (contiguous on both sides), sums the bytes and finds the smallest and largest block: what
 * the batch path used to do in four loops (check, count, join, sum) and the XGMI worker again in a fifth. The
 * check is branch-free (the sign bits of the differences the conditions compare are or-ed together) and kept in a
 * loop of its own that C2 vectorizes, with a second loop that only asks whether any neighbours join; the sum and
 * bounds take no pass when every block has the same size. Only a batch that has a bad block takes the ordered
 * pass that names the first one, with the messages the engine has always given. Not thread-safe: one per call
 * (it is a handful of fields the JIT keeps in registers when the call is inlined). Public for the stage benchmark
 * ({@code XgmiBatchStagesBenchmark}); not an API.
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
    int n = lo.length;
    long s0 = sizes[0];
    // only or-reductions of arithmetic on the same index, in a body small enough for C2 to unroll and pack (a compare
    // with the next block in the same loop kept it scalar: 4,096 blocks ~9 us, this loop ~0.7 us on the 2-core VM)
    long bad = 0, differ = 0;
    for (int i = 0; i < n; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      // negative exactly when one of: s <= 0, a < 0, a > localSize - s, b < 0, b > remoteSize - s (s > size is ls < 0,
      // and with ls >= 0, a >= 0 the difference ls - a cannot wrap)
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
      differ |= s ^ s0;
    }
    if (bad < 0) return firstBad(lo, ro, sizes, localSize, remoteSize, ln, rn);
    // whether any block starts where the previous one ends on both sides (rare: a caller that could have sent one block)
    int joined = 0;
    if (anyJoin(lo, ro, sizes, n) < 0) {
      for (int i = 0; i < n - 1; i++) if (lo[i + 1] == lo[i] + sizes[i] && ro[i + 1] == ro[i] + sizes[i]) joined++;
    }
    if (differ == 0) {
      // every block the same size (the KV-cache case): no pass for the sum and the bounds (s0 * n is the sum, wrapped
      // as the sum would be)
      total = s0 * n;
      minBlock = s0;
      maxBlock = s0;
    } else {
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

  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

  /**
   * Negative exactly when some block {@code i + 1} starts where block {@code i} ends on both sides. Each neighbour is
   * read through a segment view of the same array: C2 keeps a loop that loads {@code lo[i]} and {@code lo[i + 1]}
   * from the array itself scalar (it does not pack two loads of one array at different offsets), while this form
   * vectorizes (4,096 blocks: ~2.2 us scalar, ~1.1 us vectorized on the 2-core VM). Its own method, so that its loop
   * body stays small enough for C2 to unroll and pack.
   */
  private static long anyJoin(long[] lo, long[] ro, long[] sizes, int n) {
    MemorySegment nextLo = MemorySegment.ofArray(lo), nextRo = MemorySegment.ofArray(ro);
    long any = 0;
    for (int i = 0; i < n - 1; i++) {
      long s = sizes[i];
      long d = (nextLo.getAtIndex(LONG, i + 1) - lo[i] - s) | (nextRo.getAtIndex(LONG, i + 1) - ro[i] - s);
      any |= ~(d | -d); // negative exactly when d == 0
    }
    return any;
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
