package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/** IoEngine.create(system, key, config): engines inside the application's own ActorSystem. */
class EmbeddedEngineTest {
  @Test
  void twoEnginesEmbeddedInOneApplicationSystemMoveBytesAndCloseWithoutStoppingIt() throws Exception {
    ActorSystem<Void> app = ActorSystem.create(Behaviors.empty(), "embedding-app");
    try (Arena arena = Arena.ofShared()) {
      IoEngine a = IoEngine.create(app, "embedded-a", IoEngineConfig.loopback());
      IoEngine b = IoEngine.create(app, "embedded-b", IoEngineConfig.loopback());
      try {
        assertSame(app, a.actorSystem());
        a.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
        b.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
        a.registerRemoteEngine(b.engineDesc());
        MemorySegment la = arena.allocate(1 << 20, 8), lb = arena.allocate(1 << 20, 8);
        MemoryDesc da = a.registerMemory(la), db = b.registerMemory(lb);
        randomize(la, 1);
        assertSucceeds(a.write(da, 0, db, 10, 500_000, a.allocateTransferUid()), "embedded write");
        assertRangeEquals(la, 0, lb, 10, 500_000, "embedded write");
        randomize(lb, 2);
        assertSucceeds(a.read(da, 3, db, 0, 1 << 19, a.allocateTransferUid()), "embedded read");
        assertRangeEquals(la, 3, lb, 0, 1 << 19, "embedded read");
        IoEngineException dup = assertThrows(IoEngineException.class, () -> IoEngine.create(app, "embedded-a", IoEngineConfig.loopback()));
        assertEquals(StatusCode.ERR_INVALID_ARGS, dup.code());
      } finally {
        a.close();
        b.close();
      }
      assertFalse(app.getWhenTerminated().toCompletableFuture().isDone(), "closing an embedded engine stopped the application's system");
      // the keys are free again and the system can host new engines
      IoEngine again = IoEngine.create(app, "embedded-a", IoEngineConfig.loopback());
      again.close();
    } finally {
      app.terminate();
      app.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
