package org.mori4j.transport.rdma.soft;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.natives.verbs.VerbsConstants.*;
import static org.mori4j.transport.rdma.soft.SoftFixture.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.ReceiveRequests;
import org.mori4j.transport.rdma.verbs.SendRequests;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bytes and completions of every operation between two software devices over loopback: WRITE, WRITE_WITH_IMM
 * (the immediate and a RECV_RDMA_WITH_IMM completion at the target), READ, SEND/RECV, 1 byte and 64 MiB, chains
 * with only the last request signaled, strict per-QP completion order over mixed operations, 24-bit PSN wrap,
 * and a queue pair connected to another on the same device (GPU memory: {@link SoftVerbsGpuTest}).
 */
class SoftVerbsTransferTest {
  private static final Logger log = LoggerFactory.getLogger(SoftVerbsTransferTest.class);

  @Test
  void writeLandsInPlaceAndCompletesSignaledOnly() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(16, 16, NORMAL);
      MemorySegment src = f.memory(10_000), dst = f.memory(20_000);
      fill(src, 1);
      MemoryRegion ms = f.register(f.pdA, src, IBV_ACCESS_LOCAL_WRITE);
      MemoryRegion md = f.register(f.pdB, dst, ALL);
      SendRequests wr = new SendRequests(2)
          .write(0, 7, ms.address(), 10_000, ms.lkey(), md.address() + 5_000, md.rkey(), IBV_SEND_SIGNALED);
      qp[0].postSend(wr, 0, 1);
      List<Wc> wc = poll(f.cqA, 1);
      assertEquals(new Wc(7, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 10_000, 0, qp[0].qpNumber(), 0), wc.get(0));
      assertSameBytes(src, dst.asSlice(5_000, 10_000));
      assertEquals(-1, dst.asSlice(0, 5_000).mismatch(f.memory(5_000)), "bytes before the target range stay untouched");
      assertQuietTarget(f);
    }
  }

  @Test
  void writeWithImmediateConsumesAReceiveAndDeliversTheImmediate() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(16, 16, NORMAL);
      MemorySegment src = f.memory(4096), dst = f.memory(4096);
      fill(src, 2);
      MemoryRegion ms = f.register(f.pdA, src, IBV_ACCESS_LOCAL_WRITE);
      MemoryRegion md = f.register(f.pdB, dst, ALL);
      qp[1].postReceive(new ReceiveRequests(1).receive(0, 99, 0, 0, 0), 0, 1);
      qp[0].postSend(new SendRequests(1).writeWithImmediate(0, 8, ms.address(), 4096, ms.lkey(), md.address(), md.rkey(),
          0xCAFEBABE, IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_SUCCESS, poll(f.cqA, 1).get(0).status());
      Wc r = poll(f.cqB, 1).get(0);
      assertEquals(new Wc(99, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, 4096, 0xCAFEBABE, qp[1].qpNumber(), IBV_WC_WITH_IMM), r);
      assertSameBytes(src, dst);
    }
  }

  @Test
  void zeroLengthWriteWithImmediateIsANotification() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(16, 16, NORMAL);
      qp[1].postReceive(new ReceiveRequests(1).receive(0, 5, 0, 0, 0), 0, 1);
      qp[0].postSend(new SendRequests(1).writeWithImmediate(0, 1, 0, 0, 0, 0, 0, 42, IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_SUCCESS, poll(f.cqA, 1).get(0).status());
      assertEquals(new Wc(5, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, 0, 42, qp[1].qpNumber(), IBV_WC_WITH_IMM), poll(f.cqB, 1).get(0));
    }
  }

  @Test
  void readFetchesRemoteBytes() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(16, 16, NORMAL);
      MemorySegment remote = f.memory(50_000), local = f.memory(30_000);
      fill(remote, 3);
      MemoryRegion mr = f.register(f.pdB, remote, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
      MemoryRegion ml = f.register(f.pdA, local, IBV_ACCESS_LOCAL_WRITE);
      qp[0].postSend(new SendRequests(1).read(0, 11, ml.address(), 30_000, ml.lkey(), mr.address() + 20_000, mr.rkey(),
          IBV_SEND_SIGNALED), 0, 1);
      assertEquals(new Wc(11, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 30_000, 0, qp[0].qpNumber(), 0), poll(f.cqA, 1).get(0));
      assertSameBytes(remote.asSlice(20_000, 30_000), local);
    }
  }

  @Test
  void sendLandsInThePostedReceive() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(16, 16, NORMAL);
      MemorySegment src = f.memory(1000), buf = f.memory(4096);
      fill(src, 4);
      MemoryRegion ms = f.register(f.pdA, src, 0);
      MemoryRegion mb = f.register(f.pdB, buf, IBV_ACCESS_LOCAL_WRITE);
      qp[1].postReceive(new ReceiveRequests(2).receive(0, 21, mb.address(), 2048, mb.lkey())
          .receive(1, 22, mb.address() + 2048, 2048, mb.lkey()), 0, 2);
      qp[0].postSend(new SendRequests(2).send(0, 1, ms.address(), 1000, ms.lkey(), IBV_SEND_SIGNALED)
          .send(1, 2, ms.address() + 500, 500, ms.lkey(), IBV_SEND_SIGNALED), 0, 2);
      List<Wc> s = poll(f.cqA, 2);
      assertEquals(IBV_WC_SEND, s.get(0).opcode());
      assertEquals(List.of(1L, 2L), s.stream().map(Wc::wrId).toList());
      List<Wc> r = poll(f.cqB, 2);
      assertEquals(new Wc(21, IBV_WC_SUCCESS, IBV_WC_RECV, 1000, 0, qp[1].qpNumber(), 0), r.get(0));
      assertEquals(new Wc(22, IBV_WC_SUCCESS, IBV_WC_RECV, 500, 0, qp[1].qpNumber(), 0), r.get(1));
      assertSameBytes(src, buf.asSlice(0, 1000));
      assertSameBytes(src.asSlice(500, 500), buf.asSlice(2048, 500));
    }
  }

  @Test
  void oneByteWriteAndRead() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(16, 16, NORMAL);
      MemorySegment l = f.memory(2), r = f.memory(2);
      l.set(ValueLayout.JAVA_BYTE, 0, (byte) 0x5a);
      r.set(ValueLayout.JAVA_BYTE, 1, (byte) 0xa5);
      MemoryRegion ml = f.register(f.pdA, l, ALL);
      MemoryRegion mr = f.register(f.pdB, r, ALL);
      qp[0].postSend(new SendRequests(2)
          .write(0, 1, ml.address(), 1, ml.lkey(), mr.address(), mr.rkey(), IBV_SEND_SIGNALED)
          .read(1, 2, ml.address() + 1, 1, ml.lkey(), mr.address() + 1, mr.rkey(), IBV_SEND_SIGNALED), 0, 2);
      List<Wc> wc = poll(f.cqA, 2);
      assertEquals(1, wc.get(0).byteLength());
      assertEquals(1, wc.get(1).byteLength());
      assertEquals((byte) 0x5a, r.get(ValueLayout.JAVA_BYTE, 0));
      assertEquals((byte) 0xa5, l.get(ValueLayout.JAVA_BYTE, 1));
    }
  }

  @Test
  void sixtyFourMebibyteWriteAndRead() {
    int size = 64 << 20;
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(16, 16, NORMAL);
      MemorySegment src = f.memory(size), dst = f.memory(size), back = f.memory(size);
      fill(src, 5);
      MemoryRegion ms = f.register(f.pdA, src, IBV_ACCESS_LOCAL_WRITE);
      MemoryRegion mb = f.register(f.pdA, back, IBV_ACCESS_LOCAL_WRITE);
      MemoryRegion md = f.register(f.pdB, dst, ALL);
      long t0 = System.nanoTime();
      qp[0].postSend(new SendRequests(1).write(0, 1, ms.address(), size, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(IBV_WC_SUCCESS, poll(f.cqA, 1).get(0).status());
      long t1 = System.nanoTime();
      qp[0].postSend(new SendRequests(1).read(0, 2, mb.address(), size, mb.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(new Wc(2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, size, 0, qp[0].qpNumber(), 0), poll(f.cqA, 1).get(0));
      long t2 = System.nanoTime();
      assertSameBytes(src, dst);
      assertSameBytes(src, back);
      log.info("software RDMA (emulation) 64 MiB over loopback, first transfer on a fresh connection: WRITE {} GB/s, READ {} GB/s",
          String.format("%.2f", size / (double) (t1 - t0)), String.format("%.2f", size / (double) (t2 - t1)));
    }
  }

  @Test
  void chainWithOnlyTheLastSignaledCompletesOnce() {
    int n = 500, each = 3000;
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(n, 16, NORMAL);
      MemorySegment src = f.memory((long) n * each), dst = f.memory((long) n * each);
      fill(src, 6);
      MemoryRegion ms = f.register(f.pdA, src, IBV_ACCESS_LOCAL_WRITE);
      MemoryRegion md = f.register(f.pdB, dst, ALL);
      SendRequests wr = new SendRequests(n);
      for (int i = 0; i < n; i++) {
        wr.write(i, i, ms.address() + (long) i * each, each, ms.lkey(), md.address() + (long) i * each, md.rkey(),
            i == n - 1 ? IBV_SEND_SIGNALED : 0);
      }
      qp[0].postSend(wr, 0, n);
      List<Wc> wc = poll(f.cqA, 1);
      assertEquals(n - 1, wc.get(0).wrId());
      assertEquals(IBV_WC_SUCCESS, wc.get(0).status());
      assertSameBytes(src, dst);
      // the signaled completion retired every slot: the full depth can be posted again
      qp[0].postSend(wr, 0, n);
      assertEquals(n - 1, poll(f.cqA, 1).get(0).wrId());
    }
  }

  @Test
  void completionsComeInPostingOrderAcrossMixedOperations() {
    int n = 300;
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(n, n, NORMAL);
      MemorySegment l = f.memory(n * 64L), r = f.memory(n * 64L), big = f.memory(1 << 20), bigR = f.memory(1 << 20);
      fill(r, 7);
      fill(big, 8);
      MemoryRegion ml = f.register(f.pdA, l, ALL), mbig = f.register(f.pdA, big, ALL);
      MemoryRegion mr = f.register(f.pdB, r, ALL), mbigR = f.register(f.pdB, bigR, ALL);
      ReceiveRequests recv = new ReceiveRequests(n);
      for (int i = 0; i < n; i++) recv.receive(i, 10_000 + i, mr.address() + i * 64L, 64, mr.lkey());
      qp[1].postReceive(recv, 0, n / 3);
      SendRequests wr = new SendRequests(n);
      int sends = 0;
      for (int i = 0; i < n; i++) {
        switch (i % 3) {
          case 0 -> wr.read(i, i, ml.address() + i * 64L, 64, ml.lkey(), mr.address() + i * 64L, mr.rkey(), IBV_SEND_SIGNALED);
          case 1 -> wr.write(i, i, mbig.address(), 1 << 20, mbig.lkey(), mbigR.address(), mbigR.rkey(), IBV_SEND_SIGNALED);
          default -> {
            wr.send(i, i, ml.address(), 8, ml.lkey(), IBV_SEND_SIGNALED);
            sends++;
          }
        }
      }
      qp[0].postSend(wr, 0, n);
      List<Wc> wc = poll(f.cqA, n);
      for (int i = 0; i < n; i++) {
        assertEquals(i, wc.get(i).wrId(), "completion " + i + " out of order: " + wc.get(i));
        assertEquals(IBV_WC_SUCCESS, wc.get(i).status());
        assertEquals(i % 3 == 0 ? IBV_WC_RDMA_READ : i % 3 == 1 ? IBV_WC_RDMA_WRITE : IBV_WC_SEND, wc.get(i).opcode());
      }
      List<Wc> rc = poll(f.cqB, sends);
      for (int i = 0; i < sends; i++) assertEquals(10_000 + i, rc.get(i).wrId());
      assertSameBytes(big, bigR);
    }
  }

  @Test
  void packetSequenceNumbersWrapAt24Bits() {
    int n = 64;
    try (SoftFixture f = new SoftFixture()) {
      QueuePair x = f.queuePair(f.pdA, f.cqA, n, n), y = f.queuePair(f.pdB, f.cqB, n, n);
      x.toInit(new org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes(1, 0, ALL));
      y.toInit(new org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes(1, 0, ALL));
      int start = 0xffffff - 20; // the PSN passes 0xffffff -> 0 in the middle of the chain
      x.toReadyToReceive(rtr(y.qpNumber(), f.b.queryGid(1, 0), 7));
      y.toReadyToReceive(rtr(x.qpNumber(), f.a.queryGid(1, 0), start));
      x.toReadyToSend(new org.mori4j.natives.verbs.VerbsQueuePair.RtsAttributes(start, 14, 7, 7, 16));
      MemorySegment s = f.memory(n * 16L), d = f.memory(n * 16L);
      fill(s, 11);
      MemoryRegion ms = f.register(f.pdA, s, ALL), md = f.register(f.pdB, d, ALL);
      SendRequests wr = new SendRequests(n);
      for (int i = 0; i < n; i++) {
        if (i % 2 == 0) wr.write(i, i, ms.address() + i * 16L, 16, ms.lkey(), md.address() + i * 16L, md.rkey(), IBV_SEND_SIGNALED);
        else wr.read(i, i, ms.address() + i * 16L, 16, ms.lkey(), md.address() + i * 16L, md.rkey(), IBV_SEND_SIGNALED);
      }
      for (int i = 1; i < n; i += 2) MemorySegment.copy(s, i * 16L, d, i * 16L, 16); // what the READs fetch back
      x.postSend(wr, 0, n);
      List<Wc> wc = poll(f.cqA, n);
      for (int i = 0; i < n; i++) assertEquals(new Wc(i, IBV_WC_SUCCESS, i % 2 == 0 ? IBV_WC_RDMA_WRITE : IBV_WC_RDMA_READ, 16, 0,
          x.qpNumber(), 0), wc.get(i));
      assertSameBytes(s, d);
    }
  }

  @Test
  void queuePairsOnOneDeviceTalkToEachOther() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair x = f.queuePair(f.pdA, f.cqA, 8, 8);
      QueuePair y = f.queuePair(f.pdA, f.cqA, 8, 8);
      f.connect(x, f.a, y, f.a, ALL, NORMAL);
      MemorySegment s = f.memory(100_000), d = f.memory(100_000);
      fill(s, 9);
      MemoryRegion ms = f.register(f.pdA, s, ALL), md = f.register(f.pdA, d, ALL);
      x.postSend(new SendRequests(1).write(0, 1, ms.address(), 100_000, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(new Wc(1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 100_000, 0, x.qpNumber(), 0), poll(f.cqA, 1).get(0));
      assertSameBytes(s, d);
    }
  }

  private static void assertQuietTarget(SoftFixture f) {
    try {
      assertQuiet(f.cqB, 20);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }
}
