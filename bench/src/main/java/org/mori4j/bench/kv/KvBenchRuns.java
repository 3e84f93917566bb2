package org.mori4j.bench.kv;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.mori4j.bench.jmh.ThreadAllocation;
import org.mori4j.io.IoEngine;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheDesc;
import org.mori4j.io.kv.KvMigration;
import org.mori4j.io.kv.KvTransferPlan;

/**
 * The timed loops of kv-bench. Each iteration of a migration row also times, right beside it, the same bytes as
 * one contiguous transfer and the engine's single 64 MiB write, so a row's ratios compare transfers that ran under
 * the same load (on a shared 2-core host the load moves more than the ratios do). Streamed rows are
 * {@link KvBenchStream}'s.
 */
final class KvBenchRuns {
  static final long SINGLE_REFERENCE_BYTES = 64L << 20;
  private static final Duration LIMIT = Duration.ofSeconds(120);

  record Stats(long bytes, long[] nanos) {
    long p50Nanos() { return pct(0.50); }

    long p99Nanos() { return pct(0.99); }

    long pct(double q) {
      long[] s = nanos.clone();
      Arrays.sort(s);
      return s[Math.min(s.length - 1, Math.max(0, (int) Math.ceil(q * s.length) - 1))];
    }

    double avgBwGBps() {
      return bytes * (double) nanos.length / Arrays.stream(nanos).sum();
    }
  }

  /** A row's migrations and, from the same iterations, the contiguous transfer and the single 64 MiB write. */
  record Paired(Stats run, Stats contiguous, Stats single64) {}

  private final IoEngine engine;
  private final MemoryDesc region;
  private final MemoryDesc remoteRegion;
  private final KvBenchReceiver link;
  private final int warmup;
  private final int iters;
  /** Bytes the calling thread allocated inside the last {@link #migrate}'s {@code migrate()} call (-1: the JVM cannot say). */
  private long lastCallAllocated = -1;

  KvBenchRuns(IoEngine engine, MemoryDesc region, MemoryDesc remoteRegion, KvBenchReceiver link, int warmup, int iters) {
    this.engine = engine;
    this.region = region;
    this.remoteRegion = remoteRegion;
    this.link = link;
    this.warmup = warmup;
    this.iters = iters;
  }

  /** One contiguous transfer of {@code bytes} from the start of the regions; its time. */
  long once(long bytes, boolean read) {
    long t0 = System.nanoTime();
    TransferStatus s = read ? engine.read(region, 0, remoteRegion, 0, bytes, engine.allocateTransferUid())
        : engine.write(region, 0, remoteRegion, 0, bytes, engine.allocateTransferUid());
    s.await();
    long t = System.nanoTime() - t0;
    KvBenchCommand.check(s, "contiguous " + bytes + " bytes");
    return t;
  }

  Stats contiguous(long bytes, boolean read) {
    long[] t = new long[iters];
    for (int i = -warmup; i < iters; i++) {
      long n = once(bytes, read);
      if (i >= 0) t[i] = n;
    }
    return new Stats(bytes, t);
  }

  Paired migrations(KvCache local, KvCacheDesc remote, int[] src, int[] dst, KvMigration.Mode mode, String tag, long bytes)
      throws InterruptedException {
    boolean pull = mode == KvMigration.Mode.PULL;
    long[] t = new long[iters], c = new long[iters], s = new long[iters], alloc = new long[iters];
    long launches = 0;
    long[] reuse0 = local.planArrayReuse();
    KvBenchTrace trace = KvBenchTrace.on() ? new KvBenchTrace() : null;
    for (int i = -warmup; i < iters; i++) {
      long ct = once(bytes, pull);
      long before = engine.metrics().getXgmiKernelLaunches();
      // the trace's window (MORI4J_XGMI_TRACE=1) spans the timed call; opened here only: windows are one at a time per
      // process, and the pairs' runs call migrate on several threads at once
      if (trace != null) org.mori4j.transport.xgmi.XgmiTrace.begin();
      long mt = migrate(local, remote, src, dst, mode, tag + "-" + i);
      if (trace != null && i >= 0) trace.add(org.mori4j.transport.xgmi.XgmiTrace.end());
      if (i >= 0) launches += engine.metrics().getXgmiKernelLaunches() - before;
      long st = once(SINGLE_REFERENCE_BYTES, false);
      if (i >= 0) {
        t[i] = mt;
        c[i] = ct;
        s[i] = st;
        alloc[i] = lastCallAllocated;
      }
    }
    // the caller's own allocation in migrate() (plans, the engine call; not the backend's threads): ~0 for the plan
    // arrays once the cache's pool (mori4j.kv.plan-pool-bytes) serves them
    long[] reuse = local.planArrayReuse();
    if (ThreadAllocation.currentThreadBytes() >= 0) System.err.printf(java.util.Locale.ROOT,
        "kv-bench %s: caller thread allocated %.1f KiB per migrate() call (p50 of %d; min %.1f, max %.1f); plan arrays %d taken, %d from the cache's pool%n",
        tag, new Stats(1, alloc).p50Nanos() / 1024.0, iters, Arrays.stream(alloc).min().orElse(0) / 1024.0, Arrays.stream(alloc).max().orElse(0) / 1024.0,
        reuse[0] - reuse0[0], reuse[1] - reuse0[1]);
    // how the migration reached the GPU: one launch per buffer pair, fewer when entries were fused (XGMI only)
    if (launches > 0) System.err.printf(java.util.Locale.ROOT, "kv-bench %s: %.1f XGMI kernel launches per migration (this engine's metric)%n", tag,
        (double) launches / iters);
    String traced = trace == null ? null : trace.summary(tag);
    if (traced != null) System.err.println(traced);
    return new Paired(new Stats(bytes, t), new Stats(bytes, c), new Stats(SINGLE_REFERENCE_BYTES, s));
  }

  /** One whole migration: call to completion on this side (the receiver hears of it after; that is awaited untimed). */
  long migrate(KvCache local, KvCacheDesc remote, int[] src, int[] dst, KvMigration.Mode mode, String req) throws InterruptedException {
    long a0 = ThreadAllocation.currentThreadBytes();
    long t0 = System.nanoTime();
    KvMigration m = local.migrate(req, src, remote, dst, mode);
    lastCallAllocated = a0 >= 0 ? ThreadAllocation.currentThreadBytes() - a0 : -1;
    if (!m.await(LIMIT)) throw new IllegalStateException("migration " + req + " still running after " + LIMIT);
    long t = System.nanoTime() - t0;
    // kv-bench saw the handle complete (a no-op unless migrations() opened a trace window)
    if (KvBenchTrace.on()) org.mori4j.transport.xgmi.XgmiTrace.first(org.mori4j.transport.xgmi.XgmiTrace.OBSERVED);
    KvBenchCommand.check(m);
    if (mode == KvMigration.Mode.PULL) local.forget(req);
    else {
      if (link.awaitLanded(req, local.layout().layers(), LIMIT) < 0) throw new IllegalStateException("the receiver never heard that " + req + " landed");
      link.forget(req);
    }
    return t;
  }

  /**
   * One layer's transfer on an idle link: {@code sendLayers} of layer 0 to the receiver hearing it landed (the
   * same two ends as the exposed time); the other layers follow untimed.
   */
  Stats oneLayer(KvCache local, KvCacheDesc remote, int[] src, int[] dst, String tag) throws InterruptedException {
    int layers = local.layout().layers();
    long[] t = new long[iters];
    for (int i = -warmup; i < iters; i++) {
      String req = tag + "-" + i;
      KvMigration m = local.openStream(req, src, remote, dst);
      long t0 = System.nanoTime();
      m.sendLayers(0, 1);
      long at = link.awaitLanded(req, 1, LIMIT);
      if (at < 0) throw new IllegalStateException("the receiver never heard that layer 0 of " + req + " landed");
      if (layers > 1) m.sendLayers(1, layers);
      if (link.awaitLanded(req, layers, LIMIT) < 0 || !m.await(LIMIT)) throw new IllegalStateException("stream " + req + " did not finish");
      KvBenchCommand.check(m);
      link.forget(req);
      if (i >= 0) t[i] = at - t0;
    }
    return new Stats(local.layout().blockBytes() * local.layout().tensorsPerLayer() * src.length, t);
  }

  /**
   * The byte check: fresh bytes into the source blocks, one more (untimed) migration of the row's mode, then a
   * CRC of the destination's blocks against the source's, slot by slot in block-list order. Returns the slots
   * checked; a mismatch throws.
   */
  int verify(KvCache local, KvBenchMemory localMemory, KvCacheDesc remote, int[] src, int[] dst, KvMigration.Mode mode, String req,
             long seed) throws InterruptedException {
    boolean pull = mode == KvMigration.Mode.PULL;
    int layers = local.layout().layers();
    if (pull) link.fill(seed, src);
    else KvBenchCheck.fill(localMemory, src, seed);
    if (mode == KvMigration.Mode.STREAM) {
      KvMigration m = local.openStream(req, src, remote, dst);
      for (int l = layers - 1; l >= 0; l--) m.sendLayers(l, l + 1); // out of order on purpose
      if (!m.await(LIMIT)) throw new IllegalStateException("check stream " + req + " still running");
      KvBenchCommand.check(m);
      if (link.awaitLanded(req, layers, LIMIT) < 0) throw new IllegalStateException("the receiver never heard that " + req + " landed");
      link.forget(req);
    } else migrate(local, remote, src, dst, mode, req);
    long remoteSum = link.sum(pull ? src : dst);
    long localSum = KvBenchCheck.sum(localMemory, pull ? dst : src);
    if (remoteSum != localSum)
      throw new IllegalStateException("byte check of " + req + " (" + mode + "): CRC32C of the destination's blocks " + Long.toHexString(pull ? localSum : remoteSum)
          + " differs from the source's " + Long.toHexString(pull ? remoteSum : localSum));
    return src.length * layers * local.layout().tensorsPerLayer();
  }

  /** One transfer per (layer, tensor, block) slot, all issued, then all awaited. */
  Stats naive(KvTransferPlan plan, KvCache local, KvCacheDesc remote, boolean pull, int runs) {
    // the plan's coalesced entries split back into block-sized pieces: the same bytes, one request each
    long blockBytes = local.layout().blockBytes();
    long[] t = new long[runs];
    List<TransferStatus> st = new ArrayList<>(plan.blockSlots());
    for (int i = -1; i < runs; i++) {
      st.clear();
      long t0 = System.nanoTime();
      for (KvTransferPlan.Batch b : plan.batches()) {
        // the plan runs from this cache to the remote one; a pull reads the same slots the other way
        MemoryDesc l = local.desc().buffers().get(b.srcBuffer()), r = remote.buffers().get(b.dstBuffer());
        for (int j = 0; j < b.count(); j++)
          for (long off = 0; off < b.sizes()[j]; off += blockBytes) {
            long lo = b.srcOffsets()[j] + off, ro = b.dstOffsets()[j] + off;
            st.add(pull ? engine.read(l, lo, r, ro, blockBytes, engine.allocateTransferUid())
                : engine.write(l, lo, r, ro, blockBytes, engine.allocateTransferUid()));
          }
      }
      StatusCode c = engine.waitAll(st, LIMIT);
      if (c != StatusCode.SUCCESS) throw new IllegalStateException("per-block loop: " + c);
      if (i >= 0) t[i] = System.nanoTime() - t0;
    }
    return new Stats(plan.bytes(), t);
  }
}
