package org.mori4j.bench.kv;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.io.IoEngine;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheDesc;
import org.mori4j.io.kv.KvMigration;
import org.mori4j.io.kv.KvTransferPlan;

/**
 * kv-bench's layer-streamed rows: a simulated prefill that sends each layer with {@code sendLayers} when it
 * "finishes" it (it sleeps: a GPU computes, and a spinning thread would take one of two cores from the I/O
 * threads), and where the exposed time goes. Per iteration it stamps every layer's {@code sendLayers} call, its
 * return, the sender's chunk completion (every transfer of the layer completed; "landed" was told to the
 * receiver just before) and the receiver hearing it landed, and splits the last layer's exposed time into the
 * backlog still in flight when it was sent, its own transfer and the landing notification's hop. After each
 * stream, with the link left idle for one prefill period as before the stream's last layer, it times one layer's
 * transfer through the engine (call to completion at the sender, no notification): the requests the stream issued
 * for its last layer (the reference: the layer cut for the TCP connections, {@link KvCache#batchParts}), the layer
 * as one batch on each of two connections, and the layer alone through {@code sendLayers}; then the engine's
 * single 64 MiB write, so that the exposed time is compared with a layer's transfer taken under the same load.
 * Every path is split into its call, its wire time (until the receiver's backend recorded the write) and the
 * rest ({@code stages}).
 */
final class KvBenchStream {
  private static final Duration LIMIT = Duration.ofSeconds(120);

  /**
   * Per iteration (index i): exposed time (last {@code sendLayers} to the receiver hearing all layers landed),
   * whole stream, one layer through the engine right after it, the 64 MiB write, and the last layer's stages:
   * layers still in flight when it was sent and how long they drained after, its {@code sendLayers} call, its
   * send-to-sender-completion time, and the notification hop (sender completion to receiver heard); plus the
   * notification hop's median over every layer of the stream.
   */
  record Stats(KvBenchRuns.Stats exposed, KvBenchRuns.Stats total, KvBenchRuns.Stats rawLayer, KvBenchRuns.Stats single64,
               long computeNanos, String pacing, long[] backlogLayers, long[] drainNanos, long[] submitNanos, long[] lastDoneNanos,
               long[] notifyNanos, long[] notifyAllLayersNanos, java.util.Map<String, long[]> stages) {}

  private void stage(java.util.Map<String, long[]> stages, String name, int i, long nanos) {
    stages.computeIfAbsent(name, k -> new long[iters])[i] = nanos;
  }

  private final IoEngine engine;
  private final KvBenchRuns runs;
  private final KvBenchReceiver link;
  private final int warmup;
  private final int iters;

  KvBenchStream(IoEngine engine, KvBenchRuns runs, KvBenchReceiver link, int warmup, int iters) {
    this.engine = engine;
    this.runs = runs;
    this.link = link;
    this.warmup = warmup;
    this.iters = iters;
  }

  Stats run(KvCache local, KvCacheDesc remote, int[] src, int[] dst, String tag, long computeNanos, String pacing) throws InterruptedException {
    int layers = local.layout().layers();
    KvTransferPlan lastLayer = KvTransferPlan.build(local.layout(), src, remote.layout(), dst, layers - 1, layers);
    long[] exposed = new long[iters], total = new long[iters], raw = new long[iters], single = new long[iters];
    long[] backlog = new long[iters], drain = new long[iters], submit = new long[iters], lastDone = new long[iters], hop = new long[iters],
        hopAll = new long[iters];
    java.util.Map<String, long[]> stages = new java.util.LinkedHashMap<>();
    for (int i = -warmup; i < iters; i++) {
      String req = tag + "-" + i;
      long[] send = new long[layers], ret = new long[layers];
      AtomicLongArray done = new AtomicLongArray(layers);
      List<CompletionStage<KvMigration.Chunk>> chunks = new ArrayList<>(layers);
      KvMigration m = local.openStream(req, src, remote, dst);
      long start = System.nanoTime(), next = start;
      for (int l = 0; l < layers; l++) {
        next += computeNanos;
        // the prefill "computes" layer l
        for (long left; (left = next - System.nanoTime()) > 0; ) LockSupport.parkNanos(left);
        send[l] = System.nanoTime();
        CompletionStage<KvMigration.Chunk> c = m.sendLayers(l, l + 1);
        ret[l] = System.nanoTime();
        int layer = l;
        chunks.add(c.whenComplete((x, e) -> done.set(layer, System.nanoTime())));
      }
      long landedAt = link.awaitLanded(req, layers, LIMIT);

      if (landedAt < 0) throw new IllegalStateException("the receiver never heard that every layer of " + req + " landed");
      if (!m.await(LIMIT)) throw new IllegalStateException("stream " + req + " still running");
      KvBenchCommand.check(m);
      // the migration completes inside the last chunk's callback, before that chunk's stage (and our stamp) does
      for (CompletionStage<KvMigration.Chunk> c : chunks) c.toCompletableFuture().join();
      int last = layers - 1;
      long lastSend = send[last], lastRx = link.layerLandedAt(req, last);
      long[] hops = new long[layers];
      int stillInFlight = 0;
      long drainedAt = lastSend;
      for (int l = 0; l < layers; l++) {
        hops[l] = link.layerLandedAt(req, l) - done.get(l);
        if (l < last && done.get(l) > lastSend) {
          stillInFlight++;
          drainedAt = Math.max(drainedAt, done.get(l));
        }
      }
      long lastWire = link.layerWriteLandedAt(req, last);
      link.forget(req);
      // the stream's last layer left after one prefill period of an idle link: so does the reference
      LockSupport.parkNanos(computeNanos);
      // the layer as one batch (one request: one connection), then again (lanes are taken in turn: the other one)
      long[] rt = rawLayer(local, remote, lastLayer);
      LockSupport.parkNanos(computeNanos);
      long[] rt2 = rawLayer(local, remote, lastLayer);
      // the layer as the stream issued it: cut for the TCP connections (KvCache.batchParts)
      LockSupport.parkNanos(computeNanos);
      long[] rtParts = rawLayer(local, remote, lastLayer.split(local.batchParts(remote), local.minPartBytes()));
      long[] alone = aloneLayer(local, remote, src, dst, req + "-alone", layers - 1, computeNanos);
      long st = runs.once(KvBenchRuns.SINGLE_REFERENCE_BYTES, false);
      if (i >= 0) {
        exposed[i] = landedAt - lastSend;
        total[i] = landedAt - start;
        raw[i] = rtParts[0]; // the reference: the requests the stream issued for its last layer
        single[i] = st;
        backlog[i] = stillInFlight;
        drain[i] = drainedAt - lastSend;
        submit[i] = ret[last] - lastSend;
        lastDone[i] = done.get(last) - lastSend;
        hop[i] = lastRx - done.get(last);
        hopAll[i] = new KvBenchRuns.Stats(0, hops).p50Nanos();
        stage(stages, "stream.call", i, submit[i]);
        stage(stages, "stream.wire", i, lastWire < 0 ? -1 : lastWire - lastSend);
        stage(stages, "stream.heard", i, exposed[i]);
        stage(stages, "stream.senderDone", i, lastDone[i]);
        stage(stages, "engine.call", i, rt[1]);
        stage(stages, "engine.wire", i, rt[2]);
        stage(stages, "engine.senderDone", i, rt[0]);
        stage(stages, "engineOtherLane.wire", i, rt2[2]);
        stage(stages, "engineOtherLane.senderDone", i, rt2[0]);
        stage(stages, "engineParts.call", i, rtParts[1]);
        stage(stages, "engineParts.wire", i, rtParts[2]);
        stage(stages, "engineParts.senderDone", i, rtParts[0]);
        stage(stages, "alone.call", i, alone[0]);
        stage(stages, "alone.wire", i, alone[1]);
        stage(stages, "alone.heard", i, alone[2]);
        stage(stages, "alone.senderDone", i, alone[3]);
        StringBuilder b = new StringBuilder("    iter " + i + " (us):");
        for (var e : stages.entrySet()) b.append(' ').append(e.getKey()).append(' ').append(e.getValue()[i] / 1000);
        System.out.println(b);
      }
    }
    long bytes = (long) src.length * local.layout().bytesPerBlock();
    return new Stats(new KvBenchRuns.Stats(bytes, exposed), new KvBenchRuns.Stats(bytes, total), new KvBenchRuns.Stats(lastLayer.bytes(), raw),
        new KvBenchRuns.Stats(KvBenchRuns.SINGLE_REFERENCE_BYTES, single), computeNanos, pacing, backlog, drain, submit, lastDone, hop, hopAll,
        stages);
  }

  /**
   * Layer {@code layer} alone through the KV API after one prefill period of an idle link: a fresh stream, only
   * that layer sent, then cancelled: the stream's last layer without the layers before it. Returns, from the
   * {@code sendLayers} call: its return, the receiver's backend recording the write, the receiver hearing it
   * landed, the sender's chunk completion (ns; -1 where unknown).
   */
  private long[] aloneLayer(KvCache local, KvCacheDesc remote, int[] src, int[] dst, String req, int layer, long computeNanos)
      throws InterruptedException {
    KvMigration m = local.openStream(req, src, remote, dst);
    LockSupport.parkNanos(computeNanos);
    long t0 = System.nanoTime();
    CompletionStage<KvMigration.Chunk> f = m.sendLayers(layer, layer + 1);
    long call = System.nanoTime() - t0;
    KvMigration.Chunk c = f.toCompletableFuture().join();
    long done = System.nanoTime() - t0;
    if (c.code() != StatusCode.SUCCESS) throw new IllegalStateException("layer " + layer + " alone: " + c);
    long heard = -1;
    for (long deadline = System.nanoTime() + LIMIT.toNanos(); heard < 0 && System.nanoTime() < deadline; ) {
      heard = link.layerLandedAt(req, layer);
      if (heard < 0) LockSupport.parkNanos(100_000);
    }
    if (heard < 0) throw new IllegalStateException("the receiver never heard that layer " + layer + " of " + req + " landed");
    long wire = link.layerWriteLandedAt(req, layer);
    m.cancel();
    link.forget(req);
    return new long[] {call, wire < 0 ? -1 : wire - t0, heard - t0, done};
  }

  /**
   * One layer's batches through the engine (the same entries as the stream's): {call to completion at the sender,
   * the call, call to the receiver's backend recording the last write (-1 if unknown)} in ns.
   */
  private long[] rawLayer(KvCache local, KvCacheDesc remote, KvTransferPlan plan) throws InterruptedException {
    int n = plan.batches().size();
    List<MemoryDesc> locals = new ArrayList<>(n), remotes = new ArrayList<>(n);
    List<long[]> lo = new ArrayList<>(n), ro = new ArrayList<>(n), sizes = new ArrayList<>(n);
    long[] uids = new long[n];
    for (int b = 0; b < n; b++) {
      KvTransferPlan.Batch x = plan.batches().get(b);
      locals.add(local.desc().buffers().get(x.srcBuffer()));
      remotes.add(remote.buffers().get(x.dstBuffer()));
      lo.add(x.srcOffsets());
      ro.add(x.dstOffsets());
      sizes.add(x.sizes());
      uids[b] = engine.allocateTransferUid();
    }
    long t0 = System.nanoTime();
    List<TransferStatus> st = engine.batchWrite(locals, lo, remotes, ro, sizes, uids);
    long call = System.nanoTime() - t0;
    StatusCode c = engine.waitAll(st, LIMIT);
    long t = System.nanoTime() - t0;
    if (c != StatusCode.SUCCESS) throw new IllegalStateException("one layer's batch: " + c);
    long wire = -1;
    for (long u : uids) {
      long at = link.writeLandedAt(u);
      if (at < 0) return new long[] {t, call, -1};
      wire = Math.max(wire, at - t0);
    }
    return new long[] {t, call, wire};
  }
}
