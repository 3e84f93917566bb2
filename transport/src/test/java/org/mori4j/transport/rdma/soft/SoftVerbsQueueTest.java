package org.mori4j.transport.rdma.soft;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.natives.verbs.VerbsConstants.*;
import static org.mori4j.transport.rdma.soft.SoftFixture.*;

import java.lang.foreign.MemorySegment;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtsAttributes;
import org.mori4j.transport.rdma.verbs.CompletionChannel;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.Completions;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.PortInfo;
import org.mori4j.transport.rdma.verbs.PostException;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.ReceiveRequests;
import org.mori4j.transport.rdma.verbs.SendRequests;
import org.mori4j.transport.rdma.verbs.VerbsDevice;

/**
 * The verbs object model of the software provider: the device (one active Ethernet port, a GID carrying its
 * listener, ENODEV for other names, no thread or socket left after close), the QP state machine (invalid
 * transitions are EINVAL naming both states), posting rules (RTS only, ERR flushes, ENOMEM with the posted count, unsignaled
 * slots held until a signaled completion, receive-queue depth), a CQ overrun (poll throws, QPs to ERR), moving
 * to ERR flushes requests and receives, RESET drops them, the completion channel (events only when armed, one
 * per arm, solicited-only arming, wakeup), key uniqueness and the registration and close-order errors.
 */
class SoftVerbsQueueTest {
  private static void assertErrno(int errno, String function, Executable call) {
    NativeException e = assertThrows(NativeException.class, call);
    assertEquals(errno, e.code(), e.getMessage());
    assertEquals(Errno.name(errno), e.codeName());
    assertEquals(function, e.function());
    assertTrue(e.getMessage().contains("emulation"), e.getMessage());
  }

  @Test
  void deviceHasOneActiveEthernetPortAndAGidThatNamesItsListener() throws Exception {
    SoftwareVerbsProvider p = new SoftwareVerbsProvider();
    assertEquals("software", p.name());
    assertTrue(p.emulated());
    assertEquals(List.of("soft0"), p.deviceNames());
    assertEquals("", p.whyNoDevice());
    assertErrno(Errno.ENODEV, "ibv_open_device", () -> p.open("mlx5_0"));
    int port;
    try (VerbsDevice d = p.open("soft0"); VerbsDevice e = p.open("soft0")) {
      assertEquals("soft0", d.name());
      assertEquals(1, d.portCount());
      PortInfo info = d.queryPort(1);
      assertEquals(new PortInfo(1, IBV_PORT_ACTIVE, IBV_MTU_4096, 0, IBV_LINK_LAYER_ETHERNET, 1), info);
      assertTrue(info.active() && info.ethernet());
      assertErrno(Errno.EINVAL, "ibv_query_port", () -> d.queryPort(2));
      assertErrno(Errno.EINVAL, "ibv_query_gid", () -> d.queryGid(1, 1));
      byte[] gid = d.queryGid(1, 0);
      assertEquals(16, gid.length);
      assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0, 0}, java.util.Arrays.copyOf(gid, 8));
      assertEquals((byte) 0xff, gid[10]);
      assertEquals((byte) 0xff, gid[11]);
      assertArrayEquals(new byte[] {127, 0, 0, 1}, java.util.Arrays.copyOfRange(gid, 12, 16));
      port = ((gid[8] & 0xff) << 8) | (gid[9] & 0xff);
      assertEquals(new InetSocketAddress("127.0.0.1", port), SoftGid.decode(gid));
      assertFalse(java.util.Arrays.equals(gid, e.queryGid(1, 0)), "each device has its own listener");
      try (SocketChannel probe = SocketChannel.open(new InetSocketAddress("127.0.0.1", port))) {
        assertTrue(probe.isConnected(), "the GID's port is the device's listener");
      }
      assertTrue(softThreads() >= 2);
    }
    assertThrows(ConnectException.class, () -> SocketChannel.open(new InetSocketAddress("127.0.0.1", port)).close(),
        "the listener is closed with the device");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (softThreads() > 0 && System.nanoTime() < deadline) Thread.sleep(10);
    assertEquals(0, softThreads(), "no soft-rdma thread is left after close");
  }

  private static long softThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("soft-rdma-") && t.isAlive()).count();
  }

  @Test
  void everyConnectionAndThreadIsGoneAfterTrafficAndClose() throws Exception {
    int portA, portB;
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemoryRegion ms = f.register(f.pdA, f.memory(64), ALL), md = f.register(f.pdB, f.memory(64), ALL);
      qp[0].postSend(new SendRequests(1).write(0, 1, ms.address(), 64, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
      qp[1].postSend(new SendRequests(1).read(0, 2, md.address(), 64, md.lkey(), ms.address(), ms.rkey(), IBV_SEND_SIGNALED), 0, 1);
      poll(f.cqA, 1);
      poll(f.cqB, 1);
      portA = SoftGid.decode(f.a.queryGid(1, 0)).getPort();
      portB = SoftGid.decode(f.b.queryGid(1, 0)).getPort();
      assertTrue(openSockets(portA) && openSockets(portB), "the check sees the devices' open sockets");
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (softThreads() > 0 && System.nanoTime() < deadline) Thread.sleep(10);
    assertEquals(0, softThreads());
    for (int port : new int[] {portA, portB}) {
      assertFalse(openSockets(port), "a socket of port " + port + " is still open");
    }
  }

  /**
   * Whether a socket is still open on local {@code port} (listening or connected), from /proc/net/tcp and tcp6
   * (the JDK's sockets are dual-stack): a socket that a file descriptor holds has a nonzero inode; what the kernel
   * keeps after close (TIME_WAIT, FIN_WAIT2) has 0.
   */
  private static boolean openSockets(int port) throws Exception {
    String hex = String.format(":%04X", port);
    for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
      java.nio.file.Path path = java.nio.file.Path.of(table);
      if (!java.nio.file.Files.exists(path)) continue;
      for (String line : java.nio.file.Files.readAllLines(path)) {
        String[] cols = line.trim().split("\\s+");
        if (cols.length > 9 && cols[1].endsWith(hex) && !cols[9].equals("0")) return true;
      }
    }
    return false;
  }

  @Test
  void stateMachineRefusesInvalidTransitionsNamingBothStates() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair x = f.queuePair(f.pdA, f.cqA, 8, 8), y = f.queuePair(f.pdB, f.cqB, 8, 8);
      byte[] gidB = f.b.queryGid(1, 0);
      assertEquals(IBV_QPS_RESET, x.state());
      NativeException e = assertThrows(NativeException.class, () -> x.toReadyToReceive(rtr(y.qpNumber(), gidB, 0)));
      assertEquals(Errno.EINVAL, e.code());
      assertEquals("ibv_modify_qp", e.function());
      assertTrue(e.getMessage().contains("RESET") && e.getMessage().contains("RTR"), e.getMessage());
      assertErrno(Errno.EINVAL, "ibv_modify_qp", () -> x.toReadyToSend(RtsAttributes.defaults(0)));
      x.toInit(new InitAttributes(1, 0, ALL));
      x.toInit(new InitAttributes(1, 0, ALL)); // INIT -> INIT is allowed
      assertErrno(Errno.EINVAL, "ibv_modify_qp", () -> x.toReadyToSend(RtsAttributes.defaults(0)));
      assertErrno(Errno.EINVAL, "ibv_modify_qp", () -> x.toReadyToReceive(rtr(y.qpNumber(), null, 0)));
      assertErrno(Errno.EINVAL, "ibv_modify_qp", () -> x.toReadyToReceive(rtr(y.qpNumber(), new byte[16], 0)));
      x.toReadyToReceive(rtr(y.qpNumber(), gidB, 0));
      assertEquals(IBV_QPS_RTR, x.state());
      assertErrno(Errno.EINVAL, "ibv_modify_qp", () -> x.toInit(new InitAttributes(1, 0, ALL)));
      assertErrno(Errno.EINVAL, "ibv_modify_qp", () -> x.toReadyToReceive(rtr(y.qpNumber(), gidB, 0)));
      assertErrno(Errno.EINVAL, "ibv_modify_qp", () -> x.toReadyToSend(new RtsAttributes(0, 14, 8, 7, 1)));
      x.toReadyToSend(RtsAttributes.defaults(0));
      assertEquals(IBV_QPS_RTS, x.state());
      NativeException again = assertThrows(NativeException.class, () -> x.toReadyToSend(RtsAttributes.defaults(0)));
      assertTrue(again.getMessage().contains("from RTS to RTS"), again.getMessage());
      x.toError();
      assertEquals(IBV_QPS_ERR, x.state());
      NativeException fromErr = assertThrows(NativeException.class, () -> x.toInit(new InitAttributes(1, 0, ALL)));
      assertTrue(fromErr.getMessage().contains("from ERR to INIT"), fromErr.getMessage());
      ((SoftQueuePair) x).toReset(); // any -> RESET
      assertEquals(IBV_QPS_RESET, x.state());
      x.toInit(new InitAttributes(1, 0, ALL));
      y.toError(); // RESET -> ERR
      assertEquals(IBV_QPS_ERR, y.state());
      assertErrno(Errno.EINVAL, "ibv_modify_qp", () -> y.toInit(new InitAttributes(2, 0, ALL)));
    }
  }

  @Test
  void postingNeedsTheRightState() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair x = f.queuePair(f.pdA, f.cqA, 8, 8), y = f.queuePair(f.pdB, f.cqB, 8, 8);
      MemoryRegion m = f.register(f.pdA, f.memory(64), ALL);
      SendRequests w = new SendRequests(2).write(0, 1, m.address(), 8, m.lkey(), 0, 0, IBV_SEND_SIGNALED)
          .write(1, 2, m.address(), 8, m.lkey(), 0, 0, IBV_SEND_SIGNALED);
      ReceiveRequests r = new ReceiveRequests(1).receive(0, 1, m.address(), 64, m.lkey());
      PostException e = assertThrows(PostException.class, () -> x.postSend(w, 0, 2));
      assertEquals(Errno.EINVAL, e.code());
      assertEquals(0, e.posted());
      assertEquals("ibv_post_send", e.function());
      assertTrue(e.getMessage().contains("RESET"), e.getMessage());
      PostException er = assertThrows(PostException.class, () -> x.postReceive(r, 0, 1));
      assertEquals(Errno.EINVAL, er.code());
      assertEquals("ibv_post_recv", er.function());
      x.toInit(new InitAttributes(1, 0, ALL));
      x.postReceive(r, 0, 1); // receives may be posted from INIT on
      assertEquals(0, assertThrows(PostException.class, () -> x.postSend(w, 0, 2)).posted());
      x.toReadyToReceive(rtr(y.qpNumber(), f.b.queryGid(1, 0), 0));
      assertEquals(Errno.EINVAL, assertThrows(PostException.class, () -> x.postSend(w, 0, 2)).code());
      x.toError();
      assertEquals(new Wc(1, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 0, x.qpNumber(), 0), poll(f.cqA, 1).get(0));
      // in ERR, as in the IB spec's Error state, requests are taken and completed as flushed
      x.postSend(w, 0, 2);
      x.postReceive(r, 0, 1);
      List<Wc> flushed = poll(f.cqA, 3);
      assertEquals(List.of(IBV_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR, IBV_WC_WR_FLUSH_ERR), flushed.stream().map(Wc::status).toList());
      assertEquals(Errno.EINVAL, assertThrows(PostException.class,
          () -> x.postSend(new SendRequests(1).write(0, 1, 0, 0, 0, 0, 0, IBV_SEND_INLINE), 0, 1)).code());
    }
  }

  @Test
  void sendQueueOverflowPostsWhatFits() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemoryRegion ms = f.register(f.pdA, f.memory(64), ALL), md = f.register(f.pdB, f.memory(64), ALL);
      SendRequests w = new SendRequests(10);
      for (int i = 0; i < 10; i++) w.write(i, i, ms.address(), 64, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED);
      PostException e = assertThrows(PostException.class, () -> qp[0].postSend(w, 0, 10));
      assertEquals(Errno.ENOMEM, e.code());
      assertEquals(8, e.posted());
      List<Wc> wc = poll(f.cqA, 8);
      assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L), wc.stream().map(Wc::wrId).toList());
      qp[0].postSend(w, 8, 2); // the completions freed the slots
      assertEquals(2, poll(f.cqA, 2).size());
    }
  }

  @Test
  void unsignaledSlotsAreHeldUntilASignaledRequestCompletes() throws Exception {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(4, 8, NORMAL);
      MemorySegment src = f.memory(8), dst = f.memory(8);
      fill(src, 1);
      MemoryRegion ms = f.register(f.pdA, src, ALL), md = f.register(f.pdB, dst, ALL);
      SendRequests w = new SendRequests(4);
      for (int i = 0; i < 4; i++) w.write(i, i, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), 0);
      qp[0].postSend(w, 0, 3);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (dst.mismatch(src) != -1 && System.nanoTime() < deadline) Thread.sleep(1);
      Thread.sleep(20); // the three unsignaled writes have landed and been acknowledged; their slots stay taken
      SendRequests next = new SendRequests(2)
          .write(0, 10, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED)
          .write(1, 11, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED);
      PostException e = assertThrows(PostException.class, () -> qp[0].postSend(next, 0, 2));
      assertEquals(Errno.ENOMEM, e.code());
      assertEquals(1, e.posted(), "one free slot for the signaled request, none for the next");
      assertEquals(new Wc(10, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 8, 0, qp[0].qpNumber(), 0), poll(f.cqA, 1).get(0));
      w.write(3, 3, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED);
      qp[0].postSend(w, 0, 4); // its completion retired all four slots
      assertEquals(3, poll(f.cqA, 1).get(0).wrId());
      assertQuiet(f.cqA, 10);
    }
  }

  @Test
  void receiveQueueDepthIsEnforced() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair x = f.queuePair(f.pdA, f.cqA, 8, 4);
      x.toInit(new InitAttributes(1, 0, ALL));
      ReceiveRequests r = new ReceiveRequests(6);
      for (int i = 0; i < 6; i++) r.receive(i, i, 0, 0, 0);
      PostException e = assertThrows(PostException.class, () -> x.postReceive(r, 0, 6));
      assertEquals(Errno.ENOMEM, e.code());
      assertEquals(4, e.posted());
    }
  }

  @Test
  void completionQueueOverrunPutsItAndItsQueuePairsInError() {
    try (SoftFixture f = new SoftFixture()) {
      CompletionQueue small = f.own(f.a.createCompletionQueue(4, null));
      QueuePair x = f.queuePair(f.pdA, small, 16, 8), y = f.queuePair(f.pdB, f.cqB, 16, 8);
      f.connect(x, f.a, y, f.b, ALL, NORMAL);
      MemoryRegion ms = f.register(f.pdA, f.memory(8), ALL), md = f.register(f.pdB, f.memory(8), ALL);
      SendRequests w = new SendRequests(6);
      for (int i = 0; i < 6; i++) w.write(i, i, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED);
      x.postSend(w, 0, 6);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (x.state() != IBV_QPS_ERR && System.nanoTime() < deadline) Thread.onSpinWait();
      assertEquals(IBV_QPS_ERR, x.state());
      assertEquals(4, small.capacity());
      assertErrno(Errno.EIO, "ibv_poll_cq", () -> small.poll(new Completions(8)));
      assertErrno(Errno.EIO, "ibv_poll_cq", () -> small.poll(new Completions(8))); // from then on
      x.postSend(w, 0, 1); // taken and flushed as in any ERR state; the overrun queue reports nothing more
      assertErrno(Errno.EIO, "ibv_poll_cq", () -> small.poll(new Completions(8)));
    }
  }

  @Test
  void errorFlushesOutstandingRequestsAndReceivesInOrder() {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemoryRegion ms = f.register(f.pdA, f.memory(64), ALL), md = f.register(f.pdB, f.memory(64), ALL);
      qp[0].postReceive(new ReceiveRequests(2).receive(0, 100, ms.address(), 64, ms.lkey())
          .receive(1, 101, ms.address(), 64, ms.lkey()), 0, 2);
      // the SEND waits for a receive at y forever (rnr_retry 7): everything behind it stays outstanding
      qp[0].postSend(new SendRequests(3).send(0, 1, ms.address(), 8, ms.lkey(), 0)
          .write(1, 2, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), 0)
          .read(2, 3, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 3);
      qp[0].toError();
      List<Wc> wc = poll(f.cqA, 5);
      assertEquals(List.of(1L, 2L, 3L, 100L, 101L), wc.stream().map(Wc::wrId).toList());
      for (Wc w : wc) assertEquals(IBV_WC_WR_FLUSH_ERR, w.status(), w.toString());
      assertEquals(List.of(IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_RECV, IBV_WC_RECV),
          wc.stream().map(Wc::opcode).toList());
      qp[0].toError(); // ERR -> ERR flushes nothing twice
      assertDoesNotThrow(() -> assertQuiet(f.cqA, 20));
    }
  }

  @Test
  void resetDropsEverythingWithoutCompletionsAndTheQueuePairCanReconnect() throws Exception {
    try (SoftFixture f = new SoftFixture()) {
      QueuePair[] qp = f.connected(8, 8, NORMAL);
      MemorySegment s = f.memory(8), d = f.memory(8);
      fill(s, 2);
      MemoryRegion ms = f.register(f.pdA, s, ALL), md = f.register(f.pdB, d, ALL);
      qp[0].postSend(new SendRequests(1).send(0, 1, ms.address(), 8, ms.lkey(), IBV_SEND_SIGNALED), 0, 1); // RNR forever
      ((SoftQueuePair) qp[0]).toReset();
      ((SoftQueuePair) qp[1]).toReset();
      assertQuiet(f.cqA, 30);
      f.connect(qp[0], f.a, qp[1], f.b, ALL, NORMAL);
      qp[0].postSend(new SendRequests(1).write(0, 2, ms.address(), 8, ms.lkey(), md.address(), md.rkey(), IBV_SEND_SIGNALED), 0, 1);
      assertEquals(new Wc(2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 8, 0, qp[0].qpNumber(), 0), poll(f.cqA, 1).get(0));
      assertSameBytes(s, d);
    }
  }

  @Test
  void completionChannelRaisesOneEventPerArmAndWakesUp() throws Exception {
    try (SoftFixture f = new SoftFixture()) {
      CompletionChannel ch = f.own(f.b.createCompletionChannel());
      CompletionQueue cq = f.own(f.b.createCompletionQueue(64, ch));
      QueuePair x = f.queuePair(f.pdA, f.cqA, 16, 16), y = f.queuePair(f.pdB, cq, 16, 16);
      f.connect(x, f.a, y, f.b, ALL, NORMAL);
      MemoryRegion ms = f.register(f.pdA, f.memory(8), ALL);
      y.postReceive(new ReceiveRequests(8).receive(0, 1, 0, 0, 0).receive(1, 2, 0, 0, 0).receive(2, 3, 0, 0, 0)
          .receive(3, 4, 0, 0, 0).receive(4, 5, 0, 0, 0), 0, 5);
      SendRequests plain = new SendRequests(1).send(0, 1, ms.address(), 0, ms.lkey(), IBV_SEND_SIGNALED);
      SendRequests solicited = new SendRequests(1).send(0, 2, ms.address(), 0, ms.lkey(), IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);

      x.postSend(plain, 0, 1); // not armed: no event
      poll(cq, 1);
      assertEquals(0, ch.await(TimeUnit.MILLISECONDS.toNanos(30)));

      cq.requestNotify(false);
      x.postSend(plain, 0, 1);
      x.postSend(plain, 0, 1);
      poll(cq, 2);
      assertEquals(1, ch.await(TimeUnit.SECONDS.toNanos(5)), "one event for the arm, not one per completion");
      assertEquals(0, ch.await(TimeUnit.MILLISECONDS.toNanos(30)));

      cq.requestNotify(true); // solicited only: a plain SEND does not raise it, a solicited one does
      x.postSend(plain, 0, 1);
      poll(cq, 1);
      assertEquals(0, ch.await(TimeUnit.MILLISECONDS.toNanos(30)));
      x.postSend(solicited, 0, 1);
      poll(cq, 1);
      assertEquals(1, ch.await(TimeUnit.SECONDS.toNanos(5)));
      poll(f.cqA, 5);

      CompletableFuture<Long> waited = CompletableFuture.supplyAsync(() -> {
        long t0 = System.nanoTime();
        ch.await(TimeUnit.SECONDS.toNanos(10));
        return System.nanoTime() - t0;
      });
      Thread.sleep(50);
      ch.wakeup();
      assertTrue(waited.get(5, TimeUnit.SECONDS) < TimeUnit.SECONDS.toNanos(5), "wakeup ends the wait");
      ch.wakeup(); // a wakeup before the wait makes the next wait return at once
      long t0 = System.nanoTime();
      assertEquals(0, ch.await(TimeUnit.SECONDS.toNanos(10)));
      assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5));
    }
  }

  @Test
  void keysAreDistinctAndRegistrationChecksItsArguments() {
    try (SoftFixture f = new SoftFixture()) {
      MemorySegment m = f.memory(4096);
      Set<Integer> keys = new HashSet<>();
      for (int i = 0; i < 200; i++) {
        MemoryRegion r = f.register(f.pdA, m.asSlice(i, 64), ALL);
        assertNotEquals(r.lkey(), r.rkey());
        assertTrue(keys.add(r.lkey()) && keys.add(r.rkey()), "key reused");
        assertEquals(m.address() + i, r.address());
        assertEquals(64, r.length());
        assertEquals(ALL, r.access());
      }
      assertErrno(Errno.EFAULT, "ibv_reg_mr", () -> f.pdA.registerMemory(MemorySegment.ofArray(new byte[8]), ALL));
      assertErrno(Errno.EINVAL, "ibv_reg_mr", () -> f.pdA.registerMemory(m, IBV_ACCESS_REMOTE_WRITE));
      assertErrno(Errno.EOPNOTSUPP, "ibv_reg_mr", () -> f.pdA.registerGpuMemory(0x7f00_0000_0000L, 4096, 0, ALL));
    }
  }

  @Test
  void closingInTheWrongOrderIsBusy() throws Exception {
    try (SoftFixture f = new SoftFixture()) {
      MemoryRegion m = f.register(f.pdA, f.memory(64), ALL);
      assertErrno(Errno.EBUSY, "ibv_dealloc_pd", f.pdA::close);
      f.closeNow(m);
      CompletionChannel ch = f.own(f.a.createCompletionChannel());
      CompletionQueue cq = f.own(f.a.createCompletionQueue(8, ch));
      QueuePair qp = f.queuePair(f.pdA, cq, 4, 4);
      assertErrno(Errno.EBUSY, "ibv_destroy_cq", cq::close);
      assertErrno(Errno.EBUSY, "ibv_destroy_comp_channel", ch::close);
      f.closeNow(qp);
      f.closeNow(cq);
      f.closeNow(ch);
      assertDoesNotThrow(() -> f.closeNow(f.pdA));
    }
  }
}
