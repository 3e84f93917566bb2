package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;

/**
 * Bulk lanes ({@code mori4j.tcp.bulk-lanes}): a large transfer is cut into one stripe for the first regular lane and
 * one per bulk lane, the target serves the bulk lane on its bulk loop (moved there after the hello), the bytes land
 * exactly, and small transfers never take a bulk lane. A target without bulk lanes serves a peer's bulk lane on its
 * regular loop.
 */
class BulkLanesTest {
  private static final long SIZE = 6L << 20;

  private final Arena arena = Arena.ofShared();
  private final LoopDrivers drivers = new LoopDrivers();
  private TcpBackend a;
  private TcpBackend b;
  private TcpPeer peerOfA;

  private static TcpSettings settings() {
    // two regular lanes on one I/O thread; anything from 1 MiB up is striped
    return new TcpSettings("127.0.0.1", 0, 2, 1, 1L << 20, 0, Duration.ofSeconds(10), Duration.ofSeconds(5), 1024, false, 4 << 20);
  }

  private void start(int bulkOfA, int bulkOfB) {
    a = new TcpBackend("A", settings(), null, TcpLatency.OFF, bulkOfA);
    b = new TcpBackend("B", settings(), null, TcpLatency.OFF, bulkOfB);
    a.start(BackendListener.NONE);
    b.start(BackendListener.NONE);
    drivers.drive(a);
    drivers.drive(b);
    peerOfA = (TcpPeer) a.connect("B", b.acceptHandshake("A", a.handshakeRequest("B")));
  }

  @AfterEach
  void close() throws InterruptedException {
    if (a != null) a.close();
    if (b != null) b.close();
    drivers.close();
    arena.close();
  }

  private LocalRegion region(TcpBackend owner, long id) {
    LocalRegion r = new LocalRegion(id, id * 7 + 1, arena.allocate(SIZE, 4096), false, -1);
    owner.registerMemory(r);
    return r;
  }

  private void move(byte kind, LocalRegion local, LocalRegion remote, long size) throws InterruptedException {
    RecordingOp.moveOrFail(a, peerOfA, kind, local, remote, size);
  }

  private static int targetConnectionsOn(TcpIoLoop loop) throws Exception {
    CompletableFuture<Integer> n = new CompletableFuture<>();
    loop.execute(() -> n.complete(loop.targetConnections()));
    return n.get(10, TimeUnit.SECONDS);
  }

  /** Writes then reads back a striped transfer and a small one; returns nothing, asserts the bytes. */
  private void stripedAndSmallRoundTrips() throws InterruptedException {
    LocalRegion src = region(a, 1), dst = region(b, 2), back = region(a, 3);
    byte[] bytes = new byte[(int) SIZE];
    new Random(23).nextBytes(bytes);
    MemorySegment.copy(bytes, 0, src.segment(), ValueLayout.JAVA_BYTE, 0, bytes.length);
    for (long size : new long[] {SIZE, 4096}) {
      move(TransferOp.WRITE, src, dst, size);
      assertEquals(-1, src.segment().asSlice(0, size).mismatch(dst.segment().asSlice(0, size)), "write of " + size + " B");
      move(TransferOp.READ, back, dst, size);
      assertEquals(-1, src.segment().asSlice(0, size).mismatch(back.segment().asSlice(0, size)), "read of " + size + " B");
    }
  }

  @Test
  void largeTransfersUseTheBulkLaneOnItsOwnLoopAndSmallOnesNever() throws Exception {
    start(1, 1);
    assertEquals(2, a.completionSources().size(), "one regular I/O loop and the bulk loop");
    assertEquals(3, peerOfA.lanes.length);
    assertEquals(2, peerOfA.stripes(), "one stripe on the first regular lane, one on the bulk lane");
    InitiatorConnection bulk = peerOfA.lanes[2];
    assertSame(a.bulkLoop(), bulk.loop);
    assertTrue(a.describePeer(peerOfA).startsWith("TCP, 2 connection(s) + 1 bulk to "), a.describePeer(peerOfA));
    // the target's end of the bulk lane moves to its bulk loop after the hello (a task on that loop)
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (targetConnectionsOn(b.bulkLoop()) == 0 && System.nanoTime() < until) Thread.sleep(5);
    assertEquals(1, targetConnectionsOn(b.bulkLoop()), "the bulk lane's target end on the bulk loop");
    stripedAndSmallRoundTrips();
    // two striped transfers sent one stripe each on the bulk lane; the small ones none
    assertEquals(3, bulk.nextSeq, "requests on the bulk lane");
  }

  @Test
  void aTargetWithoutBulkLanesServesThemOnItsRegularLoop() throws Exception {
    start(1, 0);
    assertNull(b.bulkLoop());
    assertEquals(1, b.completionSources().size());
    stripedAndSmallRoundTrips();
    assertEquals(3, peerOfA.lanes[2].nextSeq, "requests on the bulk lane");
  }
}
