package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * API.md's error contract for transfer calls: every bad input to a read, write or batch (facade or actor message)
 * returns a status that has already failed, with a message naming the argument and its value, and moves no byte.
 * Runs on the suite's data backend ({@link TestBackends}): the same checks and codes hold on TCP and RDMA. Control
 * calls are {@link ControlErrorContractTest}'s.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ErrorContractTest {
  private static final long SIZE = 1 << 20;
  private SnapshotPair snapshot;
  private EnginePair p;

  @BeforeAll
  void start() {
    snapshot = new SnapshotPair(SIZE);
    p = snapshot.pair;
  }

  @AfterAll
  void stop() {
    if (snapshot != null) snapshot.close();
  }

  /** The refused transfers of a test must not have moved a byte. */
  private void assertNothingMoved() {
    snapshot.assertNothingMoved("refused transfers");
  }

  private TransferStatus op(String kind, MemoryDesc l, long lo, MemoryDesc r, long ro, long size) {
    return kind.equals("read") ? p.initiator.read(l, lo, r, ro, size, 1) : p.initiator.write(l, lo, r, ro, size, 1);
  }

  private List<TransferStatus> batch(String kind, List<MemoryDesc> l, List<long[]> lo, List<MemoryDesc> r, List<long[]> ro,
                                     List<long[]> s, long[] uids) {
    return kind.equals("read") ? p.initiator.batchRead(l, lo, r, ro, s, uids) : p.initiator.batchWrite(l, lo, r, ro, s, uids);
  }

  private static String localName(String kind) {
    return kind.equals("read") ? "localDst" : "localSrc";
  }

  private static String remoteName(String kind) {
    return kind.equals("read") ? "remoteSrc" : "remoteDst";
  }

  // ---- single transfers ----

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void nullDescriptorsAreRefused(String k) {
    assertRefused(op(k, null, 0, p.remote, 0, 8), StatusCode.ERR_INVALID_ARGS, localName(k), "null");
    assertRefused(op(k, p.local, 0, null, 0, 8), StatusCode.ERR_INVALID_ARGS, remoteName(k), "null");
    assertRefused(op(k, null, 0, null, 0, 8), StatusCode.ERR_INVALID_ARGS);
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void negativeOffsetsAreRefused(String k) {
    assertRefused(op(k, p.local, -1, p.remote, 0, 8), StatusCode.ERR_INVALID_ARGS, "localOffset", "-1");
    assertRefused(op(k, p.local, 0, p.remote, -5, 8), StatusCode.ERR_INVALID_ARGS, "remoteOffset", "-5");
    assertRefused(op(k, p.local, Long.MIN_VALUE, p.remote, 0, 8), StatusCode.ERR_INVALID_ARGS, "localOffset", String.valueOf(Long.MIN_VALUE));
    assertRefused(op(k, p.local, 0, p.remote, Long.MIN_VALUE, 8), StatusCode.ERR_INVALID_ARGS, "remoteOffset", String.valueOf(Long.MIN_VALUE));
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void zeroAndNegativeSizesAreRefused(String k) {
    assertRefused(op(k, p.local, 0, p.remote, 0, 0), StatusCode.ERR_INVALID_ARGS, "size", "0");
    assertRefused(op(k, p.local, 0, p.remote, 0, -1), StatusCode.ERR_INVALID_ARGS, "size", "-1");
    assertRefused(op(k, p.local, 0, p.remote, 0, Long.MIN_VALUE), StatusCode.ERR_INVALID_ARGS, "size", String.valueOf(Long.MIN_VALUE));
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void rangesBeyondTheLocalRegionAreRefused(String k) {
    assertRefused(op(k, p.local, SIZE - 7, p.remote, 0, 8), StatusCode.ERR_INVALID_ARGS, "localOffset", String.valueOf(SIZE - 7), String.valueOf(SIZE));
    assertRefused(op(k, p.local, SIZE, p.remote, 0, 1), StatusCode.ERR_INVALID_ARGS, "localOffset", String.valueOf(SIZE));
    assertRefused(op(k, p.local, 0, p.remote, 0, SIZE + 1), StatusCode.ERR_INVALID_ARGS, String.valueOf(SIZE + 1));
    assertRefused(op(k, p.local, Long.MAX_VALUE, p.remote, 0, 1), StatusCode.ERR_INVALID_ARGS, "localOffset", String.valueOf(Long.MAX_VALUE));
    assertRefused(op(k, p.local, 1, p.remote, 0, Long.MAX_VALUE), StatusCode.ERR_INVALID_ARGS, String.valueOf(Long.MAX_VALUE));
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void rangesBeyondTheRemoteRegionAreRefused(String k) {
    assertRefused(op(k, p.local, 0, p.remote, SIZE - 7, 8), StatusCode.ERR_INVALID_ARGS, "remoteOffset", String.valueOf(SIZE - 7), String.valueOf(SIZE));
    assertRefused(op(k, p.local, 0, p.remote, SIZE, 1), StatusCode.ERR_INVALID_ARGS, "remoteOffset", String.valueOf(SIZE));
    assertRefused(op(k, p.local, 0, p.remote, Long.MAX_VALUE, 1), StatusCode.ERR_INVALID_ARGS, "remoteOffset", String.valueOf(Long.MAX_VALUE));
    assertRefused(op(k, p.local, 0, p.remote, Long.MAX_VALUE - 2, 4), StatusCode.ERR_INVALID_ARGS, "remoteOffset");
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void unregisteredLocalMemoryIsRefused(String k) {
    MemoryDesc ghost = new MemoryDesc(p.local.engineKey(), 424242, -1, p.local.address(), p.local.size(), MemoryLocationType.CPU,
        p.local.accessKey(), null);
    assertRefused(op(k, ghost, 0, p.remote, 0, 8), StatusCode.ERR_NOT_FOUND, localName(k), "424242");
    // a descriptor of this engine's memory with the wrong access key is not a registration either
    MemoryDesc wrongKey = new MemoryDesc(p.local.engineKey(), p.local.id(), -1, p.local.address(), p.local.size(),
        MemoryLocationType.CPU, p.local.accessKey() + 1, null);
    assertRefused(op(k, wrongKey, 0, p.remote, 0, 8), StatusCode.ERR_NOT_FOUND, localName(k), String.valueOf(p.local.id()));
    // the remote's descriptor used as the local one belongs to another engine
    assertRefused(op(k, p.remote, 0, p.remote, 0, 8), StatusCode.ERR_INVALID_ARGS, localName(k), p.target.key());
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void localDescriptorThatDisagreesWithItsRegistrationIsRefused(String k) {
    MemoryDesc bigger = new MemoryDesc(p.local.engineKey(), p.local.id(), -1, p.local.address(), p.local.size() * 2,
        MemoryLocationType.CPU, p.local.accessKey(), null);
    assertRefused(op(k, bigger, SIZE, p.remote, 0, 8), StatusCode.ERR_INVALID_ARGS, localName(k), String.valueOf(SIZE * 2));
    MemoryDesc shifted = new MemoryDesc(p.local.engineKey(), p.local.id(), -1, p.local.address() + 4096, p.local.size(),
        MemoryLocationType.CPU, p.local.accessKey(), null);
    assertRefused(op(k, shifted, 0, p.remote, 0, 8), StatusCode.ERR_INVALID_ARGS, localName(k));
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void remoteDescriptorOfAnUnregisteredEngineIsRefused(String k) {
    MemoryDesc ghost = new MemoryDesc("engine-nobody-registered", p.remote.id(), -1, p.remote.address(), p.remote.size(),
        MemoryLocationType.CPU, p.remote.accessKey(), null);
    assertRefused(op(k, p.local, 0, ghost, 0, 8), StatusCode.ERR_NOT_FOUND, remoteName(k), "engine-nobody-registered");
    assertNothingMoved();
  }

  /**
   * A remote region named under an access key its owner never issued is "not registered" (ERR_NOT_FOUND) on every
   * backend, as a local descriptor with a wrong key is: refused by the target over TCP, by the owner's confirmation
   * over RDMA, and, once the real key confirmed the region on the connection, by the initiator's check against that
   * confirmation (which said ERR_INVALID_ARGS before). A fresh region, so that the first forged transfer comes before
   * any confirmation whatever order the tests run in.
   */
  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void remoteRegionUnderAnAccessKeyItsOwnerNeverIssuedIsNotFound(String k) {
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
      MemoryDesc fresh = p.target.registerMemory(arena.allocate(8192, 4096));
      try {
        MemoryDesc forged = new MemoryDesc(fresh.engineKey(), fresh.id(), fresh.deviceId(), fresh.address(), fresh.size(),
            fresh.location(), fresh.accessKey() ^ 0x5a5a, fresh.backendData(), fresh.ownerIncarnation());
        String id = "memory id " + fresh.id();
        TransferStatus before = op(k, p.local, 0, forged, 0, 8);
        assertFailsWith(before, "forged key before any confirmation", StatusCode.ERR_NOT_FOUND);
        assertTrue(before.message().contains(id), before.message());
        // the real key: a write from the local buffer changes neither snapshot region
        assertSucceeds(p.initiator.write(p.local, 0, fresh, 0, 8, 2), "write with the real key");
        TransferStatus after = op(k, p.local, 0, forged, 0, 8);
        assertFailsWith(after, "forged key after the real one confirmed the region", StatusCode.ERR_NOT_FOUND);
        assertTrue(after.message().contains(id), after.message());
      } finally {
        p.target.deregisterMemory(fresh);
      }
    }
    assertNothingMoved();
  }

  /**
   * A remote descriptor whose access key its owner did issue but whose address or size is not the registration's is
   * a wrong argument, not a missing region: ERR_INVALID_ARGS on every backend, as the same fault in a local
   * descriptor is ({@link #localDescriptorThatDisagreesWithItsRegistrationIsRefused}). The TCP target said
   * ERR_NOT_FOUND for another address (RDMA and XGMI, checking against the owner's confirmation, said
   * ERR_INVALID_ARGS). The region sits between two guard pages that must not change either.
   */
  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void remoteDescriptorThatDisagreesWithItsRegistrationIsInvalid(String k) {
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
      java.lang.foreign.MemorySegment all = arena.allocate(3 * 4096, 4096);
      randomize(all, 77);
      java.lang.foreign.MemorySegment before = arena.allocate(all.byteSize());
      before.copyFrom(all);
      MemoryDesc real = p.target.registerMemory(all.asSlice(4096, 4096));
      try {
        for (long shift : new long[] {4096, -4096}) {
          long at = real.address() + shift;
          MemoryDesc moved = new MemoryDesc(real.engineKey(), real.id(), real.deviceId(), at, real.size(), real.location(),
              real.accessKey(), real.backendData(), real.ownerIncarnation());
          refusedByOwner(op(k, p.local, 0, moved, 0, 8), StatusCode.ERR_INVALID_ARGS, Long.toHexString(at),
              Long.toHexString(real.address()));
        }
        MemoryDesc bigger = new MemoryDesc(real.engineKey(), real.id(), real.deviceId(), real.address(), 2 * real.size(),
            real.location(), real.accessKey(), real.backendData(), real.ownerIncarnation());
        refusedByOwner(op(k, p.local, 0, bigger, real.size() - 8, 16), StatusCode.ERR_INVALID_ARGS, String.valueOf(real.size() - 8));
        refusedByOwner(op(k, p.local, 0, bigger, real.size(), 8), StatusCode.ERR_INVALID_ARGS, String.valueOf(real.size()));
        assertSameBytes(before, all, "remote region and its guard pages after refused " + k + "s");
      } finally {
        p.target.deregisterMemory(real);
      }
    }
    assertNothingMoved();
  }

  /** A refusal that only the owner's registration can give: it may come after the call returns. */
  private static void refusedByOwner(TransferStatus s, StatusCode code, String... fragments) {
    assertFailsWith(s, "transfer the owner must refuse", code);
    for (String f : fragments) assertTrue(s.message().contains(f), "message '" + s.message() + "' should name '" + f + "'");
  }

  // ---- batches ----

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void mismatchedBatchListLengthsFailEveryStatus(String k) {
    long[] o = {0}, s = {8};
    List<TransferStatus> st = batch(k, List.of(p.local, p.local), List.of(o, o), List.of(p.remote), List.of(o, o), List.of(s, s), new long[] {1, 2});
    assertFalse(st.isEmpty());
    for (TransferStatus x : st) assertRefused(x, StatusCode.ERR_INVALID_ARGS, "(2)", "1 remote");
    st = batch(k, List.of(p.local), List.of(o), List.of(p.remote), List.of(o), List.of(s), new long[] {1, 2, 3});
    assertFalse(st.isEmpty());
    for (TransferStatus x : st) assertRefused(x, StatusCode.ERR_INVALID_ARGS, "(3)");
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void nullBatchListsAreRefused(String k) {
    long[] o = {0}, s = {8};
    List<TransferStatus> st = batch(k, List.of(p.local), List.of(o), List.of(p.remote), List.of(o), List.of(s), null);
    assertFalse(st.isEmpty(), "a refused batch must still return a failed status");
    for (TransferStatus x : st) assertRefused(x, StatusCode.ERR_INVALID_ARGS, "uids");
    for (int which = 0; which < 5; which++) {
      st = batch(k, which == 0 ? null : List.of(p.local), which == 1 ? null : List.of(o), which == 2 ? null : List.of(p.remote),
          which == 3 ? null : List.of(o), which == 4 ? null : List.of(s), new long[] {1});
      assertEquals(1, st.size());
      assertRefused(st.get(0), StatusCode.ERR_INVALID_ARGS, "null");
    }
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void nullArraysAndDescriptorsInsideABatchEntryAreRefused(String k) {
    long[] o = {0}, s = {8};
    List<long[]> nul = Arrays.asList((long[]) null);
    assertRefused(batch(k, List.of(p.local), nul, List.of(p.remote), List.of(o), List.of(s), new long[] {1}).get(0),
        StatusCode.ERR_INVALID_ARGS, "localOffsets");
    assertRefused(batch(k, List.of(p.local), List.of(o), List.of(p.remote), nul, List.of(s), new long[] {1}).get(0),
        StatusCode.ERR_INVALID_ARGS, "remoteOffsets");
    assertRefused(batch(k, List.of(p.local), List.of(o), List.of(p.remote), List.of(o), nul, new long[] {1}).get(0),
        StatusCode.ERR_INVALID_ARGS, "sizes");
    assertRefused(batch(k, Arrays.asList((MemoryDesc) null), List.of(o), List.of(p.remote), List.of(o), List.of(s), new long[] {1}).get(0),
        StatusCode.ERR_INVALID_ARGS, localName(k));
    assertRefused(batch(k, List.of(p.local), List.of(o), Arrays.asList((MemoryDesc) null), List.of(o), List.of(s), new long[] {1}).get(0),
        StatusCode.ERR_INVALID_ARGS, remoteName(k));
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void emptyOrRaggedBatchEntryIsRefused(String k) {
    long[] e = {};
    assertRefused(batch(k, List.of(p.local), List.of(e), List.of(p.remote), List.of(e), List.of(e), new long[] {1}).get(0),
        StatusCode.ERR_INVALID_ARGS, "at least one block");
    assertRefused(batch(k, List.of(p.local), List.of(new long[] {0, 16}), List.of(p.remote), List.of(new long[] {0}),
            List.of(new long[] {8, 8}), new long[] {1}).get(0),
        StatusCode.ERR_INVALID_ARGS, "localOffsets (2)", "remoteOffsets (1)");
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void badBlockInsideABatchEntryIsNamedByIndex(String k) {
    long[] lo = {0, 100, 200, 300}, ro = {0, 100, 200, 300};
    assertRefused(batch(k, List.of(p.local), List.of(lo), List.of(p.remote), List.of(ro), List.of(new long[] {8, 8, 8, 0}),
        new long[] {1}).get(0), StatusCode.ERR_INVALID_ARGS, "sizes[3]", "0");
    assertRefused(batch(k, List.of(p.local), List.of(lo), List.of(p.remote), List.of(ro), List.of(new long[] {8, -2, 8, 8}),
        new long[] {1}).get(0), StatusCode.ERR_INVALID_ARGS, "sizes[1]", "-2");
    assertRefused(batch(k, List.of(p.local), List.of(new long[] {0, -4, 200, 300}), List.of(p.remote), List.of(ro),
        List.of(new long[] {8, 8, 8, 8}), new long[] {1}).get(0), StatusCode.ERR_INVALID_ARGS, "localOffsets[1]", "-4");
    assertRefused(batch(k, List.of(p.local), List.of(lo), List.of(p.remote), List.of(new long[] {0, 100, SIZE - 4, 300}),
        List.of(new long[] {8, 8, 8, 8}), new long[] {1}).get(0), StatusCode.ERR_INVALID_ARGS, "remoteOffsets[2]", String.valueOf(SIZE - 4));
    assertRefused(batch(k, List.of(p.local), List.of(new long[] {0, 100, 200, Long.MAX_VALUE}), List.of(p.remote), List.of(ro),
        List.of(new long[] {8, 8, 8, 8}), new long[] {1}).get(0), StatusCode.ERR_INVALID_ARGS, "localOffsets[3]");
    assertNothingMoved();
  }

  @ParameterizedTest
  @ValueSource(strings = {"read", "write"})
  void batchEntryWithUnregisteredMemoryIsRefused(String k) {
    long[] o = {0}, s = {8};
    MemoryDesc ghostLocal = new MemoryDesc(p.local.engineKey(), 31337, -1, p.local.address(), p.local.size(), MemoryLocationType.CPU,
        p.local.accessKey(), null);
    MemoryDesc ghostEngine = new MemoryDesc("engine-unknown", 1, -1, 4096, 4096, MemoryLocationType.CPU, 1, null);
    assertRefused(batch(k, List.of(ghostLocal), List.of(o), List.of(p.remote), List.of(o), List.of(s), new long[] {1}).get(0),
        StatusCode.ERR_NOT_FOUND, "31337");
    assertRefused(batch(k, List.of(p.local), List.of(o), List.of(ghostEngine), List.of(o), List.of(s), new long[] {1}).get(0),
        StatusCode.ERR_NOT_FOUND, "engine-unknown");
    assertNothingMoved();
  }

  @Test
  void actorMessageApiRefusesBadInputTheSameWay() throws Exception {
    TransferStatus s = org.apache.pekko.actor.typed.javadsl.AskPattern.<IoEngineProtocol.Command, TransferStatus>ask(
            p.initiator.actorRef(), r -> new IoEngineProtocol.Write(p.local, -9, p.remote, 0, 8, 1, r),
            java.time.Duration.ofSeconds(10), p.initiator.actorSystem().scheduler())
        .toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertRefused(s, StatusCode.ERR_INVALID_ARGS, "localOffset", "-9");
    assertNothingMoved();
  }
}
