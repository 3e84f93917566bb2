package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.mori4j.io.Bytes.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * API.md's error contract for control calls: every bad {@code create}, backend, registration, remote-engine or
 * publish call throws {@link IoEngineException} with the right code and a message naming what was wrong, leaves
 * the engine working, and every call on a closed engine fails with {@code ERR_BAD_STATE}. Runs on the suite's data
 * backend ({@link TestBackends}); where a case names a backend, it names the one the execution runs. Transfer calls
 * are {@link ErrorContractTest}'s.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ControlErrorContractTest {
  private static final long SIZE = 64 << 10;
  private SnapshotPair snapshot;
  private EnginePair p;
  private final Arena arena = Arena.ofShared();

  @BeforeAll
  void start() {
    snapshot = new SnapshotPair(SIZE);
    p = snapshot.pair;
  }

  @AfterAll
  void stop() {
    if (snapshot != null) snapshot.close();
    arena.close();
  }

  /** The refused calls of a test must not have moved a byte. */
  private void assertNothingMoved() {
    snapshot.assertNothingMoved("refused calls");
  }

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
    snapshot.acceptWrite(8);
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
    BackendType type = TestBackends.type();
    BackendConfig config = TestBackends.rdma() ? TestBackends.rdmaConfig() : TcpBackendConfig.defaults();
    assertControlFails(StatusCode.ERR_BAD_STATE, () -> p.initiator.createBackend(type, config), type.name());
    assertSucceeds(p.initiator.write(p.local, 0, p.remote, 0, 8, 5), "the first " + type + " backend after the refused second one");
    snapshot.acceptWrite(8);
  }

  @Test
  void theRdmaBackendIsRefusedWithoutADevice() {
    assumeFalse(TestBackends.rdma(), "the RDMA executions give this JVM a device (the software provider), so nothing is "
        + "absent; a second RDMA backend is secondBackendOfTheSameTypeIsRefused, the absent device RdmaBackendAbsenceTest");
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
    // every type but the one the pair runs on (removing that one would take the pair's data path away)
    for (BackendType missing : BackendType.values()) {
      if (missing == TestBackends.type()) continue;
      assertControlFails(StatusCode.ERR_NOT_FOUND, () -> p.initiator.removeBackend(missing), missing.name());
    }
    assertTrue(p.initiator.engineDesc().backends().contains(TestBackends.type()), "the pair's own backend is still there");
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
    snapshot.acceptWrite(8);
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
    snapshot.acceptWrite(8);
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
    snapshot.acceptLocal(4096);
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
      TestBackends.create(e);
      e.registerRemoteEngine(p.target.engineDesc());
      ld = e.registerMemory(seg);
      session = e.createSession(ld, p.remote).orElseThrow();
      assertSucceeds(e.write(ld, 0, p.remote, 0, 8, 1), "before close");
      snapshot.acceptWrite(8);
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
