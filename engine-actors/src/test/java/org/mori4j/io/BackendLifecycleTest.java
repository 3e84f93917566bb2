package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Removing a backend and a remote engine under load, and bringing them back. The tests share one pair and
 * each leaves it as it found it (backend present, peer registered).
 */
@org.junit.jupiter.api.TestInstance(org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS)
class BackendLifecycleTest {
  private EnginePair p;

  @org.junit.jupiter.api.BeforeAll
  void start() {
    p = new EnginePair(4L << 20);
  }

  @org.junit.jupiter.api.AfterAll
  void stop() {
    if (p != null) p.close();
  }

  private static final Set<StatusCode> GONE = Set.of(StatusCode.ERR_BAD_STATE, StatusCode.ERR_PEER_LOST, StatusCode.ERR_TRANSPORT);

  @Test
  void removingTheBackendEndsItsTransfersAndSessionsAndItCanBeCreatedAgain() throws Exception {
    {
      IoEngineSession s = p.initiator.createSession(p.local, p.remote).orElseThrow();
      List<TransferStatus> inFlight = new ArrayList<>();
      for (int i = 0; i < 50; i++) inFlight.add(p.initiator.write(p.local, 0, p.remote, 0, 4L << 20, i));
      p.initiator.removeBackend(BackendType.TCP);
      for (TransferStatus st : inFlight) {
        assertTrue(st.await(Duration.ofSeconds(10)), "transfer still in progress 10 s after its backend was removed");
        if (st.failed()) assertTrue(GONE.contains(st.code()), st.toString());
      }
      assertFalse(p.initiator.engineDesc().backends().contains(BackendType.TCP));
      // no backend: a transfer has no route
      assertRefused(p.initiator.write(p.local, 0, p.remote, 0, 8, 99), StatusCode.ERR_NOT_FOUND, p.target.key());
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (s.alive() && System.nanoTime() < deadline) Thread.sleep(10);
      assertFalse(s.alive(), "session still alive after its backend was removed");
      assertTrue(s.write(0, 0, 8, 100).await(Duration.ofSeconds(10)));
      assertTrue(s.write(0, 0, 8, 101).failed());
      assertTrue(p.initiator.createSession(p.local, p.remote).isEmpty(), "no backend, no session");

      p.initiator.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      p.initiator.registerRemoteEngine(p.target.engineDesc());
      randomize(p.localBuf, 0, 100_000, 5);
      assertSucceeds(p.initiator.write(p.local, 0, p.remote, 7, 100_000, 102), "write through the new backend");
      assertRangeEquals(p.localBuf, 0, p.remoteBuf, 7, 100_000, "after re-creating the backend");
      IoEngineSession again = p.initiator.createSession(p.local, p.remote).orElseThrow();
      assertSucceeds(again.read(200_000, 7, 100_000, 103));
      assertRangeEquals(p.localBuf, 0, p.localBuf, 200_000, 100_000, "read through the new backend");
    }
  }

  @Test
  void deregisteredRemoteEngineHasNoRouteUntilRegisteredAgain() {
    {
      List<TransferStatus> inFlight = new ArrayList<>();
      for (int i = 0; i < 50; i++) inFlight.add(p.initiator.write(p.local, 0, p.remote, 0, 1L << 20, i));
      p.initiator.deregisterRemoteEngine(p.target.engineDesc());
      for (TransferStatus st : inFlight) {
        assertTrue(st.await(Duration.ofSeconds(10)), "transfer still in progress 10 s after its peer was deregistered");
        if (st.failed()) assertTrue(GONE.contains(st.code()), st.toString());
      }
      assertRefused(p.initiator.write(p.local, 0, p.remote, 0, 8, 60), StatusCode.ERR_NOT_FOUND, p.target.key());
      assertRefused(p.initiator.read(p.local, 0, p.remote, 0, 8, 61), StatusCode.ERR_NOT_FOUND, p.target.key());
      p.initiator.registerRemoteEngine(p.target.engineDesc());
      randomize(p.localBuf, 0, 4096, 6);
      assertSucceeds(p.initiator.write(p.local, 0, p.remote, 0, 4096, 62), "write after re-registration");
      assertRangeEquals(p.localBuf, 0, p.remoteBuf, 0, 4096, "after re-registration");
    }
  }

  @Test
  void registeringTheSameRemoteEngineTwiceIsHarmless() {
    {
      p.initiator.registerRemoteEngine(p.target.engineDesc());
      p.initiator.registerRemoteEngine(p.target.engineDesc());
      randomize(p.localBuf, 0, 4096, 7);
      assertSucceeds(p.initiator.write(p.local, 0, p.remote, 0, 4096, 1));
      assertRangeEquals(p.localBuf, 0, p.remoteBuf, 0, 4096, "after repeated registration");
    }
  }

  @Test
  void memoryRegisteredBeforeTheBackendExistsIsReachableThroughIt() {
    String key = "late-backend-" + ProcessHandle.current().pid();
    try (java.lang.foreign.Arena a = java.lang.foreign.Arena.ofShared()) {
      IoEngine late = IoEngine.create(key, IoEngineConfig.loopback());
      try {
        java.lang.foreign.MemorySegment seg = a.allocate(65536, 8);
        MemoryDesc d = late.registerMemory(seg); // no backend yet
        late.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
        p.initiator.registerRemoteEngine(late.engineDesc());
        randomize(p.localBuf, 0, 65536, 8);
        assertSucceeds(p.initiator.write(p.local, 0, d, 0, 65536, 1), "write to memory registered before the backend");
        assertRangeEquals(p.localBuf, 0, seg, 0, 65536, "late backend");
      } finally {
        late.close();
      }
    }
  }
}
