package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Sessions: transfers through a pre-resolved route, its bounds checks, and its end when the route goes away. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SessionTest {
  private static final long SIZE = 4L << 20;
  private EnginePair p;
  private final Arena arena = Arena.ofShared();

  @BeforeAll
  void start() {
    p = new EnginePair(SIZE);
  }

  @AfterAll
  void stop() {
    if (p != null) p.close();
    arena.close();
  }

  private IoEngineSession session() {
    return p.initiator.createSession(p.local, p.remote).orElseThrow(() -> new AssertionError("no session for a TCP pair"));
  }

  private static MemorySegment snapshot(Arena a, MemorySegment s) {
    MemorySegment c = a.allocate(s.byteSize(), 8);
    c.copyFrom(s);
    return c;
  }

  @Test
  void sessionWriteAndReadMoveTheBytes() {
    IoEngineSession s = session();
    assertTrue(s.alive());
    assertEquals(TestBackends.type(), s.backendType());
    randomize(p.localBuf, 1);
    randomize(p.remoteBuf, 2);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment expectRemote = snapshot(a, p.remoteBuf);
      for (long size : new long[] {1, 4096, 65_537, 3L << 20}) {
        long lo = 3, ro = SIZE - size - 1;
        randomize(p.localBuf, lo, size, size);
        assertSucceeds(s.write(lo, ro, size, s.allocateTransferUid()), "session write of " + size);
        MemorySegment.copy(p.localBuf, lo, expectRemote, ro, size);
        assertSameBytes(expectRemote, p.remoteBuf, "remote after session write of " + size);
      }
      randomize(p.remoteBuf, 3);
      MemorySegment expectLocal = snapshot(a, p.localBuf);
      for (long size : new long[] {1, 4096, 65_537, 3L << 20}) {
        long lo = SIZE - size, ro = 0;
        assertSucceeds(s.read(lo, ro, size, s.allocateTransferUid()), "session read of " + size);
        MemorySegment.copy(p.remoteBuf, ro, expectLocal, lo, size);
        assertSameBytes(expectLocal, p.localBuf, "local after session read of " + size);
      }
    }
  }

  @Test
  void sessionBatchWriteAndBatchReadMoveScatteredBlocks() {
    IoEngineSession s = session();
    BatchTransferTest.Blocks b = BatchTransferTest.scattered(1024, SIZE, SIZE, 7);
    randomize(p.localBuf, 4);
    randomize(p.remoteBuf, 5);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment expect = snapshot(a, p.remoteBuf);
      assertSucceeds(s.batchWrite(b.lo(), b.ro(), b.sizes(), s.allocateTransferUid()), "session batch write");
      for (int i = 0; i < b.sizes().length; i++) MemorySegment.copy(p.localBuf, b.lo()[i], expect, b.ro()[i], b.sizes()[i]);
      assertSameBytes(expect, p.remoteBuf, "remote after session batch write");

      randomize(p.localBuf, 6);
      MemorySegment expectLocal = snapshot(a, p.localBuf);
      assertSucceeds(s.batchRead(b.lo(), b.ro(), b.sizes(), s.allocateTransferUid()), "session batch read");
      for (int i = 0; i < b.sizes().length; i++) MemorySegment.copy(p.remoteBuf, b.ro()[i], expectLocal, b.lo()[i], b.sizes()[i]);
      assertSameBytes(expectLocal, p.localBuf, "local after session batch read");
    }
  }

  @Test
  void manySessionWritesInFlightAllLand() {
    IoEngineSession s = session();
    randomize(p.localBuf, 8);
    List<TransferStatus> all = new ArrayList<>();
    int n = 1000;
    long block = 4096;
    for (int i = 0; i < n; i++) all.add(s.write(i * block, (n - 1 - i) * block, block, s.allocateTransferUid()));
    assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(all, Duration.ofSeconds(60)));
    for (int i = 0; i < n; i++) assertRangeEquals(p.localBuf, i * block, p.remoteBuf, (n - 1 - i) * block, block, "block " + i);
  }

  @Test
  void sessionUidsAreUnique() {
    IoEngineSession s = session();
    Set<Long> seen = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      assertTrue(seen.add(s.allocateTransferUid()));
      assertTrue(seen.add(p.initiator.allocateTransferUid()), "session and engine share one uid space");
    }
  }

  @Test
  void sessionRefusesOutOfBoundsTransfersAtOnce() {
    IoEngineSession s = session();
    randomize(p.remoteBuf, 9);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment before = snapshot(a, p.remoteBuf);
      assertRefused(s.write(0, 0, 0, 1), StatusCode.ERR_INVALID_ARGS, "size", "0");
      assertRefused(s.write(0, 0, -8, 1), StatusCode.ERR_INVALID_ARGS, "size", "-8");
      assertRefused(s.read(-1, 0, 8, 1), StatusCode.ERR_INVALID_ARGS, "localOffset", "-1");
      assertRefused(s.write(0, -3, 8, 1), StatusCode.ERR_INVALID_ARGS, "remoteOffset", "-3");
      assertRefused(s.write(SIZE - 7, 0, 8, 1), StatusCode.ERR_INVALID_ARGS, "localOffset", String.valueOf(SIZE - 7));
      assertRefused(s.write(0, SIZE - 7, 8, 1), StatusCode.ERR_INVALID_ARGS, "remoteOffset", String.valueOf(SIZE - 7));
      assertRefused(s.read(0, SIZE, 1, 1), StatusCode.ERR_INVALID_ARGS, "remoteOffset", String.valueOf(SIZE));
      assertRefused(s.write(Long.MAX_VALUE, 0, 1, 1), StatusCode.ERR_INVALID_ARGS, "localOffset");
      assertRefused(s.write(0, Long.MAX_VALUE, 1, 1), StatusCode.ERR_INVALID_ARGS, "remoteOffset");
      assertRefused(s.write(1, 1, Long.MAX_VALUE, 1), StatusCode.ERR_INVALID_ARGS);
      assertRefused(s.write(0, 0, SIZE + 1, 1), StatusCode.ERR_INVALID_ARGS);
      assertRefused(s.batchWrite(null, new long[] {0}, new long[] {1}, 1), StatusCode.ERR_INVALID_ARGS, "localOffsets");
      assertRefused(s.batchWrite(new long[] {0}, null, new long[] {1}, 1), StatusCode.ERR_INVALID_ARGS, "remoteOffsets");
      assertRefused(s.batchRead(new long[] {0}, new long[] {0}, null, 1), StatusCode.ERR_INVALID_ARGS, "sizes");
      assertRefused(s.batchWrite(new long[] {0, 8}, new long[] {0}, new long[] {1, 1}, 1), StatusCode.ERR_INVALID_ARGS, "same length");
      assertRefused(s.batchWrite(new long[0], new long[0], new long[0], 1), StatusCode.ERR_INVALID_ARGS, "at least one block");
      assertRefused(s.batchWrite(new long[] {0, 0}, new long[] {0, 8}, new long[] {8, 0}, 1), StatusCode.ERR_INVALID_ARGS, "sizes[1]");
      assertRefused(s.batchRead(new long[] {0, SIZE}, new long[] {0, 8}, new long[] {8, 1}, 1), StatusCode.ERR_INVALID_ARGS, "localOffsets[1]");
      assertRefused(s.batchWrite(new long[] {0, 0}, new long[] {0, SIZE - 1}, new long[] {8, 2}, 1), StatusCode.ERR_INVALID_ARGS, "remoteOffsets[1]");
      assertSameBytes(before, p.remoteBuf, "remote after refused session transfers");
      assertTrue(s.alive(), "refused input does not end a session");
      assertSucceeds(s.write(0, 0, 16, 2), "the session still works after refusals");
    }
  }

  @Test
  void sessionEndsWhenItsLocalMemoryIsDeregistered() {
    MemorySegment l = arena.allocate(65536, 8);
    MemoryDesc ld = p.initiator.registerMemory(l);
    IoEngineSession s = p.initiator.createSession(ld, p.remote).orElseThrow();
    randomize(l, 10);
    assertSucceeds(s.write(0, 0, 65536, 1), "before deregistration");
    assertTrue(s.alive());
    p.initiator.deregisterMemory(ld);
    assertFalse(s.alive(), "session over deregistered memory must report dead");
    randomize(p.remoteBuf, 11);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment before = snapshot(a, p.remoteBuf);
      assertRefused(s.write(0, 0, 16, 2), StatusCode.ERR_BAD_STATE);
      assertRefused(s.read(0, 0, 16, 3), StatusCode.ERR_BAD_STATE);
      assertRefused(s.batchWrite(new long[] {0}, new long[] {0}, new long[] {16}, 4), StatusCode.ERR_BAD_STATE);
      assertRefused(s.batchRead(new long[] {0}, new long[] {0}, new long[] {16}, 5), StatusCode.ERR_BAD_STATE);
      assertSameBytes(before, p.remoteBuf, "remote after transfers on a dead session");
    }
  }

  @Test
  void sessionToDeregisteredRemoteMemoryFailsAndLeavesItUntouched() {
    MemorySegment r = arena.allocate(65536, 8);
    MemoryDesc rd = p.target.registerMemory(r);
    IoEngineSession s = p.initiator.createSession(p.local, rd).orElseThrow();
    randomize(p.localBuf, 12);
    assertSucceeds(s.write(0, 0, 1000, 1), "before deregistration");
    p.target.deregisterMemory(rd);
    randomize(r, 13);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment before = snapshot(a, r);
      assertFailsWith(s.write(0, 0, 65536, 2), "write to deregistered remote", StatusCode.ERR_NOT_FOUND, StatusCode.ERR_BAD_STATE);
      assertFailsWith(s.batchWrite(new long[] {0, 100}, new long[] {0, 200}, new long[] {50, 50}, 3), "batch write to deregistered remote",
          StatusCode.ERR_NOT_FOUND, StatusCode.ERR_BAD_STATE);
      assertFailsWith(s.read(0, 0, 100, 4), "read from deregistered remote", StatusCode.ERR_NOT_FOUND, StatusCode.ERR_BAD_STATE);
      assertSameBytes(before, r, "deregistered remote memory");
    }
  }

  @Test
  void sessionEndsWhenItsRemoteEngineIsDeregistered() throws Exception {
    IoEngineSession s = session();
    assertTrue(s.alive());
    p.initiator.deregisterRemoteEngine(p.target.engineDesc());
    try {
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (s.alive() && System.nanoTime() < deadline) Thread.sleep(10);
      assertFalse(s.alive(), "session still alive 5 s after its peer was deregistered");
      assertRefused(s.write(0, 0, 16, 1), StatusCode.ERR_BAD_STATE);
    } finally {
      p.initiator.registerRemoteEngine(p.target.engineDesc());
    }
    IoEngineSession again = session();
    assertSucceeds(again.write(0, 0, 16, 2), "a new session after re-registration");
  }

  @Test
  void createSessionRefusesUnregisteredOrForeignDescriptors() {
    MemoryDesc ghostLocal = new MemoryDesc(p.local.engineKey(), p.local.id() + 1000, -1, p.local.address(), p.local.size(),
        MemoryLocationType.CPU, p.local.accessKey(), null);
    IoEngineException e = assertThrows(IoEngineException.class, () -> p.initiator.createSession(ghostLocal, p.remote));
    assertEquals(StatusCode.ERR_NOT_FOUND, e.code());
    assertTrue(e.getMessage().contains(String.valueOf(ghostLocal.id())), e.getMessage());

    IoEngineException wrongSide = assertThrows(IoEngineException.class, () -> p.initiator.createSession(p.remote, p.local));
    assertEquals(StatusCode.ERR_NOT_FOUND, wrongSide.code());

    MemoryDesc ghostEngine = new MemoryDesc("no-such-engine", 1, -1, 4096, 4096, MemoryLocationType.CPU, 1, null);
    IoEngineException g = assertThrows(IoEngineException.class, () -> p.initiator.createSession(p.local, ghostEngine));
    assertEquals(StatusCode.ERR_NOT_FOUND, g.code());
    assertTrue(g.getMessage().contains("no-such-engine"), g.getMessage());

    IoEngineException n = assertThrows(IoEngineException.class, () -> p.initiator.createSession(null, p.remote));
    assertEquals(StatusCode.ERR_INVALID_ARGS, n.code());
  }

  @Test
  void createSessionRoutesARemoteGpuEndOverTcp() {
    org.junit.jupiter.api.Assumptions.assumeFalse(TestBackends.rdma(), "TCP stages a remote GPU end; an RDMA-only pair has no route for a descriptor without RDMA keys");
    // a remote GPU end is staged by the target's TCP backend, so host memory here has a route to it
    MemoryDesc gpuRemote = new MemoryDesc(p.remote.engineKey(), p.remote.id(), 0, p.remote.address(), p.remote.size(),
        MemoryLocationType.GPU, p.remote.accessKey(), null, p.remote.ownerIncarnation());
    assertTrue(p.initiator.createSession(p.local, gpuRemote).isPresent());
  }
}
