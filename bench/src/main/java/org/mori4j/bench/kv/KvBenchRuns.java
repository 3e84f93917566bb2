package org.mori4j.bench.kv;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.IoEngine;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheDesc;
import org.mori4j.io.kv.KvMigration;
import org.mori4j.io.kv.KvTransferPlan;

/** The timed loops of kv-bench: migrations, streams, the contiguous transfer and the per-block loop. */
final class KvBenchRuns {
  private static final Duration LIMIT = Duration.ofSeconds(120);

  record Stats(long bytes, long[] nanos) {
    long p50Nanos() { return pct(0.50); }

    long p99Nanos() { return pct(0.99); }

    long pct(double q) {
      long[] s = nanos.clone();
      Arrays.sort(s);
      return s[Math.min(s.length - 1, (int) Math.ceil(q * s.length) - 1)];
    }

    double avgBwGBps() {
      return bytes * (double) nanos.length / Arrays.stream(nanos).sum();
    }
  }

  /** Exposed times (last sendLayers to all landed) and one layer's transfer time (sendLayers to its completion here). */
  record StreamStats(Stats exposed, Stats layer, Stats total) {}

  private final IoEngine engine;
  private final MemoryDesc region;
  private final MemoryDesc remoteRegion;
  private final KvBenchCommand.ChildLink link;
  private final int warmup;
  private final int iters;

  KvBenchRuns(IoEngine engine, MemoryDesc region, MemoryDesc remoteRegion, KvBenchCommand.ChildLink link, int warmup, int iters) {
    this.engine = engine;
    this.region = region;
    this.remoteRegion = remoteRegion;
    this.link = link;
    this.warmup = warmup;
    this.iters = iters;
  }

  Stats contiguous(long bytes, boolean read) {
    long[] t = new long[iters];
    for (int i = -warmup; i < iters; i++) {
      long t0 = System.nanoTime();
      TransferStatus s = read ? engine.read(region, 0, remoteRegion, 0, bytes, engine.allocateTransferUid())
          : engine.write(region, 0, remoteRegion, 0, bytes, engine.allocateTransferUid());
      s.await();
      KvBenchCommand.check(s, "contiguous " + bytes + " bytes");
      if (i >= 0) t[i] = System.nanoTime() - t0;
    }
    return new Stats(bytes, t);
  }

  Stats migrations(KvCache local, KvCacheDesc remote, int[] src, int[] dst, KvMigration.Mode mode, String tag) throws InterruptedException {
    long[] t = new long[iters];
    for (int i = -warmup; i < iters; i++) {
      String req = tag + "-" + i;
      long t0 = System.nanoTime();
      KvMigration m = local.migrate(req, src, remote, dst, mode);
      if (!m.await(LIMIT)) throw new IllegalStateException("migration " + req + " still running after " + LIMIT);
      long t1 = System.nanoTime();
      KvBenchCommand.check(m);
      if (mode == KvMigration.Mode.PUSH && link.awaitLanded(req, local.layout().layers(), LIMIT) < 0)
        throw new IllegalStateException("the receiver never heard that " + req + " landed");
      if (mode == KvMigration.Mode.PULL) local.forget(req);
      if (i >= 0) t[i] = t1 - t0;
    }
    return new Stats(bytesOf(local, src), t);
  }

  private static long bytesOf(KvCache c, int[] blocks) {
    return blocks.length * c.layout().bytesPerBlock();
  }

  StreamStats stream(KvCache local, KvCacheDesc remote, int[] src, int[] dst, String tag, long computeNanos) throws Exception {
    int layers = local.layout().layers();
    long[] exposed = new long[iters], layer = new long[iters], total = new long[iters];
    for (int i = -warmup; i < iters; i++) {
      String req = tag + "-" + i;
      KvMigration m = local.openStream(req, src, remote, dst);
      long start = System.nanoTime(), next = start;
      long lastSend = 0;
      CompletableFuture<Long> lastDone = null;
      for (int l = 0; l < layers; l++) {
        next += computeNanos;
        while (System.nanoTime() < next) Thread.onSpinWait(); // the prefill "computes" layer l
        lastSend = System.nanoTime();
        var chunk = m.sendLayers(l, l + 1);
        if (l == layers - 1) lastDone = chunk.toCompletableFuture().thenApply(c -> {
          if (c.code() != StatusCode.SUCCESS) throw new IllegalStateException(c.message());
          return System.nanoTime();
        });
      }
      long landedAt = link.awaitLanded(req, layers, LIMIT);
      if (landedAt < 0) throw new IllegalStateException("the receiver never heard that every layer of " + req + " landed");
      long lastChunkDone = lastDone.get(LIMIT.toSeconds(), TimeUnit.SECONDS);
      if (!m.await(LIMIT)) throw new IllegalStateException("stream " + req + " still running");
      KvBenchCommand.check(m);
      if (i >= 0) {
        exposed[i] = landedAt - lastSend;
        layer[i] = lastChunkDone - lastSend;
        total[i] = landedAt - start;
      }
    }
    long bytes = bytesOf(local, src);
    return new StreamStats(new Stats(bytes, exposed), new Stats(bytes / layers, layer), new Stats(bytes, total));
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
