package org.mori4j.bench.kv;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.kv.KvCache;

/**
 * kv-bench's view of the receiving cache: when a request's layers landed there (as the receiver heard it), and
 * the byte check's fill and CRC of its blocks. The receiver is a second JVM ({@link KvBenchLink}, TCP and
 * two-process XGMI) or a cache of this JVM ({@link InProcess}, single-process XGMI).
 */
interface KvBenchReceiver extends AutoCloseable {
  /** Waits until {@code layers} layers of {@code request} landed; the latest landing's nanoTime, or -1 on timeout. */
  long awaitLanded(String request, int layers, Duration timeout) throws InterruptedException;

  /** When the receiver heard that {@code layer} of {@code request} landed (its nanoTime), or -1 if it has not. */
  long layerLandedAt(String request, int layer);

  /**
   * When the receiver's own backend recorded the last write before it heard {@code layer} of {@code request}
   * landed (its nanoTime; for a layer sent alone on an idle link, that layer's write), or -1 where its backend is
   * never told of writes (XGMI) or it has not heard.
   */
  long layerWriteLandedAt(String request, int layer);

  /** When the receiver's backend recorded write {@code uid} of this side's engine (its nanoTime), or -1 if unknown. */
  long writeLandedAt(long uid) throws InterruptedException;

  /** Drops what both sides know of {@code request}. */
  void forget(String request);

  /** Fresh bytes from {@code seed} into the receiver's {@code blocks}. */
  void fill(long seed, int[] blocks) throws InterruptedException;

  /** The CRC32C of the receiver's {@code blocks} ({@link KvBenchCheck#sum}). */
  long sum(int[] blocks) throws InterruptedException;

  @Override
  void close();

  /** Landed layers per request, counted as the news arrives; waiters block on the monitor (no spinning). */
  final class Landings {
    /** Per request: [layers landed, latest landing nanoTime]. */
    private final Map<String, long[]> landed = new HashMap<>();
    /** Per request: each layer's landing nanoTime (0: not yet), for the stream's stage breakdown. */
    private final Map<String, long[]> byLayer = new HashMap<>();
    /** Per request: when the receiver's backend recorded the last write before each layer was heard (0: unknown). */
    private final Map<String, long[]> wireByLayer = new HashMap<>();

    synchronized void landed(String request, int from, int to, long at, long wireAt) {
      if (wireAt > 0) {
        long[] w = wireByLayer.computeIfAbsent(request, k -> new long[to]);
        if (w.length < to) wireByLayer.put(request, w = java.util.Arrays.copyOf(w, to));
        for (int i = from; i < to; i++) w[i] = wireAt;
      }
      long[] a = landed.computeIfAbsent(request, k -> new long[2]);
      a[0] += to - from;
      a[1] = Math.max(a[1], at);
      long[] l = byLayer.computeIfAbsent(request, k -> new long[to]);
      if (l.length < to) byLayer.put(request, l = java.util.Arrays.copyOf(l, to));
      for (int i = from; i < to; i++) l[i] = at;
      notifyAll();
    }

    synchronized long layerAt(String request, int layer) {
      long[] l = byLayer.get(request);
      return l == null || layer >= l.length || l[layer] == 0 ? -1 : l[layer];
    }

    synchronized long wireAt(String request, int layer) {
      long[] l = wireByLayer.get(request);
      return l == null || layer >= l.length || l[layer] == 0 ? -1 : l[layer];
    }

    synchronized long await(String request, int layers, Duration timeout) throws InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (true) {
        long[] a = landed.get(request);
        if (a != null && a[0] >= layers) return a[1];
        long left = deadline - System.nanoTime();
        if (left <= 0) return -1;
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
    }

    synchronized void forget(String request) {
      landed.remove(request);
      byLayer.remove(request);
      wireByLayer.remove(request);
    }
  }

  /** The receiving cache in this JVM; its landings heard through {@link KvCache#subscribe}. */
  final class InProcess implements KvBenchReceiver {
    private final KvCache cache;
    private final KvBenchMemory memory;
    private final Landings landings = new Landings();
    private final AutoCloseable subscription;

    InProcess(KvCache cache, KvBenchMemory memory) {
      this.cache = cache;
      this.memory = memory;
      this.subscription = cache.subscribe(e -> {
        if (!e.failed()) landings.landed(e.requestId(), e.fromLayer(), e.toLayer(), System.nanoTime(), 0);
      });
    }

    @Override
    public long awaitLanded(String request, int layers, Duration timeout) throws InterruptedException {
      return landings.await(request, layers, timeout);
    }

    @Override
    public long layerLandedAt(String request, int layer) {
      return landings.layerAt(request, layer);
    }

    @Override
    public long layerWriteLandedAt(String request, int layer) {
      return -1; // XGMI targets are never told of writes
    }

    @Override
    public long writeLandedAt(long uid) {
      return -1;
    }

    @Override
    public void forget(String request) {
      landings.forget(request);
      cache.forget(request);
    }

    @Override
    public void fill(long seed, int[] blocks) {
      KvBenchCheck.fill(memory, blocks, seed);
    }

    @Override
    public long sum(int[] blocks) {
      return KvBenchCheck.sum(memory, blocks);
    }

    @Override
    public void close() {
      try {
        subscription.close();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
  }
}
