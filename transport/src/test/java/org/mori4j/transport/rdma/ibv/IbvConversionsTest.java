package org.mori4j.transport.rdma.ibv;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.VerbsConstants.*;
import static org.mori4j.natives.verbs.WorkRequestLayouts.IBV_RECV_WR;
import static org.mori4j.natives.verbs.WorkRequestLayouts.IBV_SEND_WR;
import static org.mori4j.natives.verbs.WorkRequestLayouts.IBV_SGE;
import static org.mori4j.natives.verbs.WorkRequestLayouts.IBV_WC;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.natives.verbs.ReceiveWorkRequests;
import org.mori4j.natives.verbs.SendWorkRequests;
import org.mori4j.natives.verbs.VerbsPortAttributes;
import org.mori4j.natives.verbs.VerbsPostException;
import org.mori4j.natives.verbs.WorkCompletions;
import org.mori4j.transport.rdma.verbs.Completions;
import org.mori4j.transport.rdma.verbs.PortInfo;
import org.mori4j.transport.rdma.verbs.PostException;
import org.mori4j.transport.rdma.verbs.ReceiveRequests;
import org.mori4j.transport.rdma.verbs.SendRequests;

/**
 * What the ibverbs adapters write into and read from the native structs a NIC's provider reads and writes,
 * checked against the C field offsets (the ABI-checked layouts) without a device: Java send and receive
 * requests copied into {@code ibv_send_wr}/{@code ibv_recv_wr} (opcode, flags, wr_id, SGE, remote address,
 * rkey, immediate in network byte order), hand-built {@code ibv_wc}s copied into {@link Completions}, a
 * provider's {@code bad_wr} turned into {@link PostException#posted()}, and the copies allocating nothing.
 */
class IbvConversionsTest {
  private static final long WR_ID = offset(IBV_SEND_WR, "wr_id");
  private static final long NEXT = offset(IBV_SEND_WR, "next");
  private static final long SG_LIST = offset(IBV_SEND_WR, "sg_list");
  private static final long NUM_SGE = offset(IBV_SEND_WR, "num_sge");
  private static final long OPCODE = offset(IBV_SEND_WR, "opcode");
  private static final long SEND_FLAGS = offset(IBV_SEND_WR, "send_flags");
  private static final long IMM_DATA = offset(IBV_SEND_WR, "$anon_imm.imm_data");
  private static final long REMOTE_ADDR = offset(IBV_SEND_WR, "wr.rdma.remote_addr");
  private static final long RKEY = offset(IBV_SEND_WR, "wr.rdma.rkey");

  private static MemorySegment sendWr(SendWorkRequests wrs, int i) {
    return wrs.segment().asSlice(i * IBV_SEND_WR.byteSize(), IBV_SEND_WR);
  }

  private static MemorySegment sge(MemorySegment wr, long sgListOffset) {
    return wr.get(ADDRESS, sgListOffset).reinterpret(IBV_SGE.byteSize());
  }

  @Test
  void sendRequestsAreCopiedFieldByFieldFromTheAskedRange() {
    SendRequests java = new SendRequests(6);
    java.send(0, 999, 0xdead, 1, 1, 0) // before the range: must not be copied
        .write(1, 101, 0x10_0000L, 4096, 0x1111, 0x7f00_0000_1000L, 0x2222, IBV_SEND_SIGNALED)
        .writeWithImmediate(2, 102, 0x20_0000L, 0, 0x1111, 0x7f00_0000_2000L, 0x2223, 0xCAFEF00D, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED)
        .read(3, 103, 0x30_0000L, 65536, 0x1112, 0x7f00_0000_3000L, 0x2224, 0)
        .send(4, 0xFFFF_FFFF_FFFFL, 0x40_0000L, 64, 0x1113, IBV_SEND_SIGNALED | IBV_SEND_FENCE);

    try (Arena arena = Arena.ofConfined()) {
      SendWorkRequests wrs = new SendWorkRequests(arena, 4);
      IbvQueuePair.copySends(java, 1, 4, wrs);

      MemorySegment w = sendWr(wrs, 0);
      assertEquals(IBV_WR_RDMA_WRITE, w.get(JAVA_INT, OPCODE));
      assertEquals(IBV_SEND_SIGNALED, w.get(JAVA_INT, SEND_FLAGS));
      assertEquals(101, w.get(JAVA_LONG, WR_ID));
      assertEquals(1, w.get(JAVA_INT, NUM_SGE));
      MemorySegment s = sge(w, SG_LIST);
      assertEquals(0x10_0000L, s.get(JAVA_LONG, offset(IBV_SGE, "addr")));
      assertEquals(4096, s.get(JAVA_INT, offset(IBV_SGE, "length")));
      assertEquals(0x1111, s.get(JAVA_INT, offset(IBV_SGE, "lkey")));
      assertEquals(0x7f00_0000_1000L, w.get(JAVA_LONG, REMOTE_ADDR));
      assertEquals(0x2222, w.get(JAVA_INT, RKEY));
      assertEquals(sendWr(wrs, 1).address(), w.get(ADDRESS, NEXT).address(), "requests are chained in order");

      // WRITE_WITH_IMM of 0 bytes: no SGE, the immediate big-endian (__be32) as the C API expects.
      MemorySegment wi = sendWr(wrs, 1);
      assertEquals(IBV_WR_RDMA_WRITE_WITH_IMM, wi.get(JAVA_INT, OPCODE));
      assertEquals(IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, wi.get(JAVA_INT, SEND_FLAGS));
      assertEquals(102, wi.get(JAVA_LONG, WR_ID));
      assertEquals(0, wi.get(JAVA_INT, NUM_SGE));
      byte[] imm = new byte[4];
      MemorySegment.copy(wi, JAVA_BYTE, IMM_DATA, imm, 0, 4);
      assertArrayEquals(new byte[] {(byte) 0xCA, (byte) 0xFE, (byte) 0xF0, (byte) 0x0D}, imm);
      assertEquals(0x7f00_0000_2000L, wi.get(JAVA_LONG, REMOTE_ADDR));
      assertEquals(0x2223, wi.get(JAVA_INT, RKEY));

      MemorySegment r = sendWr(wrs, 2);
      assertEquals(IBV_WR_RDMA_READ, r.get(JAVA_INT, OPCODE));
      assertEquals(0, r.get(JAVA_INT, SEND_FLAGS), "an unsignaled read");
      assertEquals(103, r.get(JAVA_LONG, WR_ID));
      assertEquals(65536, sge(r, SG_LIST).get(JAVA_INT, offset(IBV_SGE, "length")));
      assertEquals(0x1112, sge(r, SG_LIST).get(JAVA_INT, offset(IBV_SGE, "lkey")));
      assertEquals(0x7f00_0000_3000L, r.get(JAVA_LONG, REMOTE_ADDR));
      assertEquals(0x2224, r.get(JAVA_INT, RKEY));

      MemorySegment sd = sendWr(wrs, 3);
      assertEquals(IBV_WR_SEND, sd.get(JAVA_INT, OPCODE));
      assertEquals(IBV_SEND_SIGNALED | IBV_SEND_FENCE, sd.get(JAVA_INT, SEND_FLAGS));
      assertEquals(0xFFFF_FFFF_FFFFL, sd.get(JAVA_LONG, WR_ID));
      assertEquals(0x40_0000L, sge(sd, SG_LIST).get(JAVA_LONG, offset(IBV_SGE, "addr")));
      assertEquals(64, sge(sd, SG_LIST).get(JAVA_INT, offset(IBV_SGE, "length")));
      assertEquals(0, sd.get(JAVA_LONG, REMOTE_ADDR), "a SEND names no remote address");
      assertEquals(0, sd.get(JAVA_INT, RKEY));

      // Reusing the slots for another range overwrites every field its opcode reads.
      IbvQueuePair.copySends(java, 0, 1, wrs);
      assertEquals(IBV_WR_SEND, sendWr(wrs, 0).get(JAVA_INT, OPCODE));
      assertEquals(999, sendWr(wrs, 0).get(JAVA_LONG, WR_ID));
      assertEquals(0, sendWr(wrs, 0).get(JAVA_INT, RKEY));
    }
  }

  @Test
  void receiveRequestsAreCopiedFromTheAskedRange() {
    ReceiveRequests java = new ReceiveRequests(3);
    java.receive(0, 1, 0x1000, 8, 5).receive(1, 77, 0x5000, 8192, 0x3333).receive(2, 78, 0, 0, 0);
    try (Arena arena = Arena.ofConfined()) {
      ReceiveWorkRequests wrs = new ReceiveWorkRequests(arena, 2);
      IbvQueuePair.copyReceives(java, 1, 2, wrs);
      MemorySegment r0 = wrs.segment().asSlice(0, IBV_RECV_WR);
      MemorySegment r1 = wrs.segment().asSlice(IBV_RECV_WR.byteSize(), IBV_RECV_WR);
      assertEquals(77, r0.get(JAVA_LONG, offset(IBV_RECV_WR, "wr_id")));
      assertEquals(1, r0.get(JAVA_INT, offset(IBV_RECV_WR, "num_sge")));
      MemorySegment s = sge(r0, offset(IBV_RECV_WR, "sg_list"));
      assertEquals(0x5000, s.get(JAVA_LONG, offset(IBV_SGE, "addr")));
      assertEquals(8192, s.get(JAVA_INT, offset(IBV_SGE, "length")));
      assertEquals(0x3333, s.get(JAVA_INT, offset(IBV_SGE, "lkey")));
      assertEquals(r1.address(), r0.get(ADDRESS, offset(IBV_RECV_WR, "next")).address());
      assertEquals(78, r1.get(JAVA_LONG, offset(IBV_RECV_WR, "wr_id")));
      assertEquals(0, r1.get(JAVA_INT, offset(IBV_RECV_WR, "num_sge")), "a receive for WRITE_WITH_IMM has no buffer");
    }
  }

  /** Fills {@code ibv_wc} entry {@code i} as a provider would. */
  private static void wc(WorkCompletions wcs, int i, long wrId, int status, int opcode, int byteLen, byte[] immBigEndian,
      int qpNum, int flags, int vendorErr) {
    MemorySegment w = wcs.segment().asSlice(i * IBV_WC.byteSize(), IBV_WC);
    w.set(JAVA_LONG, offset(IBV_WC, "wr_id"), wrId);
    w.set(JAVA_INT, offset(IBV_WC, "status"), status);
    w.set(JAVA_INT, offset(IBV_WC, "opcode"), opcode);
    w.set(JAVA_INT, offset(IBV_WC, "byte_len"), byteLen);
    MemorySegment.copy(immBigEndian, 0, w, JAVA_BYTE, offset(IBV_WC, "$anon_imm.imm_data"), 4);
    w.set(JAVA_INT, offset(IBV_WC, "qp_num"), qpNum);
    w.set(JAVA_INT, offset(IBV_WC, "wc_flags"), flags);
    w.set(JAVA_INT, offset(IBV_WC, "vendor_err"), vendorErr);
  }

  @Test
  void nativeCompletionsAreCopiedIntoCompletions() {
    try (Arena arena = Arena.ofConfined()) {
      WorkCompletions wcs = new WorkCompletions(arena, 4);
      byte[] imm = {0x12, 0x34, 0x56, 0x78};
      wc(wcs, 0, 501, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 0, new byte[4], 0x00ABCDEF, 0, 0);
      wc(wcs, 1, 502, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, 4096, imm, 0x00ABCDEF, IBV_WC_WITH_IMM, 0);
      wc(wcs, 2, 503, IBV_WC_SUCCESS, IBV_WC_RECV, 77, imm, 0x00ABCDE0, IBV_WC_GRH, 0);
      wc(wcs, 3, 504, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ, 999, imm, 0x00ABCDEF, IBV_WC_WITH_IMM, 0x88);

      Completions into = new Completions(8);
      into.set(0, -1, -1, -1, -1, -1, -1, -1, -1);
      IbvCompletionQueue.copy(wcs, 4, into, 1);

      assertEquals(-1, into.wrId(0), "entries before the target index are left alone");
      assertEquals(501, into.wrId(1));
      assertTrue(into.succeeded(1));
      assertEquals(IBV_WC_RDMA_WRITE, into.opcode(1));
      assertEquals(0x00ABCDEF, into.qpNumber(1));
      assertFalse(into.hasImmediate(1));

      assertEquals(502, into.wrId(2));
      assertEquals(IBV_WC_RECV_RDMA_WITH_IMM, into.opcode(2));
      assertEquals(4096, into.byteLength(2));
      assertTrue(into.hasImmediate(2));
      assertEquals(0x12345678, into.immediate(2), "the immediate arrives in host order");

      assertEquals(IBV_WC_RECV, into.opcode(3));
      assertEquals(77, into.byteLength(3));
      assertEquals(IBV_WC_GRH, into.wcFlags(3));
      assertEquals(0, into.immediate(3), "no IBV_WC_WITH_IMM: the union holds no immediate");
      assertEquals(0x00ABCDE0, into.qpNumber(3));

      // A failed completion: only wr_id, status, qp_num and vendor_err are defined by the C API.
      assertEquals(504, into.wrId(4));
      assertEquals(IBV_WC_REM_ACCESS_ERR, into.status(4));
      assertFalse(into.succeeded(4));
      assertEquals(0x88, into.vendorError(4));
      assertEquals(0x00ABCDEF, into.qpNumber(4));
      assertEquals(0, into.byteLength(4));
      assertEquals(0, into.wcFlags(4));
      assertFalse(into.hasImmediate(4));
      assertEquals("IBV_WC_REM_ACCESS_ERR (remote access error)", Completions.statusName(into.status(4)));
    }
  }

  @Test
  void aProvidersBadWrBecomesThePostedCount() {
    PostException e = IbvQueuePair.postException(new VerbsPostException("ibv_post_send", Errno.ENOMEM, "ENOMEM", 3, 8,
        "ibv_post_send failed: ENOMEM (Cannot allocate memory) at work request 3 of 8 (those before it were posted)"));
    assertEquals(3, e.posted());
    assertEquals(Errno.ENOMEM, e.code());
    assertEquals("ENOMEM", e.codeName());
    assertEquals("ibv_post_send", e.function());
    assertEquals("libibverbs", e.library());
    assertTrue(e.getMessage().endsWith("at work request 3 of 8 (those before it were posted)"), e.getMessage());

    PostException first = IbvQueuePair.postException(new VerbsPostException("ibv_post_recv", Errno.EINVAL, "EINVAL", 0, 2, "m"));
    assertEquals(0, first.posted());
    assertEquals("ibv_post_recv", first.function());

    PostException unknown = IbvQueuePair.postException(new VerbsPostException("ibv_post_send", Errno.EINVAL, "EINVAL", -1, 2, "m"));
    assertEquals(0, unknown.posted());
    assertTrue(unknown.getMessage().contains("bad_wr is not a request of the chain"), unknown.getMessage());
  }

  @Test
  void chainsLongerThanTheQueueAndRangesOutsideTheArrayAreRefused() {
    PostException e = IbvQueuePair.tooLong("ibv_post_send", 300, 256);
    assertEquals(0, e.posted());
    assertEquals(Errno.ENOMEM, e.code());
    assertEquals("ibv_post_send refused: a chain of 300 requests is longer than the queue's 256 slots; nothing was posted",
        e.getMessage());
    IbvQueuePair.checkRange("send", 8, 0, 8);
    IbvQueuePair.checkRange("send", 8, 8, 0);
    IndexOutOfBoundsException r = assertThrows(IndexOutOfBoundsException.class,
        () -> IbvQueuePair.checkRange("receive", 8, 5, 4));
    assertEquals("receive requests from 5 count 4 of 8", r.getMessage());
    assertThrows(IndexOutOfBoundsException.class, () -> IbvQueuePair.checkRange("send", 8, -1, 1));
    assertThrows(IndexOutOfBoundsException.class, () -> IbvQueuePair.checkRange("send", 8, 0, -1));
    assertThrows(IndexOutOfBoundsException.class,
        () -> IbvQueuePair.checkRange("send", 8, Integer.MAX_VALUE, 2));
  }

  @Test
  void aFailedGpuRegistrationSaysWhatTheNicNeeds() {
    NativeException e = IbvProtectionDomain.gpuRegistrationFailure(
        new NativeException("libibverbs", "ibv_reg_mr", Errno.EFAULT, "EFAULT", "ibv_reg_mr failed: EFAULT (Bad address)"),
        0x7f12_3400_0000L, 1 << 20, 1);
    assertEquals(Errno.EFAULT, e.code());
    assertEquals("ibv_reg_mr", e.function());
    assertTrue(e.getMessage().startsWith("registering 1048576 bytes of GPU 1 memory at 0x7f1234000000 with the NIC failed: "
        + "ibv_reg_mr failed: EFAULT (Bad address)"), e.getMessage());
    assertTrue(e.getMessage().contains("peer memory") && e.getMessage().contains("nvidia-peermem")
        && e.getMessage().contains("dma-buf"), e.getMessage());
  }

  @Test
  void portAttributesBecomePortInfo() {
    VerbsPortAttributes roce = new VerbsPortAttributes(IBV_PORT_ACTIVE, IBV_MTU_4096, IBV_MTU_1024, 256, 0, 1 << 30,
        0, 0, 2, 16, 5, IBV_LINK_LAYER_ETHERNET);
    PortInfo p = IbvDevice.portInfo(1, roce);
    assertEquals(new PortInfo(1, IBV_PORT_ACTIVE, IBV_MTU_1024, 0, IBV_LINK_LAYER_ETHERNET, 256), p);
    assertTrue(p.active());
    assertTrue(p.ethernet());
    VerbsPortAttributes ib = new VerbsPortAttributes(IBV_PORT_DOWN, IBV_MTU_4096, IBV_MTU_4096, 128, 0, 1 << 30,
        0xBEEF, 1, 2, 16, 5, IBV_LINK_LAYER_INFINIBAND);
    assertEquals(new PortInfo(2, IBV_PORT_DOWN, IBV_MTU_4096, 0xBEEF, IBV_LINK_LAYER_INFINIBAND, 128), IbvDevice.portInfo(2, ib));
  }

  @Test
  void copyingRequestsAndCompletionsAllocatesNothing() {
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    SendRequests sends = new SendRequests(32);
    ReceiveRequests receives = new ReceiveRequests(32);
    for (int i = 0; i < 32; i++) {
      sends.writeWithImmediate(i, i, 0x1000L * i, 4096, 1, 0x9000L * i, 2, i, IBV_SEND_SIGNALED);
      receives.receive(i, i, 0x1000L * i, 4096, 1);
    }
    Completions completions = new Completions(32);
    try (Arena arena = Arena.ofConfined()) {
      SendWorkRequests wrs = new SendWorkRequests(arena, 32);
      ReceiveWorkRequests rwrs = new ReceiveWorkRequests(arena, 32);
      WorkCompletions wcs = new WorkCompletions(arena, 32);
      Runnable round = () -> {
        IbvQueuePair.copySends(sends, 0, 32, wrs);
        IbvQueuePair.copyReceives(receives, 0, 32, rwrs);
        IbvCompletionQueue.copy(wcs, 32, completions, 0);
      };
      for (int i = 0; i < 20_000; i++) round.run(); // let the JIT compile the copies
      // The least of a few windows (a recompilation in one does not count); 10,000 rounds of 96 copies with
      // any allocation per request or per round would be at least 160,000 bytes in every window.
      long least = Long.MAX_VALUE;
      for (int window = 0; window < 5 && least > 0; window++) {
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 10_000; i++) round.run();
        least = Math.min(least, threads.getCurrentThreadAllocatedBytes() - before);
      }
      assertTrue(least < 32 * 1024, "10,000 copy rounds allocated " + least + " bytes");
    }
  }
}
