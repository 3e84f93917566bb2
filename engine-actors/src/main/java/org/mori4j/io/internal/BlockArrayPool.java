package org.mori4j.io.internal;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Offset and size arrays for batch transfers, handed from a completed batch to a later one, so that a steady
 * stream of batches does not allocate (and, on a fresh heap, fault in) three arrays per batch. Used only for
 * backends that read a batch's arrays until they complete it and never afterwards
 * ({@link org.mori4j.transport.TransferBackend#readsBlocksOnlyUntilDone}); the status gives its arrays back
 * when it completes. Arrays come in power-of-two capacities; each capacity keeps at most
 * {@link #BYTES_KEPT_PER_CAPACITY} of idle arrays (at least one set), so an engine that once ran a huge batch
 * does not hold its arrays for good. Any thread may take and give.
 */
final class BlockArrayPool {
  /** Idle bytes kept per capacity. */
  static final long BYTES_KEPT_PER_CAPACITY = 4L << 20;
  private static final int MIN_SHIFT = 4;
  /** Largest pooled capacity: 1 << 20 blocks; bigger batches get arrays of their own. */
  private static final int MAX_SHIFT = 20;

  /** One batch's three arrays, of equal capacity. */
  static final class Arrays {
    final long[] localOffsets;
    final long[] remoteOffsets;
    final long[] sizes;
    final int bucket;

    private Arrays(int capacity, int bucket) {
      this.localOffsets = new long[capacity];
      this.remoteOffsets = new long[capacity];
      this.sizes = new long[capacity];
      this.bucket = bucket;
    }
  }

  @SuppressWarnings("unchecked")
  private final ConcurrentLinkedQueue<Arrays>[] idle = new ConcurrentLinkedQueue[MAX_SHIFT - MIN_SHIFT + 1];
  private final AtomicInteger[] idleCount = new AtomicInteger[idle.length];
  private final AtomicInteger created = new AtomicInteger();

  BlockArrayPool() {
    for (int i = 0; i < idle.length; i++) {
      idle[i] = new ConcurrentLinkedQueue<>();
      idleCount[i] = new AtomicInteger();
    }
  }

  /** Arrays of exactly {@code n} entries that belong to no pool ({@link #give} ignores them). */
  static Arrays unpooled(int n) {
    return new Arrays(n, -1);
  }

  /** Arrays of at least {@code n} entries (their contents are whatever the last batch left). */
  Arrays take(int n) {
    int shift = Math.max(MIN_SHIFT, 32 - Integer.numberOfLeadingZeros(Math.max(1, n - 1)));
    if (shift > MAX_SHIFT) return unpooled(n);
    int b = shift - MIN_SHIFT;
    Arrays a = idle[b].poll();
    if (a != null) {
      idleCount[b].decrementAndGet();
      return a;
    }
    created.incrementAndGet();
    return new Arrays(1 << shift, b);
  }

  /** Takes back arrays no one reads any more; keeps them unless their capacity already has enough idle. */
  void give(Arrays a) {
    if (a.bucket < 0) return;
    long bytes = 24L * a.sizes.length;
    long keep = Math.max(1, BYTES_KEPT_PER_CAPACITY / bytes);
    if (idleCount[a.bucket].incrementAndGet() > keep) {
      idleCount[a.bucket].decrementAndGet();
      return;
    }
    idle[a.bucket].offer(a);
  }

  /** Sets of arrays made so far (pooled capacities only), for tests. */
  int created() {
    return created.get();
  }

  /** Idle sets of arrays now, for tests. */
  int idle() {
    int n = 0;
    for (AtomicInteger c : idleCount) n += c.get();
    return n;
  }
}
