package org.mori4j.transport.rdma.soft;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.natives.verbs.VerbsConstants.*;
import static org.mori4j.transport.rdma.soft.SoftFixture.*;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtsAttributes;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.ProtectionDomain;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.ReceiveRequests;
import org.mori4j.transport.rdma.verbs.SendRequests;

/**
 * Failures with the exact status a NIC gives: the responder's rkey, PD, access and bounds checks (requester
 * IBV_WC_REM_ACCESS_ERR, both QPs to ERR, the rest flushed), access the responder QP does not enable and a SEND
 * longer than its receive (IBV_WC_REM_INV_REQ_ERR, the receive IBV_WC_LOC_LEN_ERR), the requester's lkey checks
 * (IBV_WC_LOC_PROT_ERR after the earlier requests completed), deregistered regions at both ends, RNR (retried
 * forever with rnr_retry 7, IBV_WC_RNR_RETRY_EXC_ERR otherwise), a responder QP not yet in RTR (retransmitted
 * until it is, IBV_WC_RETRY_EXC_ERR when it never is), mismatched PSNs and a silent peer (retry budget), and a
 * peer device closed with requests outstanding or before the first one.
 */
class SoftVerbsErrorTest {
  /** One write per case toward {@code rkey} at {@code address}; returns the requester's status after also checking both QPs. */
  private static int writeStatus(SoftFixture f, long address, int length, int rkey) {
    QueuePair[] qp = f.connected(8, 8, NORMAL);
    MemorySegment src = f.memory(Math.max(length, 1));
    MemoryRegion ms = f.register(f.pdA, src, IBV_ACCESS_LOCAL_WRITE);
    qp[0].postSend(new SendRequests(1).write(0, 1, ms.address(), length, ms.lkey(), address, rkey, IBV_SEND_SIGNALED), 0, 1);
    return poll(f.cqA, 1).get(0).status();
  }

  @Test
  void memoryFreedByItsOwnerWhileRegisteredIsTreatedAsDeregisteredNotTouched() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemorySegment src = f.memory(1 << 20);
      fill(src, 3);
      MemoryRegion ms = f.register(f.pdA, src, IBV_ACCESS_LOCAL_WRITE);
      // the responder's memory comes from an arena its owner closes while the region is still registered: this
      // device's I/O thread writes through the process's own mappings, so touching it would crash the JVM
      java.lang.foreign.Arena owner = java.lang.foreign.Arena.ofShared();
      MemorySegment dst = owner.allocate(1 << 20, 64);
      MemoryRegion md = f.register(f.pdB, dst, ALL);
      owner.close();
      qp[0].postSend(new SendRequests(1).write(0, 1, ms.address(), 1 << 20, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_REM_ACCESS_ERR, poll(f.cqA, 1).get(0).status(), "a write into freed memory is refused as into a deregistered region");
    }
  }

  @Test
  void badRkeyFailsThatRequestFlushesTheRestAndMovesBothQueuePairsToError() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemorySegment src = f.memory(300), dst = f.memory(300);
      fill(src, 1);
      MemoryRegion ms = f.register(f.pdA, src, IBV_ACCESS_LOCAL_WRITE);
      MemoryRegion md = f.register(f.pdB, dst, ALL);
      MemorySegment rbuf = f.memory(64);
      MemoryRegion mrb = f.register(f.pdB, rbuf, IBV_ACCESS_LOCAL_WRITE);
      qp[1].postReceive(new ReceiveRequests(1).receive(0, 77, mrb.address(), 64, mrb.lkey()), 0, 1);
      qp[0].postSend(new SendRequests(3)
          .write(0, 1, ms.address(), 100, ms.lkey(), md.address(), md.rkey(), 0)
          .write(1, 2, ms.address() + 100, 100, ms.lkey(), md.address() + 100, md.rkey() ^ 0x5a5a5a5a, 0)
          .write(2, 3, ms.address() + 200, 100, ms.lkey(), md.address() + 200, md.rkey(), IBV_SEND_SIGNALED), 0, 3);
      List<Wc> wc = poll(f.cqA, 2);
      // the unsignaled failure still completes; the signaled request behind it is flushed
      assertEquals(new Wc(2, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, 0, 0, qp[0].qpNumber(), 0), wc.get(0));
      assertEquals(new Wc(3, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE, 0, 0, qp[0].qpNumber(), 0), wc.get(1));
      assertSameBytes(src.asSlice(0, 100), dst.asSlice(0, 100));
      assertEquals(-1, dst.asSlice(100, 200).mismatch(f.memory(200)), "nothing of the refused write or after it landed");
      assertEquals(IBV_QPS_ERR, qp[0].state());
      // IB class C error: the responder QP goes to ERR as well, flushing its posted receive
      assertEquals(new Wc(77, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 0, qp[1].qpNumber(), 0), poll(f.cqB, 1).get(0));
      assertEquals(IBV_QPS_ERR, qp[1].state());
    }
  }

  @Test
  void remoteRangeMustLieInsideTheRegionAtBothEnds() {
    try (SoftFixture f = new SoftFixture()) {
      MemorySegment dst = f.memory(1000);
      MemoryRegion md = f.register(f.pdB, dst, ALL);
      assertEquals(IBV_WC_REM_ACCESS_ERR, writeStatus(f, md.address() - 1, 10, md.rkey()), "one byte before the start");
      assertEquals(IBV_WC_REM_ACCESS_ERR, writeStatus(f, md.address() + 991, 10, md.rkey()), "one byte past the end");
      assertEquals(IBV_WC_REM_ACCESS_ERR, writeStatus(f, md.address() + 1000, 1, md.rkey()), "starting at the end");
      assertEquals(IBV_WC_SUCCESS, writeStatus(f, md.address(), 10, md.rkey()), "the first bytes");
      assertEquals(IBV_WC_SUCCESS, writeStatus(f, md.address() + 990, 10, md.rkey()), "the last bytes");
      // READ is checked the same way
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemorySegment l = f.memory(16);
      MemoryRegion ml = f.register(f.pdA, l, IBV_ACCESS_LOCAL_WRITE);
      qp[0].postSend(new SendRequests(1).read(0, 9, ml.address(), 16, ml.lkey(), md.address() + 990, md.rkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_REM_ACCESS_ERR, poll(f.cqA, 1).get(0).status());
    }
  }

  @Test
  void regionAccessFlagsAndProtectionDomainAreEnforced() {
    try (SoftFixture f = new SoftFixture()) {
      MemorySegment m = f.memory(64);
      MemoryRegion readOnly = f.register(f.pdB, m, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
      MemoryRegion writeOnly = f.register(f.pdB, m, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
      ProtectionDomain otherPd = f.own(f.b.allocateProtectionDomain());
      MemoryRegion otherDomain = f.register(otherPd, m, ALL);
      assertEquals(IBV_WC_REM_ACCESS_ERR, writeStatus(f, m.address(), 8, readOnly.rkey()), "WRITE without REMOTE_WRITE");
      assertEquals(IBV_WC_REM_ACCESS_ERR, writeStatus(f, m.address(), 8, otherDomain.rkey()), "rkey of another PD");
      assertEquals(IBV_WC_SUCCESS, writeStatus(f, m.address(), 8, writeOnly.rkey()));
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemorySegment l = f.memory(8);
      MemoryRegion ml = f.register(f.pdA, l, IBV_ACCESS_LOCAL_WRITE);
      qp[0].postSend(new SendRequests(1).read(0, 1, ml.address(), 8, ml.lkey(), m.address(), writeOnly.rkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_REM_ACCESS_ERR, poll(f.cqA, 1).get(0).status(), "READ without REMOTE_READ");
    }
  }

  @Test
  void accessTheResponderQueuePairDoesNotEnableIsAnInvalidRequest() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair x = f.queuePair(f.pdA, f.cqA, 8, 8), y = f.queuePair(f.pdB, f.cqB, 8, 8);
      f.connect(x, f.a, y, f.b, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, NORMAL);
      MemorySegment s = f.memory(8), d = f.memory(8);
      MemoryRegion ms = f.register(f.pdA, s, ALL), md = f.register(f.pdB, d, ALL);
      x.postSend(new SendRequests(1).write(0, 1, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_REM_INV_REQ_ERR, poll(f.cqA, 1).get(0).status());
      assertEquals(IBV_QPS_ERR, y.state());
    }
  }

  @Test
  void sendLongerThanTheReceiveIsALengthErrorAtTheTarget() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemorySegment s = f.memory(200), r = f.memory(200);
      MemoryRegion ms = f.register(f.pdA, s, 0), mr = f.register(f.pdB, r, IBV_ACCESS_LOCAL_WRITE);
      qp[1].postReceive(new ReceiveRequests(2).receive(0, 50, mr.address(), 100, mr.lkey()).receive(1, 51, mr.address(), 100, mr.lkey()), 0, 2);
      qp[0].postSend(new SendRequests(1).send(0, 1, ms.address(), 101, ms.lkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_REM_INV_REQ_ERR, poll(f.cqA, 1).get(0).status());
      List<Wc> rc = poll(f.cqB, 2);
      assertEquals(new Wc(50, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, qp[1].qpNumber(), 0), rc.get(0));
      assertEquals(IBV_WC_WR_FLUSH_ERR, rc.get(1).status());
    }
  }

  @Test
  void localKeyChecksFailAfterEarlierRequestsComplete() {
    try (SoftFixture f = new SoftFixture()) {
      MemorySegment src = f.memory(64), dst = f.memory(64);
      MemoryRegion ms = f.register(f.pdA, src, IBV_ACCESS_LOCAL_WRITE);
      MemoryRegion noLocalWrite = f.register(f.pdA, src, IBV_ACCESS_REMOTE_READ);
      MemoryRegion md = f.register(f.pdB, dst, ALL);
      SendRequests[] bad = {
          new SendRequests(1).write(0, 2, ms.address(), 8, ms.lkey() ^ 0x00ff00ff, md.address(), md.rkey(), 0), // unknown lkey
          new SendRequests(1).write(0, 2, ms.address() + 60, 8, ms.lkey(), md.address(), md.rkey(), 0), // past the end
          new SendRequests(1).read(0, 2, noLocalWrite.address(), 8, noLocalWrite.lkey(), md.address(), md.rkey(), 0)};
      for (SendRequests b : bad) {
        QueuePair[] qp = f.connected(8, 8, NORMAL);
        qp[0].postSend(new SendRequests(1).write(0, 1, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
        qp[0].postSend(b, 0, 1);
        qp[0].postSend(new SendRequests(1).write(0, 3, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
        List<Wc> wc = poll(f.cqA, 3);
        assertEquals(List.of(1L, 2L, 3L), wc.stream().map(Wc::wrId).toList());
        assertEquals(List.of(IBV_WC_SUCCESS, IBV_WC_LOC_PROT_ERR, IBV_WC_WR_FLUSH_ERR), wc.stream().map(Wc::status).toList());
        assertEquals(IBV_QPS_ERR, qp[0].state());
        assertEquals(IBV_QPS_RTS, qp[1].state(), "a local error leaves the responder alone");
      }
    }
  }

  @Test
  void deregisteredRegionsAreRefusedAtBothEnds() throws Exception {
    try (SoftFixture f = new SoftFixture()) {
      MemorySegment m = f.memory(64);
      MemoryRegion remote = f.register(f.pdB, m, ALL);
      f.closeNow(remote);
      assertEquals(IBV_WC_REM_ACCESS_ERR, writeStatus(f, m.address(), 8, remote.rkey()));
      MemoryRegion target = f.register(f.pdB, m, ALL);
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemoryRegion local = f.register(f.pdA, f.memory(8), ALL);
      f.closeNow(local);
      qp[0].postSend(new SendRequests(1).write(0, 1, local.address(), 8, local.lkey(), m.address(), target.rkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_LOC_PROT_ERR, poll(f.cqA, 1).get(0).status());
    }
  }

  @Test
  void receiverNotReadyIsRetriedForeverWithRnrRetrySeven() throws Exception {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemorySegment s = f.memory(64), r = f.memory(64);
      fill(s, 3);
      MemoryRegion ms = f.register(f.pdA, s, 0), mr = f.register(f.pdB, r, ALL);
      qp[0].postSend(new SendRequests(2).send(0, 1, ms.address(), 64, ms.lkey(), IBV_SEND_SIGNALED)
          .write(1, 2, ms.address(), 64, ms.lkey(), mr.address(), mr.rkey(), IBV_SEND_SIGNALED), 0, 2);
      assertQuiet(f.cqA, 150); // well past 7 RNR timer periods (0.64 ms each)
      qp[1].postReceive(new ReceiveRequests(1).receive(0, 9, mr.address(), 64, mr.lkey()), 0, 1);
      List<Wc> wc = poll(f.cqA, 2);
      assertEquals(List.of(IBV_WC_SUCCESS, IBV_WC_SUCCESS), wc.stream().map(Wc::status).toList());
      assertEquals(new Wc(9, IBV_WC_SUCCESS, IBV_WC_RECV, 64, 0, qp[1].qpNumber(), 0), poll(f.cqB, 1).get(0));
      assertSameBytes(s, r);
    }
  }

  @Test
  void receiverNotReadyExhaustsAFiniteRnrRetry() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, new RtsAttributes(0, 14, 7, 2, 16));
      MemorySegment s = f.memory(64);
      MemoryRegion ms = f.register(f.pdA, s, 0);
      qp[0].postSend(new SendRequests(2).send(0, 1, ms.address(), 64, ms.lkey(), 0)
          .send(1, 2, ms.address(), 64, ms.lkey(), IBV_SEND_SIGNALED), 0, 2);
      List<Wc> wc = poll(f.cqA, 2);
      assertEquals(List.of(IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_WR_FLUSH_ERR), wc.stream().map(Wc::status).toList());
      assertEquals(IBV_QPS_ERR, qp[0].state());
    }
  }

  @Test
  void responderQueuePairThatReachesRtrLateIsRetransmittedTo() throws Exception {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair x = f.queuePair(f.pdA, f.cqA, 8, 8), y = f.queuePair(f.pdB, f.cqB, 8, 8);
      x.toInit(new InitAttributes(1, 0, ALL));
      y.toInit(new InitAttributes(1, 0, ALL));
      x.toReadyToReceive(rtr(y.qpNumber(), f.b.queryGid(1, 0), 5));
      x.toReadyToSend(new RtsAttributes(6, 14, 7, 7, 16));
      MemorySegment s = f.memory(32), d = f.memory(32);
      fill(s, 4);
      MemoryRegion ms = f.register(f.pdA, s, 0), md = f.register(f.pdB, d, ALL);
      x.postSend(new SendRequests(1).write(0, 1, ms.address(), 32, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
      Thread.sleep(100); // y is still in INIT: the request is dropped and retransmitted after each 67 ms ACK timeout
      y.toReadyToReceive(rtr(x.qpNumber(), f.a.queryGid(1, 0), 6));
      assertEquals(IBV_WC_SUCCESS, poll(f.cqA, 1).get(0).status());
      assertSameBytes(s, d);
    }
  }

  @Test
  void responderQueuePairThatNeverReachesRtrExhaustsTheRetryCount() {
    try (SoftFixture f = SoftFixture.nicTimers(64)) {
      QueuePair x = f.queuePair(f.pdA, f.cqA, 8, 8), y = f.queuePair(f.pdB, f.cqB, 8, 8);
      x.toInit(new InitAttributes(1, 0, ALL));
      y.toInit(new InitAttributes(1, 0, ALL));
      x.toReadyToReceive(rtr(y.qpNumber(), f.b.queryGid(1, 0), 5));
      x.toReadyToSend(new RtsAttributes(6, 10, 3, 7, 16));
      MemoryRegion ms = f.register(f.pdA, f.memory(8), 0);
      long t0 = System.nanoTime();
      x.postSend(new SendRequests(2).write(0, 1, ms.address(), 8, ms.lkey(), 0, 0, 0)
          .write(1, 2, ms.address(), 8, ms.lkey(), 0, 0, 0), 0, 2);
      List<Wc> wc = poll(f.cqA, 2);
      long ms4 = (System.nanoTime() - t0) / 1_000_000;
      assertEquals(List.of(IBV_WC_RETRY_EXC_ERR, IBV_WC_WR_FLUSH_ERR), wc.stream().map(Wc::status).toList());
      assertTrue(ms4 >= 12, "3 retransmissions 4 ms apart take at least 12 ms, took " + ms4);
      assertEquals(IBV_QPS_ERR, x.state());
      assertEquals(IBV_QPS_INIT, y.state());
    }
  }

  @Test
  void mismatchedPsnsAreDroppedUntilTheRetryBudgetRunsOut() {
    try (SoftFixture f = SoftFixture.nicTimers(64)) {
      QueuePair x = f.queuePair(f.pdA, f.cqA, 8, 8), y = f.queuePair(f.pdB, f.cqB, 8, 8);
      x.toInit(new InitAttributes(1, 0, ALL));
      y.toInit(new InitAttributes(1, 0, ALL));
      x.toReadyToReceive(rtr(y.qpNumber(), f.b.queryGid(1, 0), 1));
      y.toReadyToReceive(rtr(x.qpNumber(), f.a.queryGid(1, 0), 1000)); // x will send from PSN 2
      x.toReadyToSend(new RtsAttributes(2, 10, 3, 7, 16));
      MemorySegment d = f.memory(8);
      MemoryRegion ms = f.register(f.pdA, f.memory(8), 0), md = f.register(f.pdB, d, ALL);
      x.postSend(new SendRequests(1).write(0, 1, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_RETRY_EXC_ERR, poll(f.cqA, 1).get(0).status());
      assertEquals(IBV_QPS_RTR, y.state(), "the responder drops out-of-sequence requests without a state change");
    }
  }

  @Test
  void silentPeerExhaustsTheRetryBudget() throws Exception {
    try (SoftFixture f = SoftFixture.nicTimers(64); ServerSocketChannel blackhole = ServerSocketChannel.open()) {
      blackhole.bind(new InetSocketAddress("127.0.0.1", 0));
      int port = ((InetSocketAddress) blackhole.getLocalAddress()).getPort();
      byte[] gid = SoftGid.encode((Inet4Address) InetAddress.getByName("127.0.0.1"), port);
      QueuePair x = f.queuePair(f.pdA, f.cqA, 8, 8);
      x.toInit(new InitAttributes(1, 0, ALL));
      x.toReadyToReceive(rtr(0x1234, gid, 0));
      x.toReadyToSend(new RtsAttributes(0, 10, 3, 7, 16)); // 4 ms x (3 + 1): 16 ms of silence
      MemoryRegion ms = f.register(f.pdA, f.memory(8), 0);
      x.postSend(new SendRequests(1).write(0, 1, ms.address(), 8, ms.lkey(), 0, 1, IBV_SEND_SIGNALED), 0, 1);
      try (SocketChannel accepted = blackhole.accept()) {
        assertNotNull(accepted);
        assertEquals(IBV_WC_RETRY_EXC_ERR, poll(f.cqA, 1).get(0).status());
      }
    }
  }

  @Test
  void peerDeviceClosedWithRequestsOutstanding() throws Exception {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemoryRegion ms = f.register(f.pdA, f.memory(64), 0);
      MemoryRegion md = f.register(f.pdB, f.memory(64), ALL);
      // the SEND finds no receive and is retried forever (rnr_retry 7); the writes wait behind it
      qp[0].postSend(new SendRequests(3).send(0, 1, ms.address(), 64, ms.lkey(), 0)
          .write(1, 2, ms.address(), 64, ms.lkey(), md.address(), md.rkey(), 0)
          .write(2, 3, ms.address(), 64, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 3);
      assertQuiet(f.cqA, 30);
      f.b.close();
      List<Wc> wc = poll(f.cqA, 3);
      assertEquals(List.of(1L, 2L, 3L), wc.stream().map(Wc::wrId).toList());
      assertEquals(List.of(IBV_WC_RETRY_EXC_ERR, IBV_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR), wc.stream().map(Wc::status).toList());
      assertEquals(IBV_QPS_ERR, qp[0].state());
    }
  }

  @Test
  void peerDeviceClosedBeforeTheFirstRequest() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemoryRegion ms = f.register(f.pdA, f.memory(64), 0);
      f.b.close();
      qp[0].postSend(new SendRequests(2).write(0, 1, ms.address(), 64, ms.lkey(), 0, 1, IBV_SEND_SIGNALED)
          .write(1, 2, ms.address(), 64, ms.lkey(), 0, 1, IBV_SEND_SIGNALED), 0, 2);
      List<Wc> wc = poll(f.cqA, 2);
      assertEquals(List.of(IBV_WC_RETRY_EXC_ERR, IBV_WC_WR_FLUSH_ERR), wc.stream().map(Wc::status).toList());
    }
  }
}
