package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.gpuinit.HostDevice.Cqe;
import org.mori4j.io.gpuinit.HostDevice.Wr;

/**
 * Error completions as a NIC gives them: wrong lkey and rkey, out of bounds on either side, unknown opcode, missing
 * access rights, misaligned atomics, a SEND larger than the receive and one with no receive posted; every later
 * work request flushed; a peer engine closed mid-stream gives RETRY_EXC_ERR promptly; closing frees every block and
 * region.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GpuInitErrorTest {
  private GpuInitBed bed;
  private MemorySegment src, dst;
  private RdmaMemoryRegion ms, md, readOnly;

  @BeforeAll
  void start() {
    bed = new GpuInitBed();
    src = bed.alloc(1 << 16);
    dst = bed.alloc(1 << 16);
    ms = bed.ca.registerMemoryRegion(src);
    md = bed.cb.registerMemoryRegion(dst);
    readOnly = bed.cb.registerMemoryRegion(bed.alloc(4096), ACCESS_REMOTE_READ);
  }

  @AfterAll
  void stop() {
    bed.close();
  }

  /** Posts {@code bad} signaled, then a good write; expects {@code status} and then WR_FLUSH_ERR; the endpoint is in ERROR. */
  private RdmaEndpoint expectError(Wr bad, int status) {
    RdmaEndpoint[] p = bed.pair(16, 32, 4);
    HostDevice d = new HostDevice(p[0]);
    d.post(bad);
    d.post(Wr.write(src.address(), ms.lkey(), md.address(), md.rkey(), 64, FLAG_SIGNALED, 99));
    Cqe c = d.awaitCqe();
    assertEquals(status, c.status(), "expected " + statusName(status) + ", got " + c);
    assertEquals(bad.wrId(), c.wrId());
    Cqe f = d.awaitCqe();
    assertEquals(WC_WR_FLUSH_ERR, f.status(), f.toString());
    assertEquals(99, f.wrId());
    assertEquals(RdmaEndpoint.State.ERROR, p[0].state());
    assertEquals(STATE_ERROR, d.getInt(CTRL_STATE));
    assertEquals(status, d.getInt(CTRL_FIRST_ERROR_STATUS));
    assertEquals(bad.wrId(), d.get(CTRL_FIRST_ERROR_WR_ID));
    assertEquals(2, d.getInt(CTRL_ERROR_COUNT));
    assertEquals(2, p[0].errorCount());
    List<RdmaEndpoint.ErrorCompletion> errs = p[0].errors();
    assertEquals(2, errs.size(), errs.toString());
    assertEquals(status, errs.get(0).status());
    assertFalse(errs.get(0).message().isBlank());
    return p[0];
  }

  @Test
  void wrongKeysAndBoundsOnBothSides() {
    int n = 64;
    expectError(Wr.write(src.address(), 12345, md.address(), md.rkey(), n, FLAG_SIGNALED, 1), WC_LOC_PROT_ERR);
    expectError(Wr.write(src.address(), ms.lkey(), md.address(), 54321, n, FLAG_SIGNALED, 2), WC_REM_ACCESS_ERR);
    expectError(Wr.write(src.address() + (1 << 16) - 8, ms.lkey(), md.address(), md.rkey(), n, FLAG_SIGNALED, 3), WC_LOC_PROT_ERR);
    expectError(Wr.write(src.address(), ms.lkey(), md.address() + (1 << 16) - 8, md.rkey(), n, FLAG_SIGNALED, 4), WC_REM_ACCESS_ERR);
    expectError(Wr.read(src.address(), ms.lkey(), md.address() - 8, md.rkey(), n, FLAG_SIGNALED, 5), WC_REM_ACCESS_ERR);
    // an lkey used as an rkey is not the peer's rkey
    expectError(Wr.write(src.address(), ms.lkey(), md.address(), md.lkey(), n, FLAG_SIGNALED, 6), WC_REM_ACCESS_ERR);
    // access rights: a REMOTE_READ-only region refuses writes and atomics, serves reads
    expectError(Wr.write(src.address(), ms.lkey(), readOnly.address(), readOnly.rkey(), n, FLAG_SIGNALED, 7), WC_REM_ACCESS_ERR);
    expectError(Wr.fetchAdd(src.address(), ms.lkey(), readOnly.address(), readOnly.rkey(), 1, FLAG_SIGNALED, 8), WC_REM_ACCESS_ERR);
  }

  @Test
  void badOpcodesAndAtomics() {
    expectError(new Wr(3, FLAG_SIGNALED, 0, 10, src.address(), ms.lkey(), 8, md.address(), md.rkey(), 0, 0), WC_REM_INV_REQ_ERR);
    expectError(new Wr(77, FLAG_SIGNALED, 0, 11, src.address(), ms.lkey(), 8, md.address(), md.rkey(), 0, 0), WC_REM_INV_REQ_ERR);
    expectError(Wr.fetchAdd(src.address(), ms.lkey(), md.address() + 4, md.rkey(), 1, FLAG_SIGNALED, 12), WC_REM_INV_REQ_ERR);
    expectError(new Wr(OP_ATOMIC_FETCH_AND_ADD, FLAG_SIGNALED, 0, 13, src.address(), ms.lkey(), 4, md.address(), md.rkey(), 1, 0), WC_LOC_LEN_ERR);
    expectError(Wr.send(src.address(), ms.lkey(), MAX_SEND_BYTES + 1, FLAG_SIGNALED, 14), WC_LOC_LEN_ERR);
  }

  @Test
  void aSendLargerThanTheReceiveFailsOnBothSidesAndNoReceiveIsReceiverNotReady() {
    RdmaEndpoint[] p = bed.pair(16, 32, 4);
    HostDevice da = new HostDevice(p[0]), db = new HostDevice(p[1]);
    db.postRecv(dst.address(), md.lkey(), 100, 55);
    da.post(Wr.send(src.address(), ms.lkey(), 200, FLAG_SIGNALED, 1));
    assertEquals(WC_REM_OP_ERR, da.awaitCqe().status());
    Cqe r = db.awaitCqe();
    assertEquals(WC_LOC_LEN_ERR, r.status(), r.toString());
    assertEquals(55, r.wrId());
    assertEquals(RdmaEndpoint.State.ERROR, p[1].state(), "the receiver's endpoint is in error too");

    RdmaEndpoint[] q = bed.pair(16, 32, 4);
    HostDevice dq = new HostDevice(q[0]);
    long t0 = System.nanoTime();
    dq.post(Wr.send(src.address(), ms.lkey(), 16, FLAG_SIGNALED, 2));
    Cqe rnr = dq.awaitCqe();
    assertEquals(WC_RNR_RETRY_EXC_ERR, rnr.status(), rnr.toString());
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(ms >= 250, "waited for the rnr retry time (300 ms): " + ms);
  }

  @Test
  void aPeerEngineClosedMidStreamGivesRetryExceededPromptly() throws Exception {
    long pid = ProcessHandle.current().pid();
    try (IoEngine c = IoEngine.create("gpuinit-c-" + pid, IoEngineConfig.loopback())) {
      GpuInitBed.backend(c);
      bed.a.registerRemoteEngine(c.engineDesc());
      c.registerRemoteEngine(bed.a.engineDesc());
      RdmaDeviceContext cc = RdmaDeviceContext.open(c, GpuInitBed.settings(c));
      RdmaEndpointConfig cfg = new RdmaEndpointConfig(false, -1, 64, 64, 0);
      RdmaEndpoint x = bed.ca.createEndpoint(cfg), y = cc.createEndpoint(cfg);
      bed.ca.connectEndpoint(x, y.handle());
      MemorySegment far = bed.alloc(1 << 20);
      RdmaMemoryRegion mf = cc.registerMemoryRegion(far);
      HostDevice d = new HostDevice(x);
      d.post(Wr.write(src.address(), ms.lkey(), mf.address(), mf.rkey(), 4096, FLAG_SIGNALED, 0));
      assertEquals(WC_SUCCESS, d.awaitCqe().status());
      // a stream of writes, then the peer goes away while they run
      java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
      java.util.concurrent.atomic.AtomicLong posted = new java.util.concurrent.atomic.AtomicLong();
      Thread poster = Thread.ofPlatform().start(() -> {
        for (int i = 1; i <= 20_000 && !stop.get(); i++) {
          d.post(Wr.write(src.address(), ms.lkey(), mf.address(), mf.rkey(), 1 << 16, FLAG_SIGNALED, i));
          posted.set(i);
        }
      });
      Thread.sleep(50);
      long t0 = System.nanoTime();
      c.close(); // the engine and its ActorSystem: the peer context's actor terminates, its data path closes
      Cqe first = null;
      int ok = 0;
      for (int i = 1; i <= 20_000 && first == null; i++) {
        Cqe e = d.awaitCqe();
        if (e.status() == WC_SUCCESS) ok++;
        else first = e;
      }
      long took = (System.nanoTime() - t0) / 1_000_000;
      stop.set(true);
      poster.join(20_000);
      assertNotNull(first, "an error completion after the peer went away");
      assertEquals(WC_RETRY_EXC_ERR, first.status(), "the first error after " + ok + " successes: " + first);
      // over TCP the closed connection fails the writes; on either backend the closing engine's context tells this one
      // (GpuInitProtocol.Closing from its coordinated shutdown): without that the RDMA backend would notice only at its
      // 10 s handshake timeout, and Pekko's remote deathwatch is off outside Pekko Cluster
      assertTrue(took < 8_000, "within 8 s of the peer's end, not a hang: " + took + " ms");
      long remaining = posted.get() - d.get(CTRL_CQ_POLL_IDX);
      for (long k = 0; k < remaining; k++) {
        Cqe e = d.awaitCqe();
        assertEquals(WC_WR_FLUSH_ERR, e.status(), "everything after the first error is flushed: " + e);
      }
      assertEquals(RdmaEndpoint.State.ERROR, x.state());
      assertEquals(WC_RETRY_EXC_ERR, d.getInt(CTRL_FIRST_ERROR_STATUS));
      x.close();
      cc.close(); // after its engine: frees its blocks without waiting for the proxy that went with the system
    }
  }

  @Test
  void aPeerContextClosedTellsItsPeers() throws Exception {
    // the peer's engine lives on: only its context closes, so no engine transfer fails; its Closing notice tells
    RdmaDeviceContext cc = RdmaDeviceContext.open(bed.b, GpuInitBed.settings(bed.b));
    RdmaEndpoint x = bed.ca.createEndpoint(new RdmaEndpointConfig(false, -1, 16, 32, 0));
    RdmaEndpoint y = cc.createEndpoint(new RdmaEndpointConfig(false, -1, 16, 32, 0));
    bed.ca.connectEndpoint(x, y.handle());
    RdmaMemoryRegion word = cc.registerMemoryRegion(bed.alloc(4096));
    HostDevice d = new HostDevice(x);
    d.post(Wr.fetchAdd(src.address(), ms.lkey(), word.address(), word.rkey(), 1, FLAG_SIGNALED, 1));
    assertEquals(WC_SUCCESS, d.awaitCqe().status());
    long t0 = System.nanoTime();
    cc.close();
    Cqe c = null;
    for (int i = 0; i < 200 && c == null; i++) {
      d.post(Wr.fetchAdd(src.address(), ms.lkey(), word.address(), word.rkey(), 1, FLAG_SIGNALED, 10 + i));
      c = d.awaitCqe();
      if (c.status() == WC_SUCCESS) {
        c = null;
        Thread.sleep(10);
      }
    }
    long took = (System.nanoTime() - t0) / 1_000_000;
    assertNotNull(c, "an error completion once the peer context is gone");
    assertEquals(WC_RETRY_EXC_ERR, c.status(), c.toString());
    assertTrue(took < 2_500, "told by the closing context, before the 3 s peer-timeout: " + took + " ms");
    assertTrue(x.errors().getFirst().message().contains("context closed"), x.errors().toString());
    x.close();
  }

  @Test
  void aSilentPeerIsDeclaredLostByTheLivenessProbeAndASlowLiveOneIsNot() throws Exception {
    GpuInitSettings quick = GpuInitBed.settings(bed.a).withProbe(5_000_000L, 300_000_000L);
    try (RdmaDeviceContext ca = RdmaDeviceContext.open(bed.a, quick); RdmaDeviceContext cc = RdmaDeviceContext.open(bed.b, quick)) {
      RdmaEndpointConfig cfg = new RdmaEndpointConfig(false, -1, 16, 32, 0);
      // a live peer and a write that takes longer than the probe's 5 ms (256 MiB): probed, answered, completes
      RdmaEndpoint x = ca.createEndpoint(cfg), y = cc.createEndpoint(cfg);
      ca.connectEndpoint(x, y.handle());
      int big = 256 << 20;
      MemorySegment from = bed.alloc(big), to = bed.alloc(big);
      RdmaMemoryRegion mf = ca.registerMemoryRegion(from), mt = cc.registerMemoryRegion(to);
      HostDevice d = new HostDevice(x);
      long t0 = System.nanoTime();
      d.post(Wr.write(from.address(), mf.lkey(), mt.address(), mt.rkey(), big, FLAG_SIGNALED, 1));
      Cqe c = d.awaitCqe();
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertEquals(WC_SUCCESS, c.status(), "a slow transfer to a live peer is not declared lost (took " + ms + " ms): " + c);
      assertTrue(ca.proxy.pingsSent > 0, "the peer was probed while the write ran (" + ms + " ms)");
      // the peer's context vanishes silently (no Closing notice, its engine lives): the probe declares it lost
      cc.testVanish();
      Thread.sleep(100);
      long t1 = System.nanoTime();
      d.post(Wr.fetchAdd(from.address(), mf.lkey(), mt.address(), mt.rkey(), 1, FLAG_SIGNALED, 2));
      Cqe e = d.awaitCqe();
      long lost = (System.nanoTime() - t1) / 1_000_000;
      assertEquals(WC_RETRY_EXC_ERR, e.status(), e.toString());
      assertTrue(x.errors().getFirst().message().contains("liveness probe"), x.errors().toString());
      assertTrue(lost < 2_500, "declared lost by the probe, before the 3 s peer timeout: " + lost + " ms");
    }
  }

  @Test
  void closingTheContextFreesEveryEndpointBlockAndRegion() {
    int before = RdmaDeviceContext.openEndpointBlocksInProcess();
    long pid = ProcessHandle.current().pid();
    try (IoEngine e = IoEngine.create("gpuinit-leak-" + pid, IoEngineConfig.loopback())) {
      e.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      long deregisteredBefore = e.registrationStats().deregistered();
      RdmaDeviceContext ctx = RdmaDeviceContext.open(e, GpuInitBed.settings(e));
      for (int i = 0; i < 5; i++) ctx.createEndpoint(new RdmaEndpointConfig(false, -1, 32, 64, 8));
      RdmaEndpoint closedEarly = ctx.createEndpoint(new RdmaEndpointConfig(false, -1, 32, 64, 8));
      for (int i = 0; i < 3; i++) ctx.registerMemoryRegion(bed.alloc(8192));
      assertEquals(before + 6, RdmaDeviceContext.openEndpointBlocksInProcess());
      assertEquals(6 + 3, ctx.openRegions(), "each endpoint's atomic cells are a region too");
      closedEarly.close();
      assertEquals(before + 5, RdmaDeviceContext.openEndpointBlocksInProcess());
      assertEquals(RdmaEndpoint.State.CLOSED, closedEarly.state());
      assertEquals(0, closedEarly.errorCount(), "readable after close, its block freed");
      ctx.close();
      assertEquals(before, RdmaDeviceContext.openEndpointBlocksInProcess(), "every endpoint block freed");
      assertEquals(0, ctx.openRegions());
      assertEquals(deregisteredBefore + 9, e.registrationStats().deregistered(), "every engine registration dropped");
    }
  }
}
