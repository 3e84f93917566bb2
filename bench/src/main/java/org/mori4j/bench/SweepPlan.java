package org.mori4j.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The (message size, batch size) points a bench run measures and the buffer they need, following MORI's
 * benchmark: one point by default, message sizes doubling from {@code sweepStart} to {@code sweepMax} with
 * {@code --all}, batch sizes doubling from 1 to {@code --transfer-batch-size} with {@code --all-batch}, the
 * product of both when both are given. Block j of a point sits at offset {@code (j mod slots) * msgSize} in
 * both buffers, where {@code slots} is how many blocks fit the buffer: a point bigger than the buffer cap
 * (64 MiB x 128 would be 8 GiB) reuses the buffer instead of needing that much memory. Reused slots receive
 * the same bytes again, so bandwidth and the integrity check stay meaningful.
 *
 * @param points      the points in the order they run: by batch size, then by message size
 * @param bufferBytes bytes of the local and the target buffer, a multiple of 4096
 */
public record SweepPlan(List<Point> points, long bufferBytes) {
  /** Largest batch MORI sweeps ({@code --all-batch} goes up to 32768 there). */
  public static final int MAX_BATCH = 32768;
  private static final long PAGE = 4096;

  /**
   * One measured point.
   *
   * @param msgSize   bytes per block
   * @param batchSize blocks per iteration
   */
  public record Point(long msgSize, int batchSize) {
    public long totalBytes() {
      return msgSize * batchSize;
    }
  }

  public SweepPlan {
    points = List.copyOf(points);
  }

  /**
   * Builds the plan; every argument is checked and a bad one is named in the exception.
   *
   * @param msgSize        {@code --buffer-size}: the message size when not sweeping
   * @param batchSize      {@code --transfer-batch-size}
   * @param allSizes       {@code --all}
   * @param allBatches     {@code --all-batch}
   * @param sweepStart     first size of {@code --all}
   * @param sweepMax       last size of {@code --all}
   * @param maxBufferBytes cap on the buffer each side allocates
   */
  public static SweepPlan of(long msgSize, int batchSize, boolean allSizes, boolean allBatches, long sweepStart,
                             long sweepMax, long maxBufferBytes) {
    if (msgSize <= 0) throw new IllegalArgumentException("--buffer-size must be positive: " + msgSize);
    if (batchSize < 1 || batchSize > MAX_BATCH)
      throw new IllegalArgumentException("--transfer-batch-size must be in 1.." + MAX_BATCH + ": " + batchSize);
    if (sweepStart <= 0) throw new IllegalArgumentException("--sweep-start-size must be positive: " + sweepStart);
    if (sweepMax < sweepStart)
      throw new IllegalArgumentException("--sweep-max-size (" + sweepMax + ") is below --sweep-start-size (" + sweepStart + ")");
    if (maxBufferBytes <= 0) throw new IllegalArgumentException("--max-buffer-size must be positive: " + maxBufferBytes);

    List<Long> sizes = new ArrayList<>();
    if (allSizes) for (long s = sweepStart; s <= sweepMax && s > 0; s *= 2) sizes.add(s);
    else sizes.add(msgSize);
    List<Integer> batches = new ArrayList<>();
    if (allBatches) {
      for (int b = 1; b < batchSize; b *= 2) batches.add(b);
      batches.add(batchSize);
    } else {
      batches.add(batchSize);
    }
    List<Point> points = new ArrayList<>();
    long maxMsg = 0;
    long maxTotal = 0;
    for (int b : batches) {
      for (long s : sizes) {
        Point p = new Point(s, b);
        points.add(p);
        maxMsg = Math.max(maxMsg, s);
        maxTotal = Math.max(maxTotal, Math.multiplyExact(s, (long) b));
      }
    }
    // the buffer holds at least one whole message, so every block is contiguous and in bounds
    long buffer = Math.max(maxMsg, Math.min(maxTotal, maxBufferBytes));
    return new SweepPlan(points, roundUp(buffer, PAGE));
  }

  /** How many distinct blocks of {@code msgSize} a buffer of {@code capacity} bytes holds (at least 1). */
  public static int slots(long msgSize, int batchSize, long capacity) {
    if (msgSize > capacity)
      throw new IllegalArgumentException("message size " + msgSize + " does not fit the buffer of " + capacity + " bytes");
    return (int) Math.min(batchSize, capacity / msgSize);
  }

  /** The offsets of the {@code batchSize} blocks of a point within a buffer of {@code capacity} bytes. */
  public static long[] offsets(long msgSize, int batchSize, long capacity) {
    return offsets(msgSize, batchSize, capacity, false);
  }

  /**
   * As {@link #offsets(long, int, long)}; {@code reversed} lists the same slots from the last to the first, so
   * that no block starts where the one before it ends. The engine joins such neighbours into one transfer, so
   * sequential blocks measure one large copy, reversed ones every block on its own (a gather/scatter batch).
   */
  public static long[] offsets(long msgSize, int batchSize, long capacity, boolean reversed) {
    int slots = slots(msgSize, batchSize, capacity);
    long[] off = new long[batchSize];
    for (int j = 0; j < batchSize; j++) off[j] = (reversed ? slots - 1 - j % slots : j % slots) * msgSize;
    return off;
  }

  static long roundUp(long v, long unit) {
    return Math.ceilDiv(v, unit) * unit;
  }
}
