package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.typesafe.config.ConfigFactory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mori4j.transport.tcp.CallerDriveStats;

/**
 * The TCP caller-driven round trip ({@code mori4j.tcp.caller-drive = on}): small requests to an idle connection leave
 * from the submitting thread and the awaiting caller reads the response itself. Every test reads
 * {@link CallerDriveStats} to prove the fast path was really taken (a test that passed on the loop path alone would
 * prove nothing), and checks bytes, order, hand-offs to the I/O thread, cancellation and notifications. Both engines
 * of the pair run with caller-drive on (set through a system property for their creation only); one connection per
 * peer, so that every op, whatever its path, shares the connection with the caller-driven ones. Before an op that must
 * leave from the caller's thread the test waits until the connection is idle ({@link CallerDriveStats#awaitIdle}):
 * the I/O loop may hold it for a moment after completing the previous op, and a submitter never waits for that hold.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CallerDriveTest {
  private static final long BUF = 16L << 20;
  private static final Duration WAIT = Duration.ofSeconds(20);
  private IoEngine initiator;
  private IoEngine target;
  private final Arena arena = Arena.ofShared();
  private MemorySegment localBuf;
  private MemorySegment remoteBuf;
  private MemoryDesc local;
  private MemoryDesc remote;
  private IoEngineSession session;

  @BeforeAll
  void start() {
    assumeFalse(TestBackends.rdma(), "TCP only: the RDMA executions need not run it again");
    System.setProperty("mori4j.tcp.caller-drive", "on");
    // a window no scheduling delay of a loaded test machine reaches, so that the ping-pong below surely polls
    System.setProperty("mori4j.tcp.serve-spin", "2ms");
    ConfigFactory.invalidateCaches();
    try {
      initiator = IoEngine.create("cd-init-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
      target = IoEngine.create("cd-target-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
    } finally {
      System.clearProperty("mori4j.tcp.caller-drive");
      System.clearProperty("mori4j.tcp.serve-spin");
      ConfigFactory.invalidateCaches();
    }
    TcpBackendConfig tcp = TcpBackendConfig.defaults().withConnectionsPerPeer(1);
    initiator.createBackend(BackendType.TCP, tcp);
    target.createBackend(BackendType.TCP, tcp);
    initiator.registerRemoteEngine(target.engineDesc());
    target.registerRemoteEngine(initiator.engineDesc());
    localBuf = arena.allocate(BUF, 4096);
    remoteBuf = arena.allocate(BUF, 4096);
    local = initiator.registerMemory(localBuf);
    remote = target.registerMemory(remoteBuf);
    session = initiator.createSession(local, remote).orElseThrow();
  }

  @AfterAll
  void stop() {
    if (initiator != null) initiator.close();
    if (target != null) target.close();
    arena.close();
  }

  private static void pattern(MemorySegment m, long off, long len, long seed) {
    for (long i = 0; i < len; i += 8) m.set(ValueLayout.JAVA_LONG_UNALIGNED, off + i, seed * 0x9E3779B97F4A7C15L ^ (off + i));
  }

  private static void ok(TransferStatus s, String what) {
    assertTrue(s.await(WAIT), what + " did not end within " + WAIT);
    assertEquals(StatusCode.SUCCESS, s.code(), what + ": " + s.message());
  }

  /** Waits until the connection to the target is idle, as a caller-driven send needs it. */
  private void idle() {
    assertTrue(CallerDriveStats.awaitIdle(target.key(), WAIT), "the connection to the target did not become idle within " + WAIT);
  }

  /**
   * Submits until one op leaves from the caller's thread, the connection idle before each try; at most 5 tries, every
   * op that took the loop's path must succeed. More than one try is needed only when the loop's 50-ms timer held the
   * idle connection at the very moment of the submit.
   */
  private TransferStatus callerSent(String what, java.util.function.Supplier<TransferStatus> submit) {
    for (int i = 0; i < 5; i++) {
      idle();
      long sent = CallerDriveStats.sent();
      TransferStatus s = submit.get();
      if (CallerDriveStats.sent() == sent + 1) return s;
      ok(s, what + " (try " + i + ", sent by the loop)");
    }
    return fail(what + ": did not leave from the caller's thread in 5 tries on an idle connection");
  }

  private void assertSame(long localOff, long remoteOff, long len, String what) {
    long at = MemorySegment.mismatch(localBuf, localOff, localOff + len, remoteBuf, remoteOff, remoteOff + len);
    assertEquals(-1, at, what + ": first difference at +" + at);
  }

  @Test
  void sessionWritesAndReadsAreByteExactOnTheCallerPath() {
    long sent = CallerDriveStats.sent(), driven = CallerDriveStats.driven(), expired = CallerDriveStats.spinExpired();
    for (int i = 0; i < 300; i++) {
      long off = (i % 64) * 8192L + (i % 7) * 8;
      int len = i % 3 == 0 ? 4096 : 1 + (i * 37) % 16384;
      pattern(localBuf, off, len + 8, i);
      idle();
      ok(session.write(off, off, len, initiator.allocateTransferUid()), "write " + i);
      assertSame(off, off, len, "write " + i);
      pattern(remoteBuf, off + (1 << 20), len, -i);
      idle();
      ok(session.read(off + (1 << 20), off + (1 << 20), len, initiator.allocateTransferUid()), "read " + i);
      assertSame(off + (1 << 20), off + (1 << 20), len, "read " + i);
    }
    // each op waited for an idle connection; the loop's timer may still hold it at the moment of a submit (rarely):
    // at least half (with caller-drive off: none)
    assertTrue(CallerDriveStats.sent() - sent >= 300, "caller path taken " + (CallerDriveStats.sent() - sent) + " of 600 times");
    // each op sent from its caller was either read by that caller or handed back when its drive spin ran out
    assertTrue(CallerDriveStats.driven() - driven + CallerDriveStats.spinExpired() - expired >= 300,
        "drives: " + (CallerDriveStats.driven() - driven) + " read by the caller, " + (CallerDriveStats.spinExpired() - expired) + " handed back");
    assertTrue(CallerDriveStats.driven() > driven, "no response was read by its caller");
  }

  @Test
  void smallLargeAndBatchOpsOnOneConnectionKeepOrderAndBytes() {
    long sent = CallerDriveStats.sent();
    long slot = 12L << 20; // the same 4 KiB written again and again: the last write must win (one connection, in order)
    List<TransferStatus> all = new ArrayList<>();
    long lastSeed = 0;
    for (int round = 0; round < 20; round++) {
      // the last round's burst put the connection in burst mode (every op takes the loop); two ops alone on it end that
      loneWrites(2);
      // an idle connection: this one leaves from the caller's thread (once the loop, which completed the last round's
      // ops, has let the connection go: a submitter never waits for the loop's hold, it takes the loop's path then)
      idle();
      long seed = 1000 + round * 10;
      pattern(localBuf, slot + round * 4096L, 4096, seed);
      all.add(initiator.write(local, slot + round * 4096L, remote, slot, 4096, initiator.allocateTransferUid()));
      // a large write (payload not inline) and a batch queue behind it on the loop
      pattern(localBuf, 4L << 20, 2L << 20, seed + 1);
      all.add(initiator.write(local, 4L << 20, remote, 4L << 20, 2L << 20, initiator.allocateTransferUid()));
      long[] lo = new long[16], ro = new long[16], sz = new long[16];
      for (int b = 0; b < 16; b++) {
        lo[b] = (8L << 20) + b * 8192L;
        ro[b] = (8L << 20) + (15 - b) * 8192L;
        sz[b] = 4096 + b;
      }
      for (int b = 0; b < 16; b++) pattern(localBuf, lo[b], 4096 + 16, seed + 2 + b);
      all.addAll(initiator.batchWrite(List.of(local), List.of(lo), List.of(remote), List.of(ro), List.of(sz),
          new long[] {initiator.allocateTransferUid()}));
      // more small writes of the same slot, without waiting: the last one's bytes must be what stays
      for (int k = 1; k <= 4; k++) {
        long src = (10L << 20) + (round * 4 + k) * 4096L;
        lastSeed = seed + 100 + k;
        pattern(localBuf, src, 4096, lastSeed);
        all.add(initiator.write(local, src, remote, slot, 4096, initiator.allocateTransferUid()));
      }
      for (int k = 0; k < all.size(); k++) ok(all.get(k), "round " + round + " op " + k);
      long lastSrc = (10L << 20) + (round * 4 + 4) * 4096L;
      assertEquals(-1, MemorySegment.mismatch(localBuf, lastSrc, lastSrc + 4096, remoteBuf, slot, slot + 4096),
          "round " + round + ": the slot does not hold the last write's bytes (order broken)");
      assertSame(4L << 20, 4L << 20, 2L << 20, "large write, round " + round);
      for (int b = 0; b < 16; b++) assertSame(lo[b], ro[b], sz[b], "batch block " + b + ", round " + round);
      all.clear();
    }
    assertTrue(CallerDriveStats.sent() - sent >= 10, "caller path taken " + (CallerDriveStats.sent() - sent) + " of 20 times");
  }

  /** {@code n} small writes, each awaited before the next: a ping-pong. */
  private void loneWrites(int n) {
    for (int i = 0; i < n; i++) {
      idle();
      ok(initiator.write(local, 15L << 20, remote, 15L << 20, 64, initiator.allocateTransferUid()), "lone write " + i);
    }
  }

  @Test
  void aBurstTakesTheLoopUntilAPingPongComesBack() {
    loneWrites(2);
    long slot = 13L << 20;
    for (int burst = 0; burst < 2; burst++) {
      List<TransferStatus> all = new ArrayList<>();
      long sentBefore = CallerDriveStats.sent();
      if (burst == 0) {
        // the first burst's first op leaves from the caller; the second op, submitted while it is out, marks the burst
        all.add(callerSent("first op of the first burst", () -> initiator.write(local, slot, remote, slot, 4096, initiator.allocateTransferUid())));
        sentBefore = CallerDriveStats.sent();
      } else {
        idle();
      }
      for (int k = all.size(); k < 8; k++)
        all.add(initiator.write(local, slot + k * 4096L, remote, slot + k * 4096L, 4096, initiator.allocateTransferUid()));
      for (TransferStatus s : all) ok(s, "burst " + burst);
      assertEquals(sentBefore, CallerDriveStats.sent(), "burst " + burst + ": an op left from the caller's thread behind a caller-sent one, or in a burst after one");
    }
    assertSame(slot, slot, 8 * 4096L, "bursts");
    // two ops alone on the connection: a ping-pong again, and the next op leaves from the caller's thread
    loneWrites(2);
    ok(callerSent("op after the ping-pong came back", () -> initiator.write(local, slot, remote, slot, 4096, initiator.allocateTransferUid())), "after");
  }

  @Test
  void severalCallerThreadsShareOneConnection() throws Exception {
    long sent = CallerDriveStats.sent();
    int threads = 4, per = 150;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int me = t;
        fs.add(pool.submit(() -> {
          long base = (14L << 20) + me * 65536L;
          for (int i = 0; i < per; i++) {
            long off = base + (i % 8) * 8192L;
            int len = 512 + (i * 131 + me) % 8192;
            pattern(localBuf, off, len + 8, me * 100_000L + i);
            ok(session.write(off, off, len, initiator.allocateTransferUid()), "thread " + me + " write " + i);
            assertSame(off, off, len, "thread " + me + " write " + i);
            localBuf.asSlice(off, len).fill((byte) 0);
            ok(session.read(off, off, len, initiator.allocateTransferUid()), "thread " + me + " read " + i);
            assertSame(off, off, len, "thread " + me + " read " + i);
          }
          return null;
        }));
      }
      for (Future<?> f : fs) f.get(60, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    assertTrue(CallerDriveStats.sent() - sent > 0, "no request left from a caller's thread");
  }

  @Test
  void futuresListenersPollsAndAbandonedOpsAreFinishedByTheLoop() throws Exception {
    long handed = CallerDriveStats.handedOff(), abandoned = CallerDriveStats.abandoned();
    // completion(): nobody reads the socket on this thread, the I/O thread completes it
    pattern(localBuf, 0, 4096, 77);
    TransferStatus a = callerSent("write awaited through a future", () -> session.write(0, 0, 4096, initiator.allocateTransferUid()));
    TransferStatus viaFuture = a.completion().toCompletableFuture().get(20, TimeUnit.SECONDS);
    assertEquals(StatusCode.SUCCESS, viaFuture.code());
    assertSame(0, 0, 4096, "future");
    // a listener
    CompletableFuture<StatusCode> heard = new CompletableFuture<>();
    TransferStatus b = callerSent("write with a listener", () -> session.write(4096, 4096, 4096, initiator.allocateTransferUid()));
    assertTrue(b instanceof org.mori4j.io.internal.TransferStatusImpl, "status type " + b.getClass());
    ((org.mori4j.io.internal.TransferStatusImpl) b).onDone(s -> heard.complete(s.code()));
    assertEquals(StatusCode.SUCCESS, heard.get(20, TimeUnit.SECONDS));
    // polling code() until it is final, never awaiting
    TransferStatus c = callerSent("polled read", () -> session.read(8192, 8192, 4096, initiator.allocateTransferUid()));
    long end = System.nanoTime() + WAIT.toNanos();
    while (!c.code().isFinal() && System.nanoTime() < end) Thread.sleep(1);
    assertEquals(StatusCode.SUCCESS, c.code(), c.message());
    long h = CallerDriveStats.handedOff() - handed, ab = CallerDriveStats.abandoned() - abandoned;
    assertTrue(h + ab >= 3, "hand-offs " + h + ", taken back by the timer " + ab + " (expected 3 in all)");
    // nobody looks at this one at all: the loop's timer takes it back and completes it
    long abandonedBefore = CallerDriveStats.abandoned();
    TransferStatus d = callerSent("abandoned write", () -> session.write(12288, 12288, 4096, initiator.allocateTransferUid()));
    long until = System.nanoTime() + WAIT.toNanos();
    while (CallerDriveStats.abandoned() == abandonedBefore && System.nanoTime() < until) Thread.sleep(5);
    assertTrue(CallerDriveStats.abandoned() > abandonedBefore, "the loop never took back an op nobody came for");
    ok(d, "abandoned write");
  }

  @Test
  void cancelledCallerDrivenReadLeavesTheBufferAloneAndTheConnectionFramed() throws Exception {
    long off = 2L << 20;
    pattern(remoteBuf, off, 8192, 4242);
    // refilled before each try: a try that took the loop's path read the target's bytes into it
    TransferStatus r = callerSent("read to cancel", () -> {
      localBuf.asSlice(off, 8192).fill((byte) 0x5a);
      return session.read(off, off, 8192, initiator.allocateTransferUid());
    });
    // nobody has read its response yet (the caller has not awaited): the cancellation wins
    assertTrue(r.cancel(), "cancel lost against a response nobody read");
    assertEquals(StatusCode.ERR_TIMEOUT, r.code());
    // the next transfers on the same connection (which must first skip the dropped response) are byte-exact
    pattern(localBuf, off + 16384, 4096, 99);
    ok(session.write(off + 16384, off + 16384, 4096, initiator.allocateTransferUid()), "write after cancel");
    assertSame(off + 16384, off + 16384, 4096, "write after cancel");
    for (long i = 0; i < 8192; i++) assertEquals((byte) 0x5a, localBuf.get(ValueLayout.JAVA_BYTE, off + i), "cancelled READ wrote byte " + i);
    // a deadline on a caller-driven op: a target this fast answers in time, so it succeeds, and nothing is left behind
    // (the connection is idle again once the loop skipped the cancelled READ's response)
    ok(callerSent("write with a deadline", () -> session.write(off + 16384, off + 16384, 4096, initiator.allocateTransferUid(),
        TransferOptions.deadline(Duration.ofSeconds(10)))), "write with a deadline");
  }

  @Test
  void aPingPongIsServedByTheTargetsPollingLoop() {
    // back to back, as a latency-bound caller sends them: from the second request on the target's loop polls after
    // each (serve-spin) and finds the next one without sleeping in select
    long polled = CallerDriveStats.servedPolling();
    long off = 5L << 20;
    for (int i = 0; i < 50; i++) {
      pattern(localBuf, off + i * 4096L, 4096, 7 * i);
      ok(session.write(off + i * 4096L, off + i * 4096L, 4096, initiator.allocateTransferUid()), "write " + i);
    }
    assertSame(off, off, 50 * 4096L, "ping-pong writes");
    assertTrue(CallerDriveStats.servedPolling() > polled, "no request of 50 back-to-back writes was found by the polling loop");
  }

  @Test
  void everyCallerDrivenWriteIsNotifiedOnce() {
    long sent = CallerDriveStats.sent();
    Set<Long> uids = new HashSet<>();
    for (int i = 0; i < 100; i++) {
      long uid = initiator.allocateTransferUid();
      uids.add(uid);
      idle();
      ok(session.write(i * 64L, (3L << 20) + i * 64L, 64, uid), "write " + i);
    }
    assertTrue(CallerDriveStats.sent() - sent >= 50, "caller path taken " + (CallerDriveStats.sent() - sent) + " of 100 times");
    for (long uid : uids) {
      Optional<TransferStatus> n = target.popInboundTransferStatus(initiator.key(), uid);
      assertTrue(n.isPresent(), "uid " + uid + " not notified");
      assertTrue(n.get().succeeded(), "uid " + uid + ": " + n.get());
      assertTrue(target.popInboundTransferStatus(initiator.key(), uid).isEmpty(), "uid " + uid + " notified twice");
    }
  }
}
