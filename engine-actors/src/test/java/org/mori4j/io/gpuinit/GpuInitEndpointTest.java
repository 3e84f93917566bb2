package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mori4j.io.gpuinit.HostDevice.Cqe;
import org.mori4j.io.gpuinit.HostDevice.Wr;

/**
 * GPU-initiated endpoints driven by {@link HostDevice} (the device library's protocol, in Java) between two engines
 * on loopback TCP: write, read, write-with-immediate, send/receive, in-order completions, unsignaled work requests,
 * FENCE ordering, atomics under contention, queue-full with a slow proxy and CQ back-pressure.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GpuInitEndpointTest {
  private GpuInitBed bed;

  @BeforeAll
  void start() {
    bed = new GpuInitBed();
  }

  @AfterAll
  void stop() {
    bed.close();
  }

  private static void fill(MemorySegment s, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    for (long i = 0; i + 8 <= s.byteSize(); i += 8) s.set(ValueLayout.JAVA_LONG, i, r.nextLong());
  }

  private static void assertOk(Cqe c, long wrId, int wcOp) {
    assertEquals(WC_SUCCESS, c.status(), c.toString());
    assertEquals(wrId, c.wrId(), c.toString());
    assertEquals(wcOp, c.opcode(), c.toString());
  }

  @Test
  void writeReadWriteImmSendAndReceive() {
    RdmaEndpoint[] p = bed.pair(64, 128, 16);
    HostDevice da = new HostDevice(p[0]), db = new HostDevice(p[1]);
    assertEquals(RdmaEndpoint.State.RTS, p[0].state());
    int n = (1 << 20) + 3;
    MemorySegment src = bed.alloc(2 << 20), back = bed.alloc(2 << 20), dst = bed.alloc(4 << 20);
    fill(src, 7);
    RdmaMemoryRegion ms = bed.ca.registerMemoryRegion(src), mback = bed.ca.registerMemoryRegion(back), md = bed.cb.registerMemoryRegion(dst);

    da.post(Wr.write(src.address(), ms.lkey(), md.address() + 4096, md.rkey(), n, FLAG_SIGNALED, 1));
    Cqe c = da.awaitCqe();
    assertOk(c, 1, WC_OP_RDMA_WRITE);
    assertEquals(n, c.byteLen());
    assertEquals(0, c.wqeIndex());
    assertEquals(-1, MemorySegment.mismatch(src, 0, n, dst, 4096, 4096 + n), "written bytes land exactly");

    da.post(Wr.read(back.address() + 8, mback.lkey(), md.address() + 4096, md.rkey(), n, FLAG_SIGNALED, 2));
    assertOk(da.awaitCqe(), 2, WC_OP_RDMA_READ);
    assertEquals(-1, MemorySegment.mismatch(src, 0, n, back, 8, 8 + n), "read bytes come back exactly");

    // write with immediate: the target's receive is consumed and its CQ says so, after the data
    db.postRecv(0, 0, 0, 77);
    da.post(Wr.writeImm(src.address(), ms.lkey(), md.address(), md.rkey(), 4096, 0xC0FFEE, FLAG_SIGNALED, 3));
    assertOk(da.awaitCqe(), 3, WC_OP_RDMA_WRITE);
    Cqe r = db.awaitCqe();
    assertOk(r, 77, WC_OP_RECV_RDMA_WITH_IMM);
    assertEquals(0xC0FFEE, r.imm());
    assertEquals(CQE_FLAG_HAS_IMM, r.flags() & CQE_FLAG_HAS_IMM);
    assertEquals(4096, r.byteLen());
    assertEquals(0, r.wqeIndex(), "the RQ index");
    assertEquals(-1, MemorySegment.mismatch(src, 0, 4096, dst, 0, 4096));

    // send: the payload lands at the receive's address
    db.postRecv(dst.address() + (3 << 20), md.lkey(), 2000, 78);
    da.post(Wr.send(src.address() + 100, ms.lkey(), 1000, FLAG_SIGNALED, 4));
    assertOk(da.awaitCqe(), 4, WC_OP_SEND);
    Cqe s = db.awaitCqe();
    assertOk(s, 78, WC_OP_RECV);
    assertEquals(1000, s.byteLen());
    assertEquals(1, s.wqeIndex());
    assertEquals(-1, MemorySegment.mismatch(src, 100, 1100, dst, 3 << 20, (3 << 20) + 1000));
    assertEquals(2, db.get(CTRL_RQ_RETIRED));
    assertTrue(p[0].errors().isEmpty() && p[1].errors().isEmpty(), p[0].errors() + " " + p[1].errors());
  }

  @Test
  void aTargetEndpointThatIsNotConnectedStillReceives() {
    RdmaEndpointConfig cfg = new RdmaEndpointConfig(false, -1, 16, 32, 8);
    RdmaEndpoint x = bed.ca.createEndpoint(cfg), y = bed.cb.createEndpoint(cfg);
    bed.ca.connectEndpoint(x, y.handle());
    assertEquals(RdmaEndpoint.State.RESET, y.state());
    MemorySegment src = bed.alloc(4096), dst = bed.alloc(4096);
    fill(src, 9);
    RdmaMemoryRegion ms = bed.ca.registerMemoryRegion(src), md = bed.cb.registerMemoryRegion(dst);
    HostDevice dx = new HostDevice(x), dy = new HostDevice(y);
    dy.postRecv(dst.address(), md.lkey(), 4096, 31);
    dx.post(Wr.send(src.address(), ms.lkey(), 512, FLAG_SIGNALED, 30));
    assertOk(dx.awaitCqe(), 30, WC_OP_SEND);
    Cqe r = dy.awaitCqe();
    assertOk(r, 31, WC_OP_RECV);
    assertEquals(-1, MemorySegment.mismatch(src, 0, 512, dst, 0, 512));
    x.close();
    y.close();
  }

  @Test
  void completionsInOrderOnlyForSignaledWorkRequests() {
    RdmaEndpoint[] p = bed.pair(64, 64, 0);
    HostDevice d = new HostDevice(p[0]);
    MemorySegment src = bed.alloc(1 << 20), dst = bed.alloc(1 << 20);
    fill(src, 11);
    RdmaMemoryRegion ms = bed.ca.registerMemoryRegion(src), md = bed.cb.registerMemoryRegion(dst);
    SplittableRandom rnd = new SplittableRandom(3);
    int total = 300;
    List<Long> signaled = new ArrayList<>();
    List<long[]> ranges = new ArrayList<>();
    for (int i = 0; i < total; i++) {
      int len = 1 + rnd.nextInt(8192);
      long off = rnd.nextLong((1 << 20) - len);
      ranges.add(new long[] {off, len});
      boolean sig = i % 10 == 9;
      if (sig) signaled.add((long) i);
      d.post(Wr.write(src.address() + off, ms.lkey(), md.address() + off, md.rkey(), len, sig ? FLAG_SIGNALED : 0, i));
      // keep the CQ drained while posting more than it holds
      Cqe c;
      while ((c = d.pollCq()) != null) assertEquals(signaled.removeFirst(), c.wrId(), "CQEs in WQE order: " + c);
    }
    while (!signaled.isEmpty()) {
      Cqe c = d.awaitCqe();
      assertOk(c, signaled.removeFirst(), WC_OP_RDMA_WRITE);
      assertEquals(c.wrId(), c.wqeIndex());
    }
    d.waitRetired(total - 1);
    assertEquals(total, d.get(CTRL_SQ_RETIRED));
    assertNull(d.pollCq(), "no CQE for unsignaled work requests");
    for (long[] r : ranges) assertEquals(-1, MemorySegment.mismatch(src, r[0], r[0] + r[1], dst, r[0], r[0] + r[1]), "every write landed");
  }

  @Test
  void aFencedFlagIsNeverSeenBeforeTheDataBeforeIt() throws Exception {
    RdmaEndpoint[] p = bed.pair(16, 32, 0);
    HostDevice d = new HostDevice(p[0]);
    int big = 4 << 20;
    MemorySegment src = bed.alloc(big + 8), dst = bed.alloc(big + 8);
    RdmaMemoryRegion ms = bed.ca.registerMemoryRegion(src), md = bed.cb.registerMemoryRegion(dst);
    for (int round = 1; round <= 4; round++) {
      long stamp = round;
      for (long i = 0; i < big; i += 8) src.set(ValueLayout.JAVA_LONG, i, stamp * 1_000_003L + i);
      src.set(ValueLayout.JAVA_LONG, big, stamp);
      AtomicReference<String> bad = new AtomicReference<>();
      AtomicBoolean seen = new AtomicBoolean();
      Thread watcher = Thread.ofPlatform().start(() -> {
        long end = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < end) {
          if ((long) HostDevice.LONG.getAcquire(dst, (long) big) == stamp) {
            for (long i = 0; i < big; i += 4096)
              if (dst.get(ValueLayout.JAVA_LONG, i) != stamp * 1_000_003L + i) {
                bad.set("flag seen before data at offset " + i);
                break;
              }
            seen.set(true);
            return;
          }
          Thread.onSpinWait();
        }
      });
      d.post(Wr.write(src.address(), ms.lkey(), md.address(), md.rkey(), big, 0, 10 * round),
          Wr.write(src.address() + big, ms.lkey(), md.address() + big, md.rkey(), 8, FLAG_FENCE | FLAG_SIGNALED, 10 * round + 1));
      assertOk(d.awaitCqe(), 10 * round + 1, WC_OP_RDMA_WRITE);
      watcher.join(20_000);
      assertTrue(seen.get(), "the flag arrived");
      assertNull(bad.get(), bad.get());
    }
  }

  @Test
  void atomicsUnderContentionFromSeveralThreadsOnTwoEndpoints() throws Exception {
    RdmaEndpoint[] p1 = bed.pair(64, 64, 0), p2 = bed.pair(64, 64, 0);
    HostDevice[] devs = {new HostDevice(p1[0]), new HostDevice(p2[0])};
    MemorySegment counter = bed.alloc(4096), results = bed.alloc(8 * 4096);
    RdmaMemoryRegion mc = bed.cb.registerMemoryRegion(counter), mr = bed.ca.registerMemoryRegion(results);
    int threads = 4, per = 100;
    ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
    List<Thread> ts = new ArrayList<>();
    // fetch-add: every old value 0..threads*per-1 exactly once
    for (int t = 0; t < threads; t++) {
      int id = t;
      HostDevice d = devs[t % 2];
      ts.add(Thread.ofPlatform().start(() -> {
        try {
          for (int k = 0; k < per; k++) {
            long wr = (long) id * per + k;
            d.post(Wr.fetchAdd(results.address() + wr * 8, mr.lkey(), mc.address(), mc.rkey(), 1, 0, wr));
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      }));
    }
    for (Thread t : ts) t.join(30_000);
    assertTrue(failures.isEmpty(), failures.toString());
    for (HostDevice d : devs) d.waitRetired(d.get(CTRL_SQ_POST_IDX) - 1);
    int n = threads * per;
    boolean[] got = new boolean[n];
    for (int i = 0; i < n; i++) {
      long old = results.get(ValueLayout.JAVA_LONG, (long) i * 8);
      assertTrue(old >= 0 && old < n && !got[(int) old], "old value " + old + " of wr " + i + " repeated or out of range");
      got[(int) old] = true;
    }
    assertEquals(n, counter.get(ValueLayout.JAVA_LONG, 0));

    // compare-and-swap increments from both endpoints: each success saw the value it replaced
    ts.clear();
    int casPer = 40;
    for (int t = 0; t < threads; t++) {
      HostDevice d = devs[t % 2];
      int id = t;
      ts.add(Thread.ofPlatform().start(() -> {
        try {
          long cell = results.address() + (long) (n + id) * 8;
          long expect = 0;
          for (int done = 0, tries = 0; done < casPer && tries < 100_000; tries++) {
            long idx = d.post(Wr.cas(cell, mr.lkey(), mc.address() + 8, mc.rkey(), expect, expect + 1, 0, id));
            d.waitRetired(idx);
            long old = results.get(ValueLayout.JAVA_LONG, (long) (n + id) * 8);
            if (old == expect) done++;
            expect = old == expect ? expect + 1 : old;
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      }));
    }
    for (Thread t : ts) t.join(60_000);
    assertTrue(failures.isEmpty(), failures.toString());
    assertEquals((long) threads * casPer, counter.get(ValueLayout.JAVA_LONG, 8), "every successful CAS counted once");
    assertTrue(p1[0].errors().isEmpty() && p2[0].errors().isEmpty());
  }

  @Test
  void aFullSendQueueMakesTheDeviceWaitNeverOverwrite() throws Exception {
    RdmaEndpoint[] p = bed.pair(8, 16, 0);
    HostDevice d = new HostDevice(p[0]);
    MemorySegment src = bed.alloc(64 * 1024), dst = bed.alloc(64 * 1024);
    fill(src, 5);
    RdmaMemoryRegion ms = bed.ca.registerMemoryRegion(src), md = bed.cb.registerMemoryRegion(dst);
    bed.ca.testIssueDelayNanos = 2_000_000;
    try {
      int total = 64;
      List<Long> got = new ArrayList<>();
      Thread poller = Thread.ofPlatform().start(() -> {
        for (int i = 0; i < total; i++) got.add(d.awaitCqe().wrId());
      });
      long maxOutstanding = 0;
      for (int i = 0; i < total; i++) {
        d.post(Wr.write(src.address() + i * 1024L, ms.lkey(), md.address() + i * 1024L, md.rkey(), 1024, FLAG_SIGNALED, i));
        maxOutstanding = Math.max(maxOutstanding, d.get(CTRL_SQ_DBR_RECORD) - d.get(CTRL_SQ_RETIRED));
      }
      poller.join(30_000);
      assertEquals(total, got.size());
      for (int i = 0; i < total; i++) assertEquals(i, got.get(i));
      assertTrue(maxOutstanding <= 8, "never more than the queue's depth outstanding: " + maxOutstanding);
      assertEquals(-1, src.mismatch(dst), "no WQE was overwritten before it ran");
    } finally {
      bed.ca.testIssueDelayNanos = 0;
    }
  }

  @Test
  void aFullCompletionQueueHoldsTheProxyBack() throws Exception {
    RdmaEndpoint[] p = bed.pair(16, 16, 0);
    HostDevice d = new HostDevice(p[0]);
    MemorySegment src = bed.alloc(4096), dst = bed.alloc(4096);
    RdmaMemoryRegion ms = bed.ca.registerMemoryRegion(src), md = bed.cb.registerMemoryRegion(dst);
    for (int i = 0; i < 16; i++) d.post(Wr.write(src.address(), ms.lkey(), md.address(), md.rkey(), 64, FLAG_SIGNALED, i));
    d.waitRetired(15);
    // the CQ is full and nobody polls: more work runs only as far as it needs no CQE slot
    for (int i = 16; i < 24; i++) d.post(Wr.write(src.address(), ms.lkey(), md.address(), md.rkey(), 64, FLAG_SIGNALED, i));
    Thread.sleep(300);
    assertEquals(16, d.get(CTRL_CQ_PRODUCER_IDX), "no CQE written into a full CQ");
    assertEquals(16, d.get(CTRL_SQ_RETIRED), "and nothing retired past it");
    List<Cqe> all = d.awaitCqes(24);
    for (int i = 0; i < 24; i++) assertOk(all.get(i), i, WC_OP_RDMA_WRITE);
    // the proxy publishes sqRetired once per pass, after that pass's CQEs: the last CQE can be seen first
    d.waitRetired(23);
    assertEquals(24, d.get(CTRL_SQ_RETIRED));
  }
}
