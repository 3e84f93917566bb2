package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/**
 * {@link IoEngine#markPeerLost}: what the cluster module calls when a member becomes unreachable or leaves.
 * The peer is dropped, what is in flight to it and its sessions end with ERR_PEER_LOST, and until it is
 * registered again every new transfer, batch and session to it fails at once with ERR_PEER_LOST and a message
 * naming the engine and the reason; the engine remembers a bounded number of lost keys, newest last.
 */
class PeerLostTest {
  private static final long BUF = 32L << 20;
  private static final String REASON = "member pekko://mori4j@127.0.0.1:25999 unreachable";

  @Test
  void lostPeerFailsInFlightTransfersSessionsAndNewTransfersWithPeerLostUntilRegisteredAgain() throws Exception {
    try (EnginePair p = new EnginePair(BUF)) {
      String target = p.target.key();
      IoEngineSession session = p.initiator.createSession(p.local, p.remote).orElseThrow();
      assertSucceeds(session.write(0, 0, 4096, session.allocateTransferUid()), "session write before the loss");

      // far more than loopback moves in the moment the mark takes: some of it is still queued or on the wire
      List<TransferStatus> inFlight = new ArrayList<>();
      for (int i = 0; i < 64; i++) inFlight.add(p.initiator.write(p.local, 0, p.remote, 0, BUF, p.initiator.allocateTransferUid()));
      p.initiator.markPeerLost(target, REASON);

      Map<StatusCode, Integer> outcomes = new EnumMap<>(StatusCode.class);
      for (TransferStatus s : inFlight) {
        assertTrue(s.await(Duration.ofSeconds(20)), "a transfer in flight to the lost peer did not end within 20 s: " + s);
        outcomes.merge(s.code(), 1, Integer::sum);
        if (s.failed()) {
          assertEquals(StatusCode.ERR_PEER_LOST, s.code(), "in-flight transfer to the lost peer: " + s);
          assertTrue(s.message().contains(REASON), "in-flight failure should carry the reason: " + s.message());
        }
      }
      assertTrue(outcomes.getOrDefault(StatusCode.ERR_PEER_LOST, 0) > 0, "nothing was in flight when the peer was lost: " + outcomes);
      System.out.println("transfers in flight when the peer was marked lost: " + outcomes);

      // new transfers of every kind fail at once, naming the engine and the reason
      assertRefused(p.initiator.write(p.local, 0, p.remote, 0, 4096, 1), StatusCode.ERR_PEER_LOST, target, REASON);
      assertRefused(p.initiator.read(p.local, 0, p.remote, 0, 4096, 2), StatusCode.ERR_PEER_LOST, target, REASON);
      List<TransferStatus> batch = p.initiator.batchWrite(List.of(p.local), List.of(new long[] {0, 8192}), List.of(p.remote),
          List.of(new long[] {0, 16384}), List.of(new long[] {100, 200}), new long[] {3});
      assertRefused(batch.get(0), StatusCode.ERR_PEER_LOST, target, REASON);
      IoEngineException noSession = assertThrows(IoEngineException.class, () -> p.initiator.createSession(p.local, p.remote));
      assertEquals(StatusCode.ERR_PEER_LOST, noSession.code(), noSession.getMessage());
      assertTrue(noSession.getMessage().contains(target) && noSession.getMessage().contains(REASON), noSession.getMessage());

      // the session that existed is invalidated with the same code (the engine tells its actor asynchronously)
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (session.alive() && System.nanoTime() < deadline) Thread.sleep(10);
      assertFalse(session.alive(), "session to the lost peer still alive 5 s after the mark");
      TransferStatus viaSession = session.write(0, 0, 4096, session.allocateTransferUid());
      assertRefused(viaSession, StatusCode.ERR_PEER_LOST, target, REASON);
      assertRefused(session.batchWrite(new long[] {0}, new long[] {0}, new long[] {64}, session.allocateTransferUid()),
          StatusCode.ERR_PEER_LOST, REASON);

      // a later mark with another reason replaces the message
      p.initiator.markPeerLost(target, "member pekko://mori4j@127.0.0.1:25999 was removed from the cluster");
      assertRefused(p.initiator.write(p.local, 0, p.remote, 0, 4096, 4), StatusCode.ERR_PEER_LOST, "was removed from the cluster");

      // registering the engine again ends the loss: transfers and sessions work, byte for byte
      p.initiator.registerRemoteEngine(p.target.engineDesc());
      randomize(p.localBuf, 0, 1 << 20, 7);
      assertSucceeds(p.initiator.write(p.local, 0, p.remote, 4096, 1 << 20, 5), "write after re-registration");
      assertRangeEquals(p.localBuf, 0, p.remoteBuf, 4096, 1 << 20, "write after re-registration");
      IoEngineSession again = p.initiator.createSession(p.local, p.remote).orElseThrow();
      assertSucceeds(again.write(0, 0, 4096, again.allocateTransferUid()), "new session after re-registration");

      // and deregistering it now is an ordinary deregistration: ERR_NOT_FOUND, not a loss
      p.initiator.deregisterRemoteEngine(p.target.engineDesc());
      assertRefused(p.initiator.write(p.local, 0, p.remote, 0, 4096, 6), StatusCode.ERR_NOT_FOUND, target);
    }
  }

  @Test
  void markPeerLostRefusesBadArgumentsAndAClosedEngine() {
    try (EnginePair p = new EnginePair(1 << 20)) {
      IoEngineException nul = assertThrows(IoEngineException.class, () -> p.initiator.markPeerLost(null, REASON));
      assertEquals(StatusCode.ERR_INVALID_ARGS, nul.code());
      IoEngineException self = assertThrows(IoEngineException.class, () -> p.initiator.markPeerLost(p.initiator.key(), REASON));
      assertEquals(StatusCode.ERR_INVALID_ARGS, self.code());
      assertTrue(self.getMessage().contains(p.initiator.key()), self.getMessage());
      // no reason is still a loss, with a message saying so
      p.initiator.markPeerLost(p.target.key(), null);
      assertRefused(p.initiator.write(p.local, 0, p.remote, 0, 64, 1), StatusCode.ERR_PEER_LOST, p.target.key(), "no reason given");
      p.initiator.close();
      IoEngineException closed = assertThrows(IoEngineException.class, () -> p.initiator.markPeerLost(p.target.key(), REASON));
      assertEquals(StatusCode.ERR_BAD_STATE, closed.code());
    }
  }

  @Test
  void lostKeysAreRememberedNewestLastWithinTheConfiguredBound() throws Exception {
    ActorSystem<Void> app = ActorSystem.create(Behaviors.empty(), "lost-bound",
        ConfigFactory.parseString("mori4j.engine.lost-peers-remembered = 3").withFallback(ConfigFactory.load()));
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
      IoEngine e = IoEngine.create(app, "lost-bound-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
      try {
        e.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
        MemoryDesc local = e.registerMemory(arena.allocate(4096, 8));
        // a key that was never registered can be declared lost: a loss may be noticed before a registration finished
        for (String k : List.of("ghost-1", "ghost-2", "ghost-3")) e.markPeerLost(k, "reason of " + k);
        e.markPeerLost("ghost-1", "reason of ghost-1, again"); // marked again: now the newest
        e.markPeerLost("ghost-4", "reason of ghost-4");        // pushes out the oldest, ghost-2
        assertRefused(write(e, local, "ghost-1"), StatusCode.ERR_PEER_LOST, "ghost-1", "reason of ghost-1, again");
        assertRefused(write(e, local, "ghost-2"), StatusCode.ERR_NOT_FOUND, "ghost-2");
        assertRefused(write(e, local, "ghost-3"), StatusCode.ERR_PEER_LOST, "ghost-3", "reason of ghost-3");
        assertRefused(write(e, local, "ghost-4"), StatusCode.ERR_PEER_LOST, "ghost-4", "reason of ghost-4");
        assertRefused(write(e, local, "never-seen"), StatusCode.ERR_NOT_FOUND, "never-seen");
      } finally {
        e.close();
      }
    } finally {
      app.terminate();
      app.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static TransferStatus write(IoEngine e, MemoryDesc local, String remoteKey) {
    MemoryDesc remote = new MemoryDesc(remoteKey, 1, -1, 4096, 4096, MemoryLocationType.CPU, 1, null);
    return e.write(local, 0, remote, 0, 64, e.allocateTransferUid());
  }
}
