package org.mori4j.io.internal;

/**
 * The plain, loop-per-step form of joining a batch's neighbouring blocks (those contiguous on both sides: fewer
 * entries on the wire, a copy instead of a kernel). The batch path joins in one pass ({@link BatchBlocks}); this
 * form is the reference its tests compare with, kept apart from {@link TransferPath}, which routes transfers.
 */
final class BlockJoin {
  private BlockJoin() {}

  /** How many blocks the batch has once neighbours contiguous on both sides are joined ({@link BatchBlocks#scan} counts them too). */
  static int joinedCount(long[] lo, long[] ro, long[] sizes) {
    int m = lo.length;
    for (int i = 1; i < lo.length; i++) if (joins(lo, ro, sizes, i)) m--;
    return m;
  }

  /** Writes the joined blocks into the first {@link #joinedCount} entries of {@code mlo}, {@code mro} and {@code ms}. */
  static void join(long[] lo, long[] ro, long[] sizes, long[] mlo, long[] mro, long[] ms) {
    int j = -1;
    for (int i = 0; i < lo.length; i++) {
      if (i > 0 && joins(lo, ro, sizes, i)) {
        ms[j] += sizes[i];
      } else {
        j++;
        mlo[j] = lo[i];
        mro[j] = ro[i];
        ms[j] = sizes[i];
      }
    }
  }

  /** Whether block {@code i} starts where block {@code i - 1} ends, on both sides. */
  private static boolean joins(long[] lo, long[] ro, long[] sizes, int i) {
    return lo[i - 1] + sizes[i - 1] == lo[i] && ro[i - 1] + sizes[i - 1] == ro[i];
  }
}
