package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * API.md's error contract: every bad input to a transfer call returns a status that has already failed, with
 * a message naming the argument and its value, and moves no byte; every bad control call throws
 * {@link IoEngineException} with the right code.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ErrorContractTest {
  private static final long SIZE = 1 << 20;
  private EnginePair p;
  private final Arena arena = Arena.ofShared();
  private MemorySegment remoteBefore;
  private MemorySegment localBefore;

  @BeforeAll
  void start() {
    p = new EnginePair(SIZE);
    randomize(p.localBuf, 1);
    randomize(p.remoteBuf, 2);
    localBefore = arena.allocate(SIZE, 8);
    remoteBefore = arena.allocate(SIZE, 8);
    localBefore.copyFrom(p.localBuf);
    remoteBefore.copyFrom(p.remoteBuf);
  }

  @AfterAll
  void stop() {
    if (p != null) p.close();
    arena.close();
  }

  /** The refused transfers of a test must not have moved a byte. */
  private void assertNothingMoved() {
    assertSameBytes(remoteBefore, p.remoteBuf, "remote buffer after refused transfers");
    assertSameBytes(localBefore, p.localBuf, "local buffer after refused transfers");
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

  // ---- control calls ----

  private static IoEngineException assertControlFails(StatusCode code, org.junit.jupiter.api.function.Executable call, String... fragments) {
    IoEngineException e = assertThrows(IoEngineException.class, call);
    assertEquals(code, e.code(), e.toString());
    for (String f : fragments) assertTrue(e.getMessage().contains(f), "message '" + e.getMessage() + "' should name '" + f + "'");
    return e;
  }

  @Test
  void duplicateEngineKeyInOneJvmIsRefusedAndTheFirstEngineKeepsWorking() {
    String key = p.initiator.key();
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> IoEngine.create(key, IoEngineConfig.loopback()), key);
    assertSucceeds(p.initiator.write(p.local, 0, p.remote, 0, 8, 2), "first engine after the refused duplicate");
    p.localBuf.asSlice(0, 8).copyFrom(localBefore.asSlice(0, 8));
    remoteBefore.asSlice(0, 8).copyFrom(p.remoteBuf.asSlice(0, 8));
  }

  @Test
  void badEngineKeysAndConfigsAreRefused() {
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> IoEngine.create(null, IoEngineConfig.loopback()));
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> IoEngine.create("  ", IoEngineConfig.loopback()));
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> IoEngine.create("x".repeat(256), IoEngineConfig.loopback()), "256");
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> IoEngine.create("engine-with-null-config", null), "config");
  }

  @Test
  void engineOnAPortThatIsTakenFailsWithATransportErrorAndFreesItsKey() throws Exception {
    String key = "busy-port-engine-" + ProcessHandle.current().pid();
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      int port = taken.getLocalPort();
      assertControlFails(StatusCode.ERR_TRANSPORT, () -> IoEngine.create(key, new IoEngineConfig("127.0.0.1", port)), String.valueOf(port));
    }
    IoEngine e = IoEngine.create(key, IoEngineConfig.loopback());
    e.close();
  }

  @Test
  void secondBackendOfTheSameTypeIsRefused() {
    assertControlFails(StatusCode.ERR_BAD_STATE, () -> p.initiator.createBackend(BackendType.TCP, TcpBackendConfig.defaults()), "TCP");
  }

  @Test
  void theRdmaBackendIsRefusedWithoutADevice() {
    // this machine has no RDMA device: the refusal says so (RdmaBackendAbsenceTest covers the reasons)
    assertControlFails(StatusCode.ERR_RDMA_OP, () -> p.initiator.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults()), "RDMA");
  }

  @Test
  void xgmiBackendNeedsAGpuRuntime() {
    org.mori4j.natives.gpu.GpuRuntime gpu = org.mori4j.natives.gpu.GpuRuntimes.select("auto");
    if (gpu.available()) {
      // a GPU machine: the backend starts (XgmiTransferGpuTest covers what it does)
      p.initiator.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
      p.initiator.removeBackend(BackendType.XGMI);
      return;
    }
    // no GPU runtime: refused at once with the runtime's one message naming what was tried, and nothing is left behind
    IoEngineException e = assertControlFails(StatusCode.ERR_GPU_OP,
        () -> p.initiator.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults()), "XGMI", "needs a GPU runtime", "tried");
    assertFalse(e.getMessage().contains("not available in this build"), e.getMessage());
    assertFalse(p.initiator.engineDesc().backends().contains(BackendType.XGMI));
    assertControlFails(StatusCode.ERR_NOT_FOUND, () -> p.initiator.removeBackend(BackendType.XGMI), "XGMI");
  }

  @Test
  void backendTypeThatDoesNotMatchItsConfigIsRefused() {
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.createBackend(BackendType.TCP, RdmaBackendConfig.defaults()), "TCP");
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.createBackend(null, TcpBackendConfig.defaults()));
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.createBackend(BackendType.TCP, null));
  }

  @Test
  void removingAMissingBackendIsRefused() {
    assertControlFails(StatusCode.ERR_NOT_FOUND, () -> p.initiator.removeBackend(BackendType.RDMA), "RDMA");
    assertControlFails(StatusCode.ERR_NOT_FOUND, () -> p.initiator.removeBackend(BackendType.XGMI), "XGMI");
  }

  @Test
  void deregisteringMemoryTwiceIsRefused() {
    MemorySegment s = arena.allocate(4096);
    MemoryDesc d = p.initiator.registerMemory(s);
    p.initiator.deregisterMemory(d);
    assertControlFails(StatusCode.ERR_NOT_FOUND, () -> p.initiator.deregisterMemory(d), String.valueOf(d.id()));
  }

  @Test
  void deregisteringNullOrForeignMemoryIsRefused() {
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.deregisterMemory((MemoryDesc) null));
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.deregisterMemory(p.remote), p.target.key());
    MemoryDesc ghost = new MemoryDesc(p.local.engineKey(), 55555, -1, 4096, 4096, MemoryLocationType.CPU, 1, null);
    assertControlFails(StatusCode.ERR_NOT_FOUND, () -> p.initiator.deregisterMemory(ghost), "55555");
    MemoryDesc wrongKey = new MemoryDesc(p.local.engineKey(), p.local.id(), -1, p.local.address(), p.local.size(),
        MemoryLocationType.CPU, p.local.accessKey() ^ 0x10, null);
    assertControlFails(StatusCode.ERR_NOT_FOUND, () -> p.initiator.deregisterMemory(wrongKey));
    assertSucceeds(p.initiator.write(p.local, 0, p.remote, 0, 8, 3), "the real registration survives a forged deregistration");
    p.localBuf.asSlice(0, 8).copyFrom(localBefore.asSlice(0, 8));
    remoteBefore.asSlice(0, 8).copyFrom(p.remoteBuf.asSlice(0, 8));
  }

  @Test
  void heapSegmentIsRefused() {
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerMemory(MemorySegment.ofArray(new byte[4096])), "heap");
  }

  @Test
  void nullClosedOrThreadConfinedSegmentsAreRefused() {
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerMemory((MemorySegment) null));
    MemorySegment closed;
    try (Arena a = Arena.ofShared()) {
      closed = a.allocate(4096);
    }
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerMemory(closed), "closed");
    try (Arena confined = Arena.ofConfined()) {
      MemorySegment c = confined.allocate(4096);
      assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerMemory(c), "confined");
    }
  }

  @Test
  void gpuRegistrationIsRefusedInThisBuild() {
    assertControlFails(StatusCode.ERR_GPU_OP, () -> p.initiator.registerMemory(0x7f00_0000_0000L, 1 << 20, 0, MemoryLocationType.GPU), "GPU");
  }

  @Test
  void badRawPointerRegistrationsAreRefused() {
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerMemory(0, 4096, -1, MemoryLocationType.CPU), "address");
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerMemory(4096, 0, -1, MemoryLocationType.CPU), "size", "0");
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerMemory(4096, -5, -1, MemoryLocationType.CPU), "-5");
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerMemory(Long.MAX_VALUE - 10, 100, -1, MemoryLocationType.CPU), "wraps");
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerMemory(4096, 4096, -1, null));
  }

  @Test
  void registeringItselfAsRemoteIsRefused() {
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerRemoteEngine(p.initiator.engineDesc()), p.initiator.key());
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerRemoteEngine(null));
  }

  @Test
  void registeringADifferentEngineUnderAKnownKeyIsRefused() {
    EngineDesc real = p.target.engineDesc();
    EngineDesc impostor = new EngineDesc(real.key(), real.nodeId(), real.host(), real.port() == 1 ? 2 : 1, real.pid() + 1,
        real.controlPath(), real.backends());
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.registerRemoteEngine(impostor), real.key());
    assertSucceeds(p.initiator.write(p.local, 0, p.remote, 0, 8, 4), "the real peer still works");
    p.localBuf.asSlice(0, 8).copyFrom(localBefore.asSlice(0, 8));
    remoteBefore.asSlice(0, 8).copyFrom(p.remoteBuf.asSlice(0, 8));
  }

  @Test
  void deregisteringAnUnknownRemoteEngineIsRefused() {
    EngineDesc real = p.target.engineDesc();
    EngineDesc unknown = new EngineDesc("engine-never-registered", real.nodeId(), real.host(), real.port(), real.pid(),
        real.controlPath(), real.backends());
    assertControlFails(StatusCode.ERR_NOT_FOUND, () -> p.initiator.deregisterRemoteEngine(unknown), "engine-never-registered");
    assertControlFails(StatusCode.ERR_NOT_FOUND, () -> p.initiator.deregisterRemoteEngine(null));
  }

  @Test
  void publishingMemoryOfAnotherEngineIsRefused() {
    assertControlFails(StatusCode.ERR_NOT_FOUND, () -> p.initiator.publishMemory("stolen", p.remote));
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.publishMemory("", p.local));
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.initiator.publishMemory("x", null));
  }

  @Test
  void anUnpublishedNameIsNoLongerFoundButItsMemoryStaysRegistered() {
    String name = "unpublish-" + System.nanoTime();
    p.target.publishMemory(name, p.remote);
    assertEquals(java.util.Optional.of(p.remote), p.initiator.lookupMemory(p.target.engineDesc(), name));
    assertTrue(p.target.unpublishMemory(name));
    assertEquals(java.util.Optional.empty(), p.initiator.lookupMemory(p.target.engineDesc(), name));
    assertFalse(p.target.unpublishMemory(name), "a second unpublish finds nothing");
    // the memory itself is still registered: a read (which leaves the remote side as it was) still works
    assertEquals(StatusCode.SUCCESS, p.initiator.read(p.local, 0, p.remote, 0, 4096, p.initiator.allocateTransferUid()).await().code());
    localBefore.asSlice(0, 4096).copyFrom(p.localBuf.asSlice(0, 4096));
    assertControlFails(StatusCode.ERR_INVALID_ARGS, () -> p.target.unpublishMemory(""));
  }

  // ---- after close ----

  @Test
  void everyCallOnAClosedEngineFailsWithBadState() {
    String key = "closed-engine-" + ProcessHandle.current().pid();
    IoEngine e = IoEngine.create(key, IoEngineConfig.loopback());
    MemorySegment seg = arena.allocate(65536, 8);
    MemoryDesc ld;
    IoEngineSession session;
    try {
      e.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      e.registerRemoteEngine(p.target.engineDesc());
      ld = e.registerMemory(seg);
      session = e.createSession(ld, p.remote).orElseThrow();
      assertSucceeds(e.write(ld, 0, p.remote, 0, 8, 1), "before close");
      p.localBuf.asSlice(0, 8).copyFrom(localBefore.asSlice(0, 8));
      remoteBefore.asSlice(0, 8).copyFrom(p.remoteBuf.asSlice(0, 8));
    } finally {
      e.close();
    }
    assertRefused(e.write(ld, 0, p.remote, 0, 8, 2), StatusCode.ERR_BAD_STATE, "closed");
    assertRefused(e.read(ld, 0, p.remote, 0, 8, 3), StatusCode.ERR_BAD_STATE, "closed");
    long[] o = {0}, s = {8};
    for (TransferStatus st : e.batchWrite(List.of(ld), List.of(o), List.of(p.remote), List.of(o), List.of(s), new long[] {4}))
      assertRefused(st, StatusCode.ERR_BAD_STATE);
    for (TransferStatus st : e.batchRead(List.of(ld), List.of(o), List.of(p.remote), List.of(o), List.of(s), new long[] {5}))
      assertRefused(st, StatusCode.ERR_BAD_STATE);
    assertFalse(session.alive(), "a session of a closed engine is dead");
    assertRefused(session.write(0, 0, 8, 6), StatusCode.ERR_BAD_STATE);
    assertRefused(session.read(0, 0, 8, 7), StatusCode.ERR_BAD_STATE);
    assertRefused(session.batchWrite(o, o, s, 8), StatusCode.ERR_BAD_STATE);
    // bad input on a closed engine still fails at once, never throws
    assertTrue(e.write(null, -1, null, -1, -1, 9).failed());
    assertControlFails(StatusCode.ERR_BAD_STATE, () -> e.registerMemory(arena.allocate(64)));
    assertControlFails(StatusCode.ERR_BAD_STATE, () -> e.createBackend(BackendType.TCP, TcpBackendConfig.defaults()));
    assertControlFails(StatusCode.ERR_BAD_STATE, () -> e.registerRemoteEngine(p.target.engineDesc()));
    assertControlFails(StatusCode.ERR_BAD_STATE, () -> e.deregisterMemory(ld));
    assertControlFails(StatusCode.ERR_BAD_STATE, () -> e.createSession(ld, p.remote));
    assertControlFails(StatusCode.ERR_BAD_STATE, () -> e.unpublishMemory("x"));
    assertTrue(e.popInboundTransferStatus(p.target.key(), 1).isEmpty());
    e.close(); // idempotent
    assertNothingMoved();

    // the key is free again once the engine is closed
    IoEngine again = IoEngine.create(key, IoEngineConfig.loopback());
    again.close();
  }
}
