package org.mori4j.io.kv;

/**
 * Where the batch calls of one layer range end: the first call carries {@code first} layers, each next one twice as
 * many as the one before, every end (but the range's own) on a multiple of {@code unit} layers so that no buffer pair
 * is split over two calls ({@link KvTransferPlan.Prepared#layerUnit}). Doubling keeps the calls few (a 80-layer
 * range starting at 1 layer: 7 calls) while the first one is small enough to put the GPU (or the wire) to work
 * within one layer's planning, and each next call is planned and issued while the previous, half as large, copies.
 * {@code first} 0 means one call for the whole range.
 */
final class KvChunks {
  private final int to;
  private final int unit;
  private long size;

  KvChunks(int from, int to, int first, int unit) {
    if (from < 0 || from >= to) throw new IllegalArgumentException("layer range [" + from + ", " + to + ") is empty or negative");
    if (first < 0) throw new IllegalArgumentException("first must be at least 0: " + first);
    if (unit < 1) throw new IllegalArgumentException("unit must be at least 1: " + unit);
    this.to = to;
    this.unit = unit;
    this.size = first == 0 ? Long.MAX_VALUE : first;
  }

  /** The end of the call that starts at layer {@code a} (exclusive), at most the range's end. */
  int next(int a) {
    if (size >= to - a) return to;
    long b = a + size;
    b = (b + unit - 1) / unit * unit;
    size *= 2;
    return (int) Math.min(to, b);
  }
}
