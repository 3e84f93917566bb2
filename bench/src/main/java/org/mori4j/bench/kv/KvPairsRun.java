package org.mori4j.bench.kv;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheDesc;
import org.mori4j.io.kv.KvMigration;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * The pairs of a multi-pair kv-bench run and the phases they run together: one {@link KvBenchSetup} per pair (its
 * prefill engine and cache in this JVM; its decode engine in a JVM of its own, or in this JVM with
 * {@code --xgmi-single-process}), each pair on a thread of its own, every phase released for all pairs at once by a
 * barrier ({@link #together}), each pair's time taken from that common release to its own end, so the slowest pair
 * of an iteration is the iteration's time. Owns the setups, the registered caches and the threads; closes them in
 * reverse order.
 */
final class KvPairsRun implements AutoCloseable {
  private static final Duration LIMIT = Duration.ofSeconds(120);

  /** One pair's part of a phase, on its own thread after the common release; returns its end (System.nanoTime). */
  interface Task {
    long run(int pair) throws Exception;
  }

  final KvPairs pairs;
  final List<KvBenchSetup> sides = new ArrayList<>();
  final List<KvCache> caches = new ArrayList<>();
  final List<KvBenchRuns> runs = new ArrayList<>();
  final ExecutorService pool;

  private KvPairsRun(KvPairs pairs) {
    this.pairs = pairs;
    this.pool = Executors.newFixedThreadPool(pairs.size(), Thread.ofPlatform().daemon().name("kv-bench-pair-", 0).factory());
  }

  /** Starts every pair's engines (the decode JVMs all at once) and registers each prefill cache. */
  static KvPairsRun start(KvPairs pairs, KvModel m, int blockTokens, int capacity, long contiguous, GpuRuntime gpu, boolean singleProcess,
                          int warmup, int iters) throws Exception {
    KvPairsRun r = new KvPairsRun(pairs);
    try {
      List<Future<KvBenchSetup>> started = new ArrayList<>();
      for (KvPairs.Pair p : pairs.pairs())
        started.add(r.pool.submit(() -> new KvBenchSetup(m, blockTokens, capacity, contiguous, gpu, p.prefill(), p.decode(), singleProcess, "-" + p.index())));
      Exception first = null;
      for (Future<KvBenchSetup> f : started) {
        try {
          r.sides.add(f.get());
        } catch (ExecutionException e) {
          if (first == null) first = e.getCause() instanceof Exception c ? c : e;
        }
      }
      if (first != null) throw first;
      for (int k = 0; k < pairs.size(); k++) {
        KvBenchSetup s = r.sides.get(k);
        r.caches.add(s.memory.register(s.engine, "kv-bench"));
        r.runs.add(new KvBenchRuns(s.engine, s.region, s.remoteRegion, s.receiver, warmup, iters));
      }
      return r;
    } catch (Exception | Error e) {
      r.close();
      throw e;
    }
  }

  KvCacheDesc remote(int k) {
    return sides.get(k).remote;
  }

  /**
   * Runs {@code t} for every pair at once: all threads wait at a barrier, the last to arrive stamps the release,
   * and each pair's time is its end minus that release. Returns the times (ns), by pair.
   */
  static long[] together(ExecutorService pool, int n, Task t) throws Exception {
    long[] release = new long[1];
    CyclicBarrier barrier = new CyclicBarrier(n, () -> release[0] = System.nanoTime());
    List<Future<Long>> ends = new ArrayList<>(n);
    for (int k = 0; k < n; k++) {
      int pair = k;
      ends.add(pool.submit(() -> {
        barrier.await(LIMIT.toSeconds(), TimeUnit.SECONDS);
        return t.run(pair);
      }));
    }
    long[] out = new long[n];
    Exception first = null;
    for (int k = 0; k < n; k++) {
      try {
        out[k] = ends.get(k).get(2 * LIMIT.toSeconds(), TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        Throwable c = e.getCause();
        // a pair that broke the barrier leaves the others a BrokenBarrierException: report the cause, not those
        if (first == null || first instanceof BrokenBarrierException)
          first = c instanceof Exception x ? x : new IllegalStateException(c);
      } catch (TimeoutException e) {
        if (first == null) first = new IllegalStateException("pair " + k + " still running after " + 2 * LIMIT.toSeconds() + " s");
      }
    }
    if (first != null) throw first;
    for (int k = 0; k < n; k++) out[k] -= release[0];
    return out;
  }

  long[] together(Task t) throws Exception {
    return together(pool, pairs.size(), t);
  }

  /** Every pair's engine moves {@code bytes} as one contiguous write (or read) at once. */
  long[] contiguous(long bytes, boolean read) throws Exception {
    return together(k -> {
      long t0 = System.nanoTime();
      return t0 + runs.get(k).once(bytes, read);
    });
  }

  /** Every pair migrates its request at once (push or pull): call to completion at the sender. */
  long[] migrate(int[][] src, int[][] dst, KvMigration.Mode mode, String req) throws Exception {
    return together(k -> {
      long t0 = System.nanoTime();
      return t0 + runs.get(k).migrate(caches.get(k), remote(k), src[k], dst[k], mode, req + "-p" + k);
    });
  }

  /**
   * Every pair streams its request at once behind a simulated prefill of {@code computeNanos} per layer (each
   * layer sent with {@code sendLayers} when "computed"; the streams were opened before the release). Returns,
   * by pair, {release to the receiver hearing every layer landed, last {@code sendLayers} to that (the exposed
   * time)} in ns.
   */
  long[][] stream(int[][] src, int[][] dst, String req, long computeNanos) throws Exception {
    int n = pairs.size(), layers = caches.getFirst().layout().layers();
    KvMigration[] m = new KvMigration[n];
    long[] exposed = new long[n];
    for (int k = 0; k < n; k++) m[k] = caches.get(k).openStream(req + "-p" + k, src[k], remote(k), dst[k]);
    long[] total = together(k -> {
      long next = System.nanoTime(), lastSend = next;
      for (int l = 0; l < layers; l++) {
        next += computeNanos;
        // the prefill "computes" layer l: parked, since a spinning thread would take a core from the I/O threads
        for (long left; (left = next - System.nanoTime()) > 0; ) LockSupport.parkNanos(left);
        lastSend = System.nanoTime();
        m[k].sendLayers(l, l + 1);
      }
      // the receiver's stamp: System.nanoTime is CLOCK_MONOTONIC on Linux, one clock for every process of the host
      long at = sides.get(k).receiver.awaitLanded(req + "-p" + k, layers, LIMIT);
      if (at < 0) throw new IllegalStateException("the receiver of pair " + k + " never heard that every layer of " + req + " landed");
      exposed[k] = at - lastSend;
      return at;
    });
    for (int k = 0; k < n; k++) {
      if (!m[k].await(LIMIT)) throw new IllegalStateException("stream " + req + " of pair " + k + " still running after " + LIMIT);
      KvBenchCommand.check(m[k]);
      sides.get(k).receiver.forget(req + "-p" + k);
    }
    return new long[][] {total, exposed};
  }

  /**
   * One layer through every pair at once, the reference for the exposed time: each pair opens a stream (before the
   * release), sends layer 0 alone at the release and waits until its receiver heard it landed; the other layers
   * follow untimed. Returns, by pair, release to that hearing (ns).
   */
  long[] oneLayer(int[][] src, int[][] dst, String req) throws Exception {
    int n = pairs.size(), layers = caches.getFirst().layout().layers();
    KvMigration[] m = new KvMigration[n];
    for (int k = 0; k < n; k++) m[k] = caches.get(k).openStream(req + "-p" + k, src[k], remote(k), dst[k]);
    long[] t = together(k -> {
      m[k].sendLayers(0, 1);
      long at = sides.get(k).receiver.awaitLanded(req + "-p" + k, 1, LIMIT);
      if (at < 0) throw new IllegalStateException("the receiver of pair " + k + " never heard that layer 0 of " + req + " landed");
      return at;
    });
    for (int k = 0; k < n; k++) {
      if (layers > 1) m[k].sendLayers(1, layers);
      if (sides.get(k).receiver.awaitLanded(req + "-p" + k, layers, LIMIT) < 0 || !m[k].await(LIMIT))
        throw new IllegalStateException("stream " + req + " of pair " + k + " did not finish");
      KvBenchCommand.check(m[k]);
      sides.get(k).receiver.forget(req + "-p" + k);
    }
    return t;
  }

  /** Every pair's byte check at once ({@link KvBenchRuns#verify}): fresh bytes, one more migration, CRCs compared. */
  int verify(int[][] src, int[][] dst, KvMigration.Mode mode, String req, long seed) throws Exception {
    int[] slots = new int[pairs.size()];
    together(k -> {
      KvBenchSetup s = sides.get(k);
      slots[k] = runs.get(k).verify(caches.get(k), s.memory, remote(k), src[k], dst[k], mode, req + "-p" + k, seed * 31 + k);
      return System.nanoTime();
    });
    int all = 0;
    for (int v : slots) all += v;
    return all;
  }

  @Override
  public void close() {
    pool.shutdownNow();
    RuntimeException first = null;
    for (int i = caches.size() - 1; i >= 0; i--) {
      try {
        caches.get(i).close();
      } catch (RuntimeException e) {
        if (first == null) first = e;
      }
    }
    for (int i = sides.size() - 1; i >= 0; i--) {
      try {
        sides.get(i).close();
      } catch (RuntimeException e) {
        if (first == null) first = e;
      }
    }
    if (first != null) throw first;
  }
}
