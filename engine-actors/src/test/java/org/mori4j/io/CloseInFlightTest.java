package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * close() fails whatever is in flight: when it returns, no status of that engine is still in progress, and
 * each one either succeeded or failed with a final code. Closing the peer ends the initiator's transfers too.
 */
class CloseInFlightTest {
  private static final long MiB = 1L << 20;
  /** Codes a transfer may end with when the engine or its peer goes away under it. */
  private static final Set<StatusCode> GONE = Set.of(StatusCode.ERR_BAD_STATE, StatusCode.ERR_PEER_LOST, StatusCode.ERR_TRANSPORT);
  private static final long CLOSE_LIMIT_MS = 10_000;
  /** Well under the 10 s ask timeout a region confirmation to a vanished peer would wait without the closing notice. */
  private static final long PEER_GONE_LIMIT_MS = 5_000;

  private static Map<StatusCode, Integer> tally(List<TransferStatus> all) {
    Map<StatusCode, Integer> m = new EnumMap<>(StatusCode.class);
    for (TransferStatus s : all) m.merge(s.code(), 1, Integer::sum);
    return m;
  }

  /** Right after close(): nothing in progress, every failure has a final "went away" code. */
  private static void assertAllEnded(List<TransferStatus> all, String what) {
    for (int i = 0; i < all.size(); i++) {
      TransferStatus s = all.get(i);
      assertFalse(s.inProgress(), what + ": transfer " + i + " still in progress after close() returned");
      assertTrue(s.code().isFinal(), what + ": transfer " + i + " " + s);
      if (s.failed()) assertTrue(GONE.contains(s.code()), what + ": transfer " + i + " ended with " + s);
      assertTrue(s.await(Duration.ZERO), what + ": await on an ended transfer must return at once");
    }
  }

  private static long closeTimed(IoEngine e) {
    long t0 = System.nanoTime();
    e.close();
    return (System.nanoTime() - t0) / 1_000_000;
  }

  @Test
  void closeWithHundredLargeWritesInFlightEndsThemAll() {
    try (EnginePair p = new EnginePair(4 * MiB)) {
      randomize(p.localBuf, 1);
      List<TransferStatus> all = new ArrayList<>();
      for (int i = 0; i < 100; i++) all.add(p.initiator.write(p.local, 0, p.remote, 0, 4 * MiB, p.initiator.allocateTransferUid()));
      long ms = closeTimed(p.initiator);
      assertAllEnded(all, "100 x 4 MiB writes");
      assertTrue(ms < CLOSE_LIMIT_MS, "close() took " + ms + " ms");
      System.out.println("close with 100 x 4 MiB writes in flight: " + ms + " ms, outcomes " + tally(all));
    }
  }

  @Test
  void closeWithMixedReadsBatchesAndSessionWritesInFlightEndsThemAll() {
    try (EnginePair p = new EnginePair(4 * MiB)) {
      IoEngineSession s = p.initiator.createSession(p.local, p.remote).orElseThrow();
      List<TransferStatus> all = new ArrayList<>();
      long[] lo = new long[64], ro = new long[64], sz = new long[64];
      for (int i = 0; i < 64; i++) {
        lo[i] = i * 65536L;
        ro[i] = (63 - i) * 65536L;
        sz[i] = 60_000;
      }
      for (int i = 0; i < 40; i++) {
        all.add(p.initiator.read(p.local, 0, p.remote, 0, 4 * MiB, p.initiator.allocateTransferUid()));
        all.addAll(p.initiator.batchWrite(List.of(p.local), List.of(lo), List.of(p.remote), List.of(ro), List.of(sz), new long[] {i}));
        all.add(s.write(0, 0, 2 * MiB, s.allocateTransferUid()));
        all.add(s.batchRead(lo, ro, sz, s.allocateTransferUid()));
      }
      long ms = closeTimed(p.initiator);
      assertAllEnded(all, "mixed transfers");
      assertTrue(ms < CLOSE_LIMIT_MS, "close() took " + ms + " ms");
      assertFalse(s.alive());
    }
  }

  @Test
  void waiterBlockedInAwaitIsReleasedByClose() throws Exception {
    try (EnginePair p = new EnginePair(16 * MiB)) {
      List<TransferStatus> all = new ArrayList<>();
      for (int i = 0; i < 30; i++) all.add(p.initiator.write(p.local, 0, p.remote, 0, 16 * MiB, p.initiator.allocateTransferUid()));
      TransferStatus last = all.get(all.size() - 1);
      CountDownLatch released = new CountDownLatch(1);
      Thread waiter = new Thread(() -> {
        last.await();
        released.countDown();
      });
      waiter.start();
      p.initiator.close();
      assertTrue(released.await(5, java.util.concurrent.TimeUnit.SECONDS), "await() still blocked 5 s after close()");
      assertAllEnded(all, "awaited writes");
    }
  }

  @Test
  void transfersSubmittedWhileTheEngineClosesAllEnd() throws Exception {
    try (EnginePair p = new EnginePair(1 * MiB)) {
      ConcurrentLinkedQueue<TransferStatus> all = new ConcurrentLinkedQueue<>();
      AtomicBoolean stop = new AtomicBoolean();
      IoEngineSession s = p.initiator.createSession(p.local, p.remote).orElseThrow();
      List<Thread> submitters = new ArrayList<>();
      CountDownLatch started = new CountDownLatch(3);
      for (int t = 0; t < 3; t++) {
        int me = t;
        Thread th = new Thread(() -> {
          started.countDown();
          while (!stop.get()) {
            all.add(me == 0 ? s.write(0, 0, 65536, 1) : me == 1 ? p.initiator.write(p.local, 0, p.remote, 0, 65536, 2)
                : p.initiator.read(p.local, 0, p.remote, 0, 65536, 3));
            if (all.size() > 200_000) break;
          }
        });
        th.start();
        submitters.add(th);
      }
      started.await();
      Thread.sleep(200);
      p.initiator.close();
      Thread.sleep(100); // submitters keep going against the closed engine for a moment
      stop.set(true);
      for (Thread th : submitters) th.join(10_000);
      List<TransferStatus> list = new ArrayList<>(all);
      // those submitted during close may need a moment to be failed by the closing loop; none may hang
      for (int i = 0; i < list.size(); i++)
        assertTrue(list.get(i).await(Duration.ofSeconds(5)), "transfer " + i + " of " + list.size() + " never ended: " + list.get(i));
      for (TransferStatus st : list) if (st.failed()) assertTrue(GONE.contains(st.code()), st.toString());
      assertFalse(list.isEmpty());
      System.out.println("submitted during close: " + list.size() + ", outcomes " + tally(list));
    }
  }

  @Test
  void closingThePeerEndsTheInitiatorsTransfersInFlight() {
    try (EnginePair p = new EnginePair(4 * MiB)) {
      List<TransferStatus> all = new ArrayList<>();
      for (int i = 0; i < 100; i++) all.add(p.initiator.write(p.local, 0, p.remote, 0, 4 * MiB, p.initiator.allocateTransferUid()));
      long t0 = System.nanoTime();
      p.target.close();
      for (int i = 0; i < all.size(); i++)
        assertTrue(all.get(i).await(Duration.ofSeconds(10)), "transfer " + i + " still in progress 10 s after its peer closed");
      long ms = (System.nanoTime() - t0) / 1_000_000;
      // the closing engine tells its peers, so nothing waits for the 10 s a question to it may take to time out
      assertTrue(ms < PEER_GONE_LIMIT_MS, "the writes to the closed peer ended only " + ms + " ms after its close() began");
      // a closing engine deregisters its memory before its connections drop: over RDMA a write that meets the revoked
      // region ends ERR_NOT_FOUND naming the deregistration (as over TCP), which is as true an ending as losing the peer
      for (TransferStatus s : all)
        if (s.failed())
          assertTrue(GONE.contains(s.code()) || (s.code() == StatusCode.ERR_NOT_FOUND && s.message().contains("was deregistered")), s.toString());
      System.out.println("peer closed with 100 x 4 MiB writes in flight: all ended after " + ms + " ms, outcomes " + tally(all));
      // new transfers to the closed peer fail too, and fast
      TransferStatus late = p.initiator.write(p.local, 0, p.remote, 0, 4096, 1);
      assertFailsWith(late, "write to a closed peer", StatusCode.ERR_PEER_LOST, StatusCode.ERR_TRANSPORT, StatusCode.ERR_BAD_STATE);
    }
  }

  /**
   * The peer closed before the initiator ever confirmed its memory: the first write's region confirmation would go to an
   * engine actor that no longer exists (RDMA, XGMI ask the owner) and wait out the ask timeout; the peer's closing
   * notice makes every write end at once with ERR_PEER_LOST instead.
   */
  @Test
  void writesToAPeerThatClosedBeforeAnyConfirmationFailFast() {
    try (EnginePair p = new EnginePair(1 * MiB)) {
      p.target.close();
      long t0 = System.nanoTime();
      List<TransferStatus> all = new ArrayList<>();
      for (int i = 0; i < 8; i++) all.add(p.initiator.write(p.local, 0, p.remote, 0, 65536, p.initiator.allocateTransferUid()));
      for (int i = 0; i < all.size(); i++)
        assertTrue(all.get(i).await(Duration.ofMillis(PEER_GONE_LIMIT_MS)), "write " + i + " to a closed peer still in progress: " + all.get(i));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertTrue(ms < PEER_GONE_LIMIT_MS, "writes to a closed peer ended only after " + ms + " ms");
      for (TransferStatus s : all) assertFailsWith(s, "write to a peer that closed", StatusCode.ERR_PEER_LOST);
      System.out.println("peer closed before any confirmation: 8 writes ended after " + ms + " ms, outcomes " + tally(all));
    }
  }
}
