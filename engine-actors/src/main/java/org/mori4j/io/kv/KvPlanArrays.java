package org.mori4j.io.kv;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The offset and size arrays of a cache's migration plans, kept for the next plan once a batch call has returned
 * (the engine's contract: a caller may reuse its arrays as soon as {@code batchRead}/{@code batchWrite} returns; a
 * backend that reads them later copies them first). A scattered Llama-3-70B 4,096-token migration builds 80 batches
 * of three 512-entry arrays, ~1 MB that the caller's thread otherwise allocated and zeroed per migration; the same
 * cache moving requests of similar size reuses them instead. Arrays are kept by exact length (the engine takes
 * {@code long[]} whose length is the block count), up to {@code mori4j.kv.plan-pool-bytes} in all; beyond that, and
 * for lengths not asked for again, they are left to the collector. Thread-safe: migrations of one cache may plan on
 * several threads at once (one short lock per take or give).
 */
final class KvPlanArrays {
  private final long maxBytes;
  private final Map<Integer, ArrayDeque<long[]>> byLength = new HashMap<>();
  private long pooledBytes;
  private long taken, reused;

  /** A pool that keeps at most {@code maxBytes} of arrays (0: keeps none, every take allocates). */
  KvPlanArrays(long maxBytes) {
    if (maxBytes < 0) throw new IllegalArgumentException("maxBytes must be at least 0: " + maxBytes);
    this.maxBytes = maxBytes;
  }

  /** An array of exactly {@code length} longs: a kept one (its contents are stale: the caller overwrites every entry it reads) or a new one. */
  long[] take(int length) {
    if (maxBytes > 0) {
      synchronized (this) {
        taken++;
        ArrayDeque<long[]> q = byLength.get(length);
        long[] a = q == null ? null : q.pollLast();
        if (a != null) {
          pooledBytes -= 8L * length;
          reused++;
          return a;
        }
      }
    }
    return new long[length];
  }

  /** Keeps {@code a} for a later {@link #take} of its length; the caller must not use it again. */
  void give(long[] a) {
    if (maxBytes == 0 || a.length == 0) return;
    long bytes = 8L * a.length;
    synchronized (this) {
      if (pooledBytes + bytes > maxBytes) return;
      byLength.computeIfAbsent(a.length, k -> new ArrayDeque<>()).addLast(a);
      pooledBytes += bytes;
    }
  }

  /** Bytes kept now. */
  synchronized long pooledBytes() {
    return pooledBytes;
  }

  /** Takes so far, and how many of them were served from the pool (for tests and the bench's report). */
  synchronized long[] takenAndReused() {
    return new long[] {taken, reused};
  }
}
