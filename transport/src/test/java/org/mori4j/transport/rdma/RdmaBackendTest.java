package org.mori4j.transport.rdma;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.InboundNotifications;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.rdma.soft.SoftwareVerbsProvider;

/**
 * Two RDMA backends, without an engine, on the software provider (emulation): the whole bring-up that a NIC goes
 * through (device, PD, CQ, queue pairs RESET -> INIT -> RTR -> RTS from the handshake's QPN/GID/PSN/MTU, memory
 * regions) is {@link QpBringUp} and {@link RdmaBackend}, the code the ibverbs provider runs too. Then writes, reads
 * and batches byte for byte in both poll modes with 1 and 4 queue pairs, a notification, the NIC's refusal of a
 * wrong rkey (the queue pair leaves service and the backend asks for a reconnection), and a close that leaves no
 * memory region and no device thread behind.
 */
class RdmaBackendTest {
  private static final long SIZE = 8L << 20;

  /** A completion source driven by a plain thread, as the engine's poller actor drives it. */
  private static Thread drive(CompletionSource s, AtomicBoolean stop) {
    Thread t = new Thread(() -> {
      while (!stop.get() && !s.isClosed()) {
        if (s.doWork() == 0) s.awaitWork(1_000_000);
      }
    }, "test-poller-" + s.name());
    t.setDaemon(true);
    t.start();
    return t;
  }

  static final class Op extends TransferOp {
    final CompletableFuture<String> done = new CompletableFuture<>();

    @Override
    public void transferSucceeded() {
      done.complete("ok");
    }

    @Override
    public void transferFailed(TransportError error, String message) {
      done.complete(error + ": " + message);
    }

    String await() throws Exception {
      return done.get(20, TimeUnit.SECONDS);
    }
  }

  /** Two backends, each one buffer, connected initiator -> target; the confirmer answers as the target's engine would. */
  static final class Pair implements AutoCloseable {
    final Arena arena = Arena.ofShared();
    final MemorySegment a = arena.allocate(SIZE, 4096), b = arena.allocate(SIZE, 4096);
    final LocalRegion ra = new LocalRegion(1, 11, a, false, -1), rb = new LocalRegion(2, 22, b, false, -1);
    final RdmaBackend init, target;
    final AtomicBoolean stop = new AtomicBoolean();
    final List<Thread> pollers = new ArrayList<>();
    final List<String> reconnects = new CopyOnWriteArrayList<>();
    byte[] targetData;
    volatile int[] forgedRkeys;
    /** Whether only the next confirmation carries {@link #forgedRkeys} (a new connection then gets the real ones). */
    volatile boolean forgeOnce;
    /** When set, confirmations are answered once it completes (ops submitted meanwhile all wait for the answer). */
    volatile CompletableFuture<Void> confirmGate;
    /** The target's engine no longer has rb (it deregistered it): what it answers a confirmation from then on. */
    volatile boolean deregistered;
    /** Whether a reconnect request is answered as the engine answers it (a new handshake, off the worker's thread). */
    volatile boolean autoReconnect;
    Object peer;

    Pair(int qps, boolean event) {
      this(new RdmaSettings(qps, 16, 1, event, true, "", 64, 1024, 32, 1 << 20, 64 * 1024, Duration.ofSeconds(5)));
    }

    Pair(RdmaSettings s) {
      RegionConfirmer confirmer = (peerKey, id, key, answer) -> {
        Runnable reply = () -> {
          int[] forged = forgedRkeys;
          if (forgeOnce) forgedRkeys = null;
          if (id != rb.id() || key != rb.accessKey() || deregistered) answer.refused(TransportError.NOT_FOUND, "memory id " + id + " is not registered");
          else answer.registered(b.address(), SIZE, forged != null ? RdmaMemoryData.encode(forged) : targetData);
        };
        CompletableFuture<Void> gate = confirmGate;
        if (gate == null) reply.run();
        else gate.thenRunAsync(reply);
      };
      init = new RdmaBackend("init", s, new SoftwareVerbsProvider("127.0.0.1", null), confirmer);
      target = new RdmaBackend("target", s, new SoftwareVerbsProvider("127.0.0.1", null), confirmer);
      BackendListener l = new BackendListener() {
        @Override
        public void peerLost(String peerKey, TransportError error, String reason) {}

        @Override
        public void reconnect(String peerKey, String why) {
          reconnects.add(why);
          if (autoReconnect) Thread.ofVirtual().start(() -> peer = init.connect("target", target.acceptHandshake("init", init.handshakeRequest("target"))));
        }
      };
      init.start(l);
      target.start(l);
      for (RdmaBackend be : List.of(init, target)) for (CompletionSource c : be.completionSources()) pollers.add(drive(c, stop));
      init.registerMemory(ra);
      targetData = target.registerMemory(rb);
      peer = init.connect("target", target.acceptHandshake("init", init.handshakeRequest("target")));
      assertTrue(init.connected("target"));
    }

    Op single(byte kind, long localOff, long remoteOff, long len, long uid) {
      Op op = new Op();
      op.initSingle(kind, ra, localOff, peer, rb.id(), rb.accessKey(), b.address(), remoteOff, len, uid);
      init.submit(op);
      return op;
    }

    @Override
    public void close() throws Exception {
      init.close();
      target.close();
      stop.set(true);
      for (Thread t : pollers) t.join(5000);
      arena.close();
    }
  }

  private static void fill(MemorySegment s, long seed) {
    java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
    for (long i = 0; i + 8 <= s.byteSize(); i += 8) s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, r.nextLong());
  }

  @ParameterizedTest(name = "qpPerTransfer {0}, event mode {1}")
  @CsvSource({"1, false", "4, false", "1, true", "4, true"})
  void writesReadsAndBatchesLandExactly(int qps, boolean event) throws Exception {
    try (Pair p = new Pair(qps, event)) {
      fill(p.a, qps * 10L + (event ? 1 : 0));
      assertEquals("ok", p.single(TransferOp.WRITE, 0, 0, SIZE, 1).await(), "8 MiB write (striped over " + qps + ")");
      assertEquals(-1, MemorySegment.mismatch(p.a, 0, SIZE, p.b, 0, SIZE));
      assertEquals("ok", p.single(TransferOp.WRITE, 5, 4093, 1, 2).await(), "1-byte write");
      assertEquals(p.a.get(ValueLayout.JAVA_BYTE, 5), p.b.get(ValueLayout.JAVA_BYTE, 4093));
      fill(p.b, 99);
      assertEquals("ok", p.single(TransferOp.READ, 0, 0, SIZE, 3).await(), "8 MiB read");
      assertEquals(-1, MemorySegment.mismatch(p.a, 0, SIZE, p.b, 0, SIZE));
      int n = 1000;
      long[] lo = new long[n], ro = new long[n], sz = new long[n];
      for (int i = 0; i < n; i++) {
        lo[i] = i * 4096L;
        ro[i] = (n - 1 - i) * 4096L + 7;
        sz[i] = 1 + i % 4000;
      }
      fill(p.a, 7);
      Op batch = new Op();
      batch.initBatch(TransferOp.WRITE, p.ra, lo, p.peer, p.rb.id(), p.rb.accessKey(), p.b.address(), ro, sz, 4);
      p.init.submit(batch);
      assertEquals("ok", batch.await(), "1,000-block batch");
      for (int i = 0; i < n; i++) assertEquals(-1, MemorySegment.mismatch(p.a, lo[i], lo[i] + sz[i], p.b, ro[i], ro[i] + sz[i]), "block " + i);
      // every notified write was recorded once at the target (the batch under its uid too)
      for (long uid : new long[] {1, 2, 4}) {
        InboundNotifications.Outcome o = p.target.popInbound("init", uid);
        assertNotNull(o, "notification of uid " + uid);
        assertTrue(o.succeeded());
      }
      assertNull(p.target.popInbound("init", 3), "a read notifies nobody");
    }
  }

  @Test
  void aWrongRkeyIsRefusedByTheDeviceAndTheQueuePairIsReplaced() throws Exception {
    try (Pair p = new Pair(1, false)) {
      p.forgedRkeys = new int[] {RdmaMemoryData.rkey(p.targetData, 0) ^ 0x5a5a};
      String r = p.single(TransferOp.WRITE, 0, 0, 4096, 1).await();
      // the owner, asked again, still has the region under the keys it gave: the device's refusal stands
      assertTrue(r.startsWith("RDMA_OP") && r.contains("IBV_WC_REM_ACCESS_ERR") && r.contains("still has memory id 2 registered"), r);
      assertFalse(p.init.connected("target"), "a queue pair in ERR is out of service until replaced");
      assertEquals(1, p.reconnects.size(), "the engine is asked to connect again: " + p.reconnects);
      // what the engine then does: a new handshake, new queue pairs
      p.forgedRkeys = null;
      p.peer = p.init.connect("target", p.target.acceptHandshake("init", p.init.handshakeRequest("target")));
      assertTrue(p.init.connected("target"));
      assertEquals("ok", p.single(TransferOp.WRITE, 0, 0, 4096, 2).await(), "write over the replaced queue pair");
    }
  }

  @ParameterizedTest(name = "qpPerTransfer {0}")
  @CsvSource({"1", "4"})
  void writesMeetingARegionDeregisteredBeforeTheRevocationArrivedEndNotFound(int qps) throws Exception {
    try (Pair p = new Pair(qps, false)) {
      assertEquals("ok", p.single(TransferOp.WRITE, 0, 0, 4096, 1).await(), "the write that confirms the region");
      // the owner's engine forgets the region and its NIC's memory region is gone; the revocation it sends to the
      // initiator has not arrived (it never does here), so the initiator still holds the confirmed rkey
      p.deregistered = true;
      p.autoReconnect = true; // transfers submitted after the refusal wait for the new connection (as in an engine)
      p.target.deregisterMemory(p.rb);
      List<Op> ops = new ArrayList<>();
      for (int i = 0; i < 8; i++) ops.add(p.single(TransferOp.WRITE, 0, i * 4096L, 4096, 10 + i));
      for (int i = 0; i < ops.size(); i++) {
        String r = ops.get(i).await();
        // the first meets the NIC's refusal; the others are flushed with its queue pair, or (taken by the worker after
        // the refusal) held for the new connection, where the owner, asked again, no longer has the region
        boolean flushed = r.contains("was deregistered while the transfer was in flight") && r.contains("IBV_WC_REM_ACCESS_ERR");
        boolean heldThenRefused = r.contains("memory id " + p.rb.id() + " is not registered");
        assertTrue(r.startsWith("NOT_FOUND") && (flushed || heldThenRefused) && (i > 0 || flushed), "write " + i + ": " + r);
      }
      // asked for once the connection's other queue pairs have drained, which may be after the writes ended
      for (long until = System.nanoTime() + 5_000_000_000L; p.reconnects.isEmpty() && System.nanoTime() < until; ) Thread.sleep(5);
      assertFalse(p.reconnects.isEmpty(), "the refused queue pair is replaced as for any other remote access error");
    }
  }

  @Test
  void aViewSharesItsParentsMemoryRegionUntilBothAreDeregistered() throws Exception {
    try (Pair p = new Pair(1, false)) {
      int before = p.init.openMemoryRegions();
      LocalRegion view = new LocalRegion(3, 33, p.a.asSlice(4096, 1 << 20), false, -1);
      assertTrue(p.init.registerView(view, p.ra).length > 0);
      assertEquals(before, p.init.openMemoryRegions(), "a view is served by its parent's memory region");
      p.init.deregisterMemory(p.ra);
      assertEquals(before, p.init.openMemoryRegions(), "the view still uses it");
      fill(p.a, 7);
      Op op = new Op();
      op.initSingle(TransferOp.WRITE, view, 0, p.peer, p.rb.id(), p.rb.accessKey(), p.b.address(), 0, 65536, 9);
      p.init.submit(op);
      assertEquals("ok", op.await(), "a write from the view after its parent was deregistered");
      assertEquals(-1, p.b.asSlice(0, 65536).mismatch(p.a.asSlice(4096, 65536)));
      p.init.deregisterMemory(view);
      assertEquals(before - 1, p.init.openMemoryRegions(), "closed with its last user");
    }
  }

  @Test
  void closeLeavesNoMemoryRegionAndNoDeviceThread() throws Exception {
    Pair p = new Pair(2, true);
    assertEquals("ok", p.single(TransferOp.WRITE, 0, 0, 1 << 20, 1).await());
    assertTrue(p.init.openMemoryRegions() > 0);
    p.close();
    assertEquals(0, p.init.openMemoryRegions());
    assertEquals(0, p.target.openMemoryRegions());
    long deadline = System.nanoTime() + 5_000_000_000L;
    List<String> left;
    do {
      left = Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName).filter(n -> n.startsWith("soft-rdma")).toList();
    } while (!left.isEmpty() && System.nanoTime() < deadline && sleep());
    assertEquals(List.of(), left, "software device threads left after close");
  }

  private static boolean sleep() {
    try {
      Thread.sleep(20);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return true;
  }
}
