package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A target engine in a child JVM is killed with SIGKILL while this JVM floods it with writes: every
 * transfer that was in flight and every transfer started afterwards must end, failed with ERR_PEER_LOST or
 * ERR_TRANSPORT (a session's with ERR_BAD_STATE once the engine has invalidated it), within 20 s of the kill.
 */
class PeerKillTest {
  private static final long BUF = 8L << 20;
  private static final long BLOCK = 1L << 20;
  private static final Set<StatusCode> LOST = Set.of(StatusCode.ERR_PEER_LOST, StatusCode.ERR_TRANSPORT);

  /** One submitted transfer and when it was submitted relative to the kill. */
  private record Sent(TransferStatus status, boolean afterKill, boolean session) {}

  @Test
  void childPeerKilledMidFloodFailsEveryTransferWithin20Seconds() throws Exception {
    String childKey = "child-target-" + ProcessHandle.current().pid();
    ConcurrentLinkedQueue<String> childLog = new ConcurrentLinkedQueue<>();
    Process child = ChildTargets.startChild(childKey, BUF);
    IoEngine initiator = null;
    java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
    try {
      String[] ready = ChildTargets.awaitReady(child, childLog);
      String host = ready[1];
      int port = Integer.parseInt(ready[2]);
      assertEquals("127.0.0.1", host);

      initiator = IoEngine.create("kill-test-initiator-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
      TestBackends.create(initiator);
      EngineDesc remoteEngine = initiator.discover(host, port);
      assertEquals(childKey, remoteEngine.key());
      assertEquals(child.pid(), remoteEngine.pid());
      MemoryDesc remote = initiator.lookupMemory(remoteEngine, "buf").orElseThrow(() -> new AssertionError("child published no 'buf'"));
      assertEquals(BUF, remote.size());
      initiator.registerRemoteEngine(remoteEngine);
      java.lang.foreign.MemorySegment localBuf = arena.allocate(2 * BUF, 4096);
      MemoryDesc local = initiator.registerMemory(localBuf);

      // across processes the bytes must arrive too: write a pattern, read it back elsewhere, compare
      randomize(localBuf, 0, BUF, 5);
      assertSucceeds(initiator.write(local, 0, remote, 0, BUF, 1), "cross-process write");
      assertSucceeds(initiator.read(local, BUF, remote, 0, BUF, 2), "cross-process read");
      assertRangeEquals(localBuf, 0, localBuf, BUF, BUF, "cross-process round trip");

      IoEngine ini = initiator;
      IoEngineSession session = ini.createSession(local, remote).orElseThrow();
      ConcurrentLinkedQueue<Sent> sent = new ConcurrentLinkedQueue<>();
      AtomicBoolean killed = new AtomicBoolean();
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger succeededBeforeKill = new AtomicInteger();
      List<Thread> flooders = new ArrayList<>();
      int threads = 4;
      AtomicReference<Throwable> threadError = new AtomicReference<>();
      for (int t = 0; t < threads; t++) {
        int me = t;
        Thread th = new Thread(() -> {
          try {
            java.util.ArrayDeque<TransferStatus> window = new java.util.ArrayDeque<>();
            long i = 0;
            while (!stop.get()) {
              boolean after = killed.get();
              long off = (i++ % (BUF / BLOCK)) * BLOCK;
              TransferStatus s;
              boolean viaSession = me == 0;
              if (viaSession) s = session.write(off, off, BLOCK, session.allocateTransferUid());
              else if (me == 1) s = ini.batchWrite(List.of(local), List.of(new long[] {off, off + 4096}), List.of(remote),
                  List.of(new long[] {off, off + 8192}), List.of(new long[] {1000, 2000}), new long[] {ini.allocateTransferUid()}).get(0);
              else s = ini.write(local, off, remote, off, BLOCK, ini.allocateTransferUid());
              sent.add(new Sent(s, after, viaSession));
              window.add(s);
              if (window.size() >= 8) {
                TransferStatus oldest = window.poll();
                oldest.await(Duration.ofSeconds(30));
                if (oldest.succeeded() && !killed.get()) succeededBeforeKill.incrementAndGet();
              }
              if (after && sent.size() > 2_000_000) break;
            }
          } catch (Throwable e) {
            threadError.compareAndSet(null, e);
          }
        }, "flood-" + t);
        th.start();
        flooders.add(th);
      }
      long floodStart = System.nanoTime();
      while (succeededBeforeKill.get() < 200 && System.nanoTime() - floodStart < 20_000_000_000L) Thread.sleep(20);
      assertTrue(succeededBeforeKill.get() > 0, "the flood moved nothing before the kill");

      child.destroyForcibly(); // SIGKILL
      long killedAt = System.nanoTime();
      assertTrue(child.waitFor(10, TimeUnit.SECONDS), "child did not die");
      killed.set(true);
      Thread.sleep(1000); // keep flooding a dead peer for a second
      stop.set(true);
      for (Thread th : flooders) th.join(30_000);
      assertNull(threadError.get(), () -> "a flood thread threw: " + threadError.get());

      List<Sent> all = new ArrayList<>(sent);
      Map<StatusCode, Integer> outcomes = new EnumMap<>(StatusCode.class);
      int afterKill = 0;
      for (Sent s : all) {
        long left = Duration.ofSeconds(20).toNanos() - (System.nanoTime() - killedAt);
        assertTrue(s.status().await(Duration.ofNanos(Math.max(0, left))),
            "a transfer was still in progress 20 s after the peer was killed: " + s.status());
        outcomes.merge(s.status().code(), 1, Integer::sum);
        if (s.status().failed()) {
          boolean ok = LOST.contains(s.status().code()) || (s.session() && s.status().code() == StatusCode.ERR_BAD_STATE);
          assertTrue(ok, "ended with " + s.status() + (s.session() ? " (session)" : ""));
        }
        if (s.afterKill()) {
          afterKill++;
          assertTrue(s.status().failed(), "a transfer started after the peer died succeeded: " + s.status());
        }
      }
      long endedMs = (System.nanoTime() - killedAt) / 1_000_000;
      assertTrue(afterKill > 0, "no transfer was started after the kill");
      System.out.println("peer kill: " + all.size() + " transfers, " + afterKill + " started after the kill, all ended "
          + endedMs + " ms after the kill; outcomes " + outcomes);
      // and the dead peer keeps failing new transfers at once or nearly so
      assertFailsWith(ini.write(local, 0, remote, 0, 4096, 9), "write to the dead peer", StatusCode.ERR_PEER_LOST, StatusCode.ERR_TRANSPORT);
    } finally {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
      if (initiator != null) initiator.close();
      arena.close();
    }
  }

  /**
   * A peer with only control questions outstanding is frozen (SIGSTOP), then SIGKILLed. Two questions wait on it: the
   * region confirmation of the first writes to its buffer (RDMA asks the owner before it posts anything), and, since
   * it imported this engine's memory, the revocation that deregistering that memory asks of it. Nothing is posted and
   * the peer never closed, so no queue pair errs and no closing notice comes; without the engine's liveness probe both
   * wait out their 10 s timeout (mori4j.engine.handshake-timeout). While the peer is merely frozen (alive: its kernel
   * still accepts connections) nothing may end; after the kill every write must end ERR_PEER_LOST and the
   * deregistration must return well before that timeout. Over TCP nothing is confirmed or revoked (the data
   * connections' reset ends the writes). Not run in EVENT mode: the questions come before any queue pair is used, so
   * the poll mode and the queue-pair count change nothing here (one child JVM less).
   */
  @Test
  void killedPeerWithOnlyControlQuestionsOutstandingEndsThemFast() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeFalse("EVENT".equals(System.getProperty("mori4j.test.rdma.poll")),
        "the confirmation path does not depend on the poll mode; run in the default and rdma-polling-qp1 executions");
    String childKey = "confirm-kill-target-" + ProcessHandle.current().pid();
    ConcurrentLinkedQueue<String> childLog = new ConcurrentLinkedQueue<>();
    Process child = ChildTargets.startChild(childKey, BUF);
    IoEngine initiator = null;
    java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
    long frozenMs = 1_000; // two probe intervals (mori4j.engine.peer-liveness-probe, 500 ms)
    long limitMs = 5_000; // well under the 10 s question timeout (mori4j.engine.handshake-timeout)
    try {
      String[] ready = ChildTargets.awaitReady(child, childLog);
      initiator = IoEngine.create("confirm-kill-initiator-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
      TestBackends.create(initiator);
      EngineDesc remoteEngine = initiator.discover(ready[1], Integer.parseInt(ready[2]));
      MemoryDesc remote = initiator.lookupMemory(remoteEngine, "buf").orElseThrow();
      initiator.registerRemoteEngine(remoteEngine);
      MemoryDesc local = initiator.registerMemory(arena.allocate(BLOCK, 4096));
      MemoryDesc imported = initiator.registerMemory(arena.allocate(BLOCK, 4096));
      initiator.publishMemory("imported", imported);
      // the child writes into "imported": over RDMA it confirms it here first, so this engine must revoke it there
      EngineDesc me = initiator.engineDesc();
      java.io.Writer toChild = new java.io.OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8);
      toChild.write("WRITE " + me.host() + " " + me.port() + " imported\n");
      toChild.flush();
      assertEquals("WROTE SUCCESS", ChildTargets.awaitLine(childLog, "WROTE", Duration.ofSeconds(30)), "the child's write into this engine");

      assertEquals(0, new ProcessBuilder("kill", "-STOP", String.valueOf(child.pid())).inheritIO().start().waitFor());
      // kill(2) returns once the signal is queued; each thread of the child stops when it next enters the kernel. A write
      // sent before its target's I/O thread stopped may still be answered (seen once over TCP), so wait for every thread
      ChildTargets.awaitStopped(child.pid());
      long stoppedAt = System.nanoTime();
      List<TransferStatus> all = new ArrayList<>();
      ConcurrentLinkedQueue<String> endings = new ConcurrentLinkedQueue<>(); // for the message of a failure below
      for (int i = 0; i < 8; i++) {
        TransferStatus s = initiator.write(local, 0, remote, i * 65536L, 65536, initiator.allocateTransferUid());
        int n = i;
        s.completion().thenAccept(d -> endings.add("write " + n + " " + d.code() + " " + (System.nanoTime() - stoppedAt) / 1_000_000 + " ms after the stop"));
        all.add(s);
      }
      IoEngine ini = initiator;
      java.util.concurrent.CompletableFuture<Void> deregistered = java.util.concurrent.CompletableFuture.runAsync(() -> ini.deregisterMemory(imported));
      Thread.sleep(frozenMs);
      // a frozen peer is alive (its kernel accepts the probe's connections and buffers TCP data) but answers nothing:
      // over RDMA the confirmation and the revocation wait, over TCP the writes wait for their responses
      for (TransferStatus s : all) assertTrue(s.inProgress(), "a write ended while its peer was only frozen (alive): " + s + "; " + endings
          + "; the child's state: " + ChildTargets.childState(child.pid()));
      if (TestBackends.rdma())
        assertFalse(deregistered.isDone(), "the deregistration stopped waiting for a peer that was only frozen (alive)");

      List<TransferStatus> open = all;
      child.destroyForcibly(); // SIGKILL
      long killedAt = System.nanoTime();
      assertTrue(child.waitFor(10, TimeUnit.SECONDS), "child did not die");
      for (int i = 0; i < all.size(); i++) {
        long left = Duration.ofMillis(limitMs).toNanos() - (System.nanoTime() - killedAt);
        assertTrue(all.get(i).await(Duration.ofNanos(Math.max(0, left))),
            "write " + i + " was still in progress " + limitMs + " ms after its peer was killed: " + all.get(i));
      }
      long writesMs = (System.nanoTime() - killedAt) / 1_000_000;
      long left = Duration.ofMillis(limitMs).toNanos() - (System.nanoTime() - killedAt);
      try {
        deregistered.get(Math.max(0, left), TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        fail("deregistering memory the killed peer had imported still waited " + limitMs + " ms after the kill (its revocation)");
      }
      long deregisterMs = (System.nanoTime() - killedAt) / 1_000_000;
      assertFalse(open.isEmpty(), "no write was still in progress at the kill: " + endings);
      for (TransferStatus s : open) assertFailsWith(s, "write to a killed peer", StatusCode.ERR_PEER_LOST);
      System.out.println("peer killed with only control questions outstanding (" + TestBackends.describe() + "): " + open.size()
          + " writes ended ERR_PEER_LOST " + writesMs + " ms and the deregistration returned " + deregisterMs
          + " ms after the kill; first write: " + all.get(0).message());
    } finally {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
      if (initiator != null) initiator.close();
      arena.close();
    }
  }

  /**
   * registerRemoteEngine asks the peer's engine for a backend handshake and, with no answer, waits handshake-timeout
   * (10 s). A peer whose process is frozen (SIGSTOP) is alive and answers once it runs again: its registration must
   * wait and then succeed. A peer whose process is gone (SIGKILL) never answers: its refused control port (the
   * liveness probe, every 500 ms) must fail the registration well before the timeout, naming the peer and what was
   * seen. The handshake's wait and probe are the engine's (BackendActor), the same for every backend: run in the
   * default execution only (one child JVM).
   */
  @Test
  void registeringAnEngineWhoseProcessIsGoneFailsFastButAFrozenOneIsWaitedFor() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeFalse(TestBackends.rdma(),
        "the handshake's wait and the probe are the same for every backend; run in the default execution");
    String childKey = "register-kill-target-" + ProcessHandle.current().pid();
    ConcurrentLinkedQueue<String> childLog = new ConcurrentLinkedQueue<>();
    Process child = ChildTargets.startChild(childKey, BUF);
    IoEngine initiator = null;
    long limitMs = 5_000; // half the handshake timeout (mori4j.engine.handshake-timeout, 10 s)
    try {
      String[] ready = ChildTargets.awaitReady(child, childLog);
      initiator = IoEngine.create("register-kill-initiator-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
      TestBackends.create(initiator);
      EngineDesc remoteEngine = initiator.discover(ready[1], Integer.parseInt(ready[2]));

      assertEquals(0, new ProcessBuilder("kill", "-STOP", String.valueOf(child.pid())).inheritIO().start().waitFor());
      ChildTargets.awaitStopped(child.pid());
      IoEngine ini = initiator;
      java.util.concurrent.CompletableFuture<Void> frozen = java.util.concurrent.CompletableFuture.runAsync(() -> ini.registerRemoteEngine(remoteEngine));
      Thread.sleep(1_200); // two probe intervals and more
      assertFalse(frozen.isDone(), () -> "the registration of a frozen (alive) peer ended: " + frozen);
      assertEquals(0, new ProcessBuilder("kill", "-CONT", String.valueOf(child.pid())).inheritIO().start().waitFor());
      frozen.get(10, TimeUnit.SECONDS); // throws if it failed
      initiator.deregisterRemoteEngine(remoteEngine);

      child.destroyForcibly(); // SIGKILL
      assertTrue(child.waitFor(10, TimeUnit.SECONDS), "child did not die");
      long t0 = System.nanoTime();
      IoEngineException e = assertThrows(IoEngineException.class, () -> ini.registerRemoteEngine(remoteEngine));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertTrue(ms < limitMs, "registering a killed peer took " + ms + " ms: " + e.getMessage());
      assertTrue(e.getMessage().contains("'" + childKey + "' is gone") && e.getMessage().contains("refused a connection"), e.getMessage());
      System.out.println("registering a killed peer (" + TestBackends.describe() + ") failed after " + ms + " ms: " + e.code() + " " + e.getMessage());
    } finally {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
      if (initiator != null) initiator.close();
    }
  }

  @Test
  void frozenPeerIsDeclaredLostAfterThePeerTimeoutButAnIdlePeerIsNot() throws Exception {
    String childKey = "frozen-target-" + ProcessHandle.current().pid();
    ConcurrentLinkedQueue<String> childLog = new ConcurrentLinkedQueue<>();
    Process child = ChildTargets.startChild(childKey, BUF);
    IoEngine initiator = null;
    java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
    Duration peerTimeout = Duration.ofSeconds(2);
    try {
      String[] ready = ChildTargets.awaitReady(child, childLog);
      initiator = IoEngine.create("freeze-test-initiator-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
      TestBackends.create(initiator, TcpBackendConfig.defaults().withPeerTimeout(peerTimeout));
      EngineDesc remoteEngine = initiator.discover(ready[1], Integer.parseInt(ready[2]));
      MemoryDesc remote = initiator.lookupMemory(remoteEngine, "buf").orElseThrow();
      initiator.registerRemoteEngine(remoteEngine);
      MemoryDesc local = initiator.registerMemory(arena.allocate(BUF, 4096));
      assertSucceeds(initiator.write(local, 0, remote, 0, BLOCK, 1), "first write");

      // silence without anything outstanding is not a failure
      Thread.sleep(peerTimeout.toMillis() + 1000);
      assertSucceeds(initiator.write(local, 0, remote, 0, BLOCK, 2), "write after an idle period longer than the peer timeout");

      // freeze the peer: its sockets stay open but nothing moves any more
      assertEquals(0, new ProcessBuilder("kill", "-STOP", String.valueOf(child.pid())).inheritIO().start().waitFor());
      long frozenAt = System.nanoTime();
      List<TransferStatus> all = new ArrayList<>();
      for (int i = 0; i < 200; i++) all.add(initiator.write(local, 0, remote, 0, BUF, 10 + i)); // far more than socket buffers hold
      for (TransferStatus s : all) {
        long left = Duration.ofSeconds(15).toNanos() - (System.nanoTime() - frozenAt);
        assertTrue(s.await(Duration.ofNanos(Math.max(0, left))), "a transfer to a frozen peer was still in progress after 15 s: " + s);
      }
      long ms = (System.nanoTime() - frozenAt) / 1_000_000;
      int failed = 0;
      for (TransferStatus s : all) {
        if (s.failed()) {
          failed++;
          assertTrue(LOST.contains(s.code()), s.toString());
        }
      }
      assertTrue(failed > 0, "no transfer to the frozen peer failed");
      assertTrue(ms >= peerTimeout.toMillis() - 200, "peer declared lost after " + ms + " ms, before its timeout");
      System.out.println("frozen peer: " + failed + " of " + all.size() + " writes failed, all ended " + ms + " ms after the freeze");
      assertFailsWith(initiator.write(local, 0, remote, 0, 4096, 5), "write to the lost peer", StatusCode.ERR_PEER_LOST, StatusCode.ERR_TRANSPORT);
    } finally {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
      if (initiator != null) initiator.close();
      arena.close();
    }
  }
}
