package org.mori4j.bench.soak;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineSession;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferOptions;
import org.mori4j.io.TransferStatus;

/**
 * One worker of a node's workload against one peer: a loop of reads, writes, batch reads and writes and
 * session reads and writes of mixed sizes, one transfer at a time, every byte checked. Reads check the
 * peer's read area against the soak seed's pattern; writes put a pattern of their uid into this worker's
 * own slot on the peer, read it back and compare, and report the uid for the notification check. Half of
 * the reads carry a deadline ({@link TransferOptions#deadline}); {@code ERR_TIMEOUT} is then an expected
 * failure. Every status is awaited for at most the hung bound (its deadline + 5 s, else the TCP peer
 * timeout + 5 s); one still in progress then is counted hung and cancelled, and when it has not ended a
 * minute later the worker stops (its buffers may still be in use) and says so.
 */
final class SoakWorker implements Runnable {
  private enum Op { READ, WRITE, BATCH_READ, BATCH_WRITE, SESSION_READ, SESSION_WRITE }

  private static final Op[] MIX = {Op.READ, Op.READ, Op.READ, Op.WRITE, Op.WRITE, Op.WRITE, Op.BATCH_READ, Op.BATCH_WRITE,
      Op.SESSION_READ, Op.SESSION_WRITE};
  private static final Duration LATE = Duration.ofSeconds(60);
  static final long DEADLINE_MS = 5000;
  private static final Duration DEADLINE = Duration.ofMillis(DEADLINE_MS);

  /** A transfer that did not finish within the hung bound plus {@link #LATE}: the worker stops. */
  private static final class Stuck extends Exception {
    Stuck(String what) {
      super(what, null, false, false);
    }
  }

  private final IoEngine engine;
  private final MemorySegment local;
  private final MemoryDesc localDesc;
  private final SoakPeers peers;
  private final int self;
  private final int peer;
  private final int worker;
  private final long soakSeed;
  private final Duration bound;
  private final SoakCounters counters;
  private final LandedWrites landed;
  private final WorkGate gate;
  private final LongSupplier uids;
  private final Consumer<String> events;
  private final SplittableRandom random;
  private IoEngineSession session;
  private SoakPeers.View sessionView;

  SoakWorker(IoEngine engine, MemorySegment local, MemoryDesc localDesc, SoakPeers peers, int self, int peer, int worker, long soakSeed,
             Duration bound, SoakCounters counters, LandedWrites landed, WorkGate gate, LongSupplier uids, Consumer<String> events) {
    this.engine = engine;
    this.local = local;
    this.localDesc = localDesc;
    this.peers = peers;
    this.self = self;
    this.peer = peer;
    this.worker = worker;
    this.soakSeed = soakSeed;
    this.bound = bound;
    this.counters = counters;
    this.landed = landed;
    this.gate = gate;
    this.uids = uids;
    this.events = events;
    this.random = new SplittableRandom(soakSeed ^ ((long) self << 40) ^ ((long) peer << 20) ^ worker ^ System.nanoTime());
  }

  @Override
  public void run() {
    try {
      while (gate.enter()) {
        try {
          SoakPeers.View v = peers.get(peer);
          if (v == null) {
            Thread.sleep(100);
            continue;
          }
          once(MIX[random.nextInt(MIX.length)], v);
        } finally {
          gate.exit();
        }
      }
    } catch (Stuck s) {
      counters.stuckWorkers.increment();
      events.accept("STUCK worker=" + self + "->" + peer + "/" + worker + " " + s.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void once(Op op, SoakPeers.View v) throws Stuck {
    long size = SoakLayout.SIZES[random.nextInt(SoakLayout.SIZES.length)];
    long src = SoakLayout.localSource(peer, worker);
    long dst = SoakLayout.localDestination(peer, worker);
    long slot = SoakLayout.targetSlot(self, worker);
    long uid = uids.getAsLong();
    switch (op) {
      case READ, SESSION_READ -> {
        long from = randomReadOffset(size);
        SoakPattern.poison(local, dst, size);
        TransferOptions o = options();
        TransferStatus st = op == Op.READ ? engine.read(localDesc, dst, v.buffer(), from, size, uid, o) : inSession(v, s -> s.read(dst, from, size, uid, o));
        if (st != null && ended(st, v, op, o)) verify(op, v, SoakPattern.checkFixed(local, dst, size, soakSeed, from), size);
      }
      case WRITE, SESSION_WRITE -> {
        SoakPattern.fill(local, src, size, uid);
        TransferStatus st = op == Op.WRITE ? engine.write(localDesc, src, v.buffer(), slot, size, uid) : inSession(v, s -> s.write(src, slot, size, uid));
        if (st == null) return;
        boolean ok = ended(st, v, op, TransferOptions.engineDefault());
        landed.add(v.desc().key(), v.incarnation(), ok, uid);
        if (ok && readBack(v, slot, size)) verify(op, v, SoakPattern.checkFill(local, dst, size, uid), size);
      }
      case BATCH_READ -> {
        long blk = size / SoakLayout.BATCH_BLOCKS;
        long[] lo = new long[SoakLayout.BATCH_BLOCKS], ro = new long[lo.length], sz = new long[lo.length];
        for (int j = 0; j < lo.length; j++) {
          lo[j] = dst + j * blk;
          ro[j] = randomReadOffset(blk);
          sz[j] = blk;
        }
        SoakPattern.poison(local, dst, size);
        TransferOptions o = options();
        TransferStatus st = engine.batchRead(List.of(localDesc), List.of(lo), List.of(v.buffer()), List.of(ro), List.of(sz), new long[] {uid}, o).getFirst();
        if (!ended(st, v, op, o)) return;
        long bad = -1;
        for (int j = 0; j < lo.length && bad < 0; j++) {
          long b = SoakPattern.checkFixed(local, lo[j], blk, soakSeed, ro[j]);
          if (b >= 0) bad = j * blk + b;
        }
        verify(op, v, bad, size);
      }
      case BATCH_WRITE -> {
        long blk = size / SoakLayout.BATCH_BLOCKS;
        int n = SoakLayout.BATCH_BLOCKS;
        long[] lo = new long[n], ro = new long[n], sz = new long[n];
        for (int j = 0; j < n; j++) {
          lo[j] = src + j * blk;
          ro[j] = slot + (n - 1 - j) * blk; // blocks land in reverse order: a block put at its source offset does not check out
          sz[j] = blk;
        }
        SoakPattern.fill(local, src, size, uid);
        TransferStatus st = engine.batchWrite(List.of(localDesc), List.of(lo), List.of(v.buffer()), List.of(ro), List.of(sz), new long[] {uid}).getFirst();
        boolean ok = ended(st, v, op, TransferOptions.engineDefault());
        landed.add(v.desc().key(), v.incarnation(), ok, uid);
        if (!ok || !readBack(v, slot, n * blk)) return;
        long bad = -1;
        for (int j = 0; j < n && bad < 0; j++) {
          long b = SoakPattern.checkStream(local, dst + (n - 1 - j) * blk, blk, uid, j * blk);
          if (b >= 0) bad = (n - 1 - j) * blk + b;
        }
        verify(op, v, bad, size);
      }
    }
  }

  /**
   * Half of the reads carry a deadline ({@value #DEADLINE_MS} ms): a read cancelled by it leaves nothing behind
   * (its late data goes to scratch memory). Writes carry none: a write cut off by its deadline may already have
   * landed in part, and its slot's next read-back would then see it.
   */
  private TransferOptions options() {
    return random.nextBoolean() ? TransferOptions.deadline(DEADLINE) : TransferOptions.engineDefault();
  }

  private long randomReadOffset(long size) {
    return random.nextLong((SoakLayout.READ_AREA - size) / 8 + 1) * 8;
  }

  /** Reads the slot back into the destination half; false (counted unverified) when that read fails. */
  private boolean readBack(SoakPeers.View v, long slot, long size) throws Stuck {
    long dst = SoakLayout.localDestination(peer, worker);
    SoakPattern.poison(local, dst, size);
    TransferStatus st = engine.read(localDesc, dst, v.buffer(), slot, size, uids.getAsLong());
    if (ended(st, v, Op.READ, TransferOptions.engineDefault())) return true;
    counters.unverified.increment();
    return false;
  }

  private interface SessionCall {
    TransferStatus call(IoEngineSession s);
  }

  /** The call on this worker's session with the peer's current incarnation, opened when needed; null when none can be opened. */
  private TransferStatus inSession(SoakPeers.View v, SessionCall call) {
    if (session == null || sessionView != v || !session.alive()) {
      session = null;
      try {
        Optional<IoEngineSession> s = engine.createSession(localDesc, v.buffer());
        if (s.isEmpty()) {
          counters.failed("session:no-backend");
          return null;
        }
        session = s.get();
        sessionView = v;
      } catch (IoEngineException e) {
        counters.failed("session:" + e.code());
        peers.invalidate(v);
        return null;
      }
    }
    return call.call(session);
  }

  /**
   * Waits within the bound (the deadline + 5 s for a transfer with one, else the peer timeout + 5 s); true on
   * success. One still in progress then is hung: counted, cancelled, and given {@link #LATE} to end. A failure
   * is counted by code and drops the peer's view when the peer is gone.
   */
  private boolean ended(TransferStatus st, SoakPeers.View v, Op op, TransferOptions o) throws Stuck {
    Duration limit = o.deadline() != null ? o.deadline().plusSeconds(5) : bound;
    if (!st.await(limit)) {
      counters.hung.increment();
      events.accept("HUNG " + op + " " + self + "->" + peer + "/" + worker + " incarnation=" + Long.toHexString(v.incarnation()) + " after "
          + limit.toMillis() + " ms" + (o.deadline() != null ? " (deadline " + o.deadline().toMillis() + " ms)" : ""));
      st.cancel();
      if (!st.await(LATE)) throw new Stuck(op + " still in progress " + LATE.toSeconds() + " s after it was cancelled");
    }
    if (st.succeeded()) return true;
    StatusCode c = st.code();
    counters.failed(c.name());
    if (c != StatusCode.ERR_INVALID_ARGS) {
      peers.invalidate(v);
      session = null;
    }
    return false;
  }

  private void verify(Op op, SoakPeers.View v, long badOffset, long size) {
    if (badOffset < 0) {
      counters.done.increment();
      counters.bytes.add(size);
      return;
    }
    counters.corrupted.increment();
    events.accept("CORRUPT " + op + " " + self + "->" + peer + "/" + worker + " incarnation=" + Long.toHexString(v.incarnation()) + " size=" + size + " first-bad-byte=" + badOffset);
  }
}
