package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A remote descriptor that was tampered with (bigger size, other id, shifted address, other access key) or
 * that names deregistered memory gets an error from the target and no byte moves: the target region and
 * the guard zones around it stay byte-for-byte the same after writes, the local buffer after reads.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ForgedDescriptorTest {
  private static final long S = 256 * 1024;
  private EnginePair p;
  private final Arena arena = Arena.ofShared();
  /** Three S-sized zones on the target: guard, victim (registered), guard. */
  private MemorySegment guarded;
  private MemorySegment victim;
  private MemoryDesc victimDesc;
  private MemoryDesc otherDesc;
  private MemorySegment guardedBefore;
  private MemorySegment localBefore;

  @BeforeAll
  void start() {
    p = new EnginePair(2 * S);
    guarded = arena.allocate(3 * S, 4096);
    victim = guarded.asSlice(S, S);
    victimDesc = p.target.registerMemory(victim);
    otherDesc = p.target.registerMemory(arena.allocate(S, 4096));
    guardedBefore = arena.allocate(3 * S);
    localBefore = arena.allocate(p.localBuf.byteSize());
  }

  private long seed = 1;

  /** Fresh bytes and snapshots before each test, so one failure cannot spill into the next test. */
  @org.junit.jupiter.api.BeforeEach
  void freshBytes() {
    randomize(guarded, seed++);
    randomize(p.localBuf, seed++);
    guardedBefore.copyFrom(guarded);
    localBefore.copyFrom(p.localBuf);
  }

  @AfterAll
  void stop() {
    if (p != null) p.close();
    arena.close();
  }

  private static MemoryDesc with(MemoryDesc d, long id, long address, long size, long accessKey) {
    return new MemoryDesc(d.engineKey(), id, d.deviceId(), address, size, d.location(), accessKey, d.backendData(), d.ownerIncarnation());
  }

  /**
   * Each forgery comes with a range that the forged descriptor makes look legal but that the real
   * registration does not allow (or, for a forged identity, any range): a transfer there must be refused.
   */
  Stream<Arguments> forgeries() {
    MemoryDesc v = victimDesc;
    // no live registration under that id and key: ERR_NOT_FOUND; the owner's id and key with another address or a
    // size it does not have: ERR_INVALID_ARGS (engine-actors/docs/errors.md, "Error contract"), the same on TCP, RDMA and XGMI
    StatusCode gone = StatusCode.ERR_NOT_FOUND, wrong = StatusCode.ERR_INVALID_ARGS;
    return Stream.of(
        Arguments.of("bigger size", with(v, v.id(), v.address(), 2 * S, v.accessKey()), S - 100, 200L, wrong),
        Arguments.of("bigger size, range fully past the end", with(v, v.id(), v.address(), 2 * S, v.accessKey()), S, 4096L, wrong),
        Arguments.of("bigger size, whole forged range", with(v, v.id(), v.address(), 2 * S, v.accessKey()), 0L, 2 * S, wrong),
        Arguments.of("unregistered id", with(v, v.id() + 1000, v.address(), v.size(), v.accessKey()), 0L, 4096L, gone),
        Arguments.of("id of another registration", with(v, otherDesc.id(), v.address(), v.size(), v.accessKey()), 0L, 4096L, gone),
        Arguments.of("id and key of another registration, victim's address",
            with(v, otherDesc.id(), v.address(), v.size(), otherDesc.accessKey()), 0L, 4096L, wrong),
        Arguments.of("address shifted up", with(v, v.id(), v.address() + 4096, v.size(), v.accessKey()), 0L, 4096L, wrong),
        Arguments.of("address shifted into the guard below", with(v, v.id(), v.address() - S, 2 * S, v.accessKey()), 0L, 2 * S, wrong),
        Arguments.of("other access key", with(v, v.id(), v.address(), v.size(), v.accessKey() ^ 0x4000), 0L, 4096L, gone),
        Arguments.of("access key zero", with(v, v.id(), v.address(), v.size(), 0), 0L, 4096L, gone));
  }

  private void assertUntouched(String what) {
    assertSameBytes(guardedBefore, guarded, what + ": target region or its guard zones changed");
    assertSameBytes(localBefore, p.localBuf, what + ": local buffer changed");
  }

  private static void assertRefusedByTarget(TransferStatus s, String what, StatusCode code) {
    assertFailsWith(s, what, code);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("forgeries")
  void forgedDescriptorIsRejectedForWrites(String name, MemoryDesc forged, long offset, long size, StatusCode code) {
    assertRefusedByTarget(p.initiator.write(p.local, 0, forged, offset, size, 1), "write", code);
    assertUntouched("write");
    // batches mix a block at the start of the range with one at its end: the request as a whole must be refused
    List<TransferStatus> b = p.initiator.batchWrite(List.of(p.local), List.of(new long[] {0, 1000}), List.of(forged),
        List.of(new long[] {offset, offset + size - 100}), List.of(new long[] {50, 100}), new long[] {2});
    assertRefusedByTarget(b.get(0), "batch write", code);
    assertUntouched("batch write");
    IoEngineSession s = p.initiator.createSession(p.local, forged).orElseThrow();
    assertRefusedByTarget(s.write(0, offset, size, 3), "session write", code);
    assertRefusedByTarget(s.batchWrite(new long[] {0, 200}, new long[] {offset, offset + size - 100}, new long[] {50, 100}, 4),
        "session batch write", code);
    assertUntouched("session writes");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("forgeries")
  void forgedDescriptorIsRejectedForReads(String name, MemoryDesc forged, long offset, long size, StatusCode code) {
    assertRefusedByTarget(p.initiator.read(p.local, 0, forged, offset, size, 5), "read", code);
    assertUntouched("read");
    List<TransferStatus> b = p.initiator.batchRead(List.of(p.local), List.of(new long[] {0, 1000}), List.of(forged),
        List.of(new long[] {offset, offset + size - 100}), List.of(new long[] {50, 100}), new long[] {6});
    assertRefusedByTarget(b.get(0), "batch read", code);
    assertUntouched("batch read");
    IoEngineSession s = p.initiator.createSession(p.local, forged).orElseThrow();
    assertRefusedByTarget(s.read(0, offset, size, 7), "session read", code);
    assertRefusedByTarget(s.batchRead(new long[] {0, 200}, new long[] {offset, offset + size - 100}, new long[] {50, 100}, 8),
        "session batch read", code);
    assertUntouched("session reads");
  }

  @Test
  void realDescriptorStillWorksAfterTheForgeries() {
    // the refusals above must not have broken the connection or the registration
    assertSucceeds(p.initiator.write(p.local, 0, victimDesc, 100, 4096, 8));
    assertRangeEquals(p.localBuf, 0, victim, 100, 4096, "victim after a real write");
    assertSucceeds(p.initiator.read(p.local, 8192, victimDesc, 0, S, 9));
    assertRangeEquals(p.localBuf, 8192, victim, 0, S, "local after a real read");
  }

  @Test
  void writeToDeregisteredMemoryFailsAndLeavesItUntouched() {
    MemorySegment seg = arena.allocate(S, 4096);
    MemoryDesc d = p.target.registerMemory(seg);
    randomize(p.localBuf, 0, S, 10);
    assertSucceeds(p.initiator.write(p.local, 0, d, 0, S, 9), "write before deregistration");
    p.target.deregisterMemory(d);
    randomize(seg, 11);
    MemorySegment before = arena.allocate(S);
    before.copyFrom(seg);
    randomize(p.localBuf, 0, S, 12);
    {
      assertFailsWith(p.initiator.write(p.local, 0, d, 0, S, 10), "write to deregistered memory", StatusCode.ERR_NOT_FOUND);
      assertFailsWith(p.initiator.write(p.local, 0, d, 100, 1, 11), "1-byte write to deregistered memory", StatusCode.ERR_NOT_FOUND);
      assertFailsWith(p.initiator.batchWrite(List.of(p.local), List.of(new long[] {0, 4096}), List.of(d), List.of(new long[] {0, 8192}),
          List.of(new long[] {100, 100}), new long[] {12}).get(0), "batch write to deregistered memory", StatusCode.ERR_NOT_FOUND);
      assertSameBytes(before, seg, "deregistered memory");
      MemorySegment localSnap = arena.allocate(S);
      localSnap.copyFrom(p.localBuf.asSlice(0, S));
      assertFailsWith(p.initiator.read(p.local, 0, d, 0, S, 13), "read from deregistered memory", StatusCode.ERR_NOT_FOUND);
      assertSameBytes(localSnap, p.localBuf.asSlice(0, S), "local buffer after a refused read");
    }
  }

  @Test
  void descriptorOfAnEarlierRegistrationOfTheSameMemoryIsRefused() {
    MemorySegment seg = arena.allocate(S, 4096);
    MemoryDesc first = p.target.registerMemory(seg);
    p.target.deregisterMemory(first);
    MemoryDesc second = p.target.registerMemory(seg);
    assertNotEquals(first, second, "a new registration gets a new identity");
    randomize(seg, 13);
    MemorySegment before = arena.allocate(S);
    before.copyFrom(seg);
    try {
      randomize(p.localBuf, 0, S, 14);
      assertFailsWith(p.initiator.write(p.local, 0, first, 0, S, 14), "write with the stale descriptor", StatusCode.ERR_NOT_FOUND);
      assertSameBytes(before, seg, "memory after a write with the stale descriptor");
      assertSucceeds(p.initiator.write(p.local, 0, second, 0, S, 15), "write with the current descriptor");
      assertRangeEquals(p.localBuf, 0, seg, 0, S, "memory after a write with the current descriptor");
    } finally {
      p.target.deregisterMemory(second);
    }
  }

  @Test
  void writesAfterDeregistrationReturnsAllFailWhileEarlierOnesComplete() {
    MemorySegment seg = arena.allocate(S, 4096);
    MemoryDesc d = p.target.registerMemory(seg);
    List<TransferStatus> early = new ArrayList<>();
    for (int i = 0; i < 50; i++) early.add(p.initiator.write(p.local, 0, d, (i % 16) * 4096L, 4096, 100 + i));
    p.target.deregisterMemory(d);
    for (TransferStatus s : early) {
      assertTrue(s.await(Duration.ofSeconds(30)), "an early write never finished");
      assertTrue(s.succeeded() || s.code() == StatusCode.ERR_NOT_FOUND, s.toString());
    }
    randomize(seg, 15);
    MemorySegment before = arena.allocate(S);
    before.copyFrom(seg);
    List<TransferStatus> late = new ArrayList<>();
    for (int i = 0; i < 50; i++) late.add(p.initiator.write(p.local, 0, d, (i % 16) * 4096L, 4096, 200 + i));
    for (TransferStatus s : late) assertFailsWith(s, "write after deregistration", StatusCode.ERR_NOT_FOUND);
    assertSameBytes(before, seg, "memory after late writes");
  }

  @Test
  void forgedBiggerSizeIsRejectedWithoutBytesEvenWhenTheTransferIsStriped() {
    // a backend that stripes everything from 4 KiB over 3 connections: a forged transfer that crosses the real
    // end of the region is cut into parts, and the part inside the region must not land on its own either
    try (EnginePair q = new EnginePair(64 * 1024, TcpBackendConfig.defaults().withConnectionsPerPeer(3).withStripeThreshold(4096))) {
      long real = q.remote.size();
      MemoryDesc bigger = with(q.remote, q.remote.id(), q.remote.address(), 4 * real, q.remote.accessKey());
      randomize(q.localBuf, 21);
      randomize(q.remoteBuf, 22);
      MemorySegment remoteBefore = arena.allocate(real);
      remoteBefore.copyFrom(q.remoteBuf);
      long offset = real - 4096, size = 3 * 4096; // first stripe inside the region, the other two past its end
      assertFailsWith(q.initiator.write(q.local, 0, bigger, offset, size, 1), "striped forged write", StatusCode.ERR_INVALID_ARGS);
      assertSameBytes(remoteBefore, q.remoteBuf, "target region after a striped forged write");
      MemorySegment localBefore = arena.allocate(q.localBuf.byteSize());
      localBefore.copyFrom(q.localBuf);
      assertFailsWith(q.initiator.read(q.local, 0, bigger, offset, size, 2), "striped forged read", StatusCode.ERR_INVALID_ARGS);
      assertSameBytes(localBefore, q.localBuf, "local buffer after a striped forged read");
    }
  }
}
