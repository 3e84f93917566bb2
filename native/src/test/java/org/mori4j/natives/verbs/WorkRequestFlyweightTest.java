package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.WorkRequestLayouts.IBV_RECV_WR;
import static org.mori4j.natives.verbs.WorkRequestLayouts.IBV_SEND_WR;
import static org.mori4j.natives.verbs.WorkRequestLayouts.IBV_SGE;
import static org.mori4j.natives.verbs.WorkRequestLayouts.IBV_WC;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * The work-request and completion flyweights write and read exactly the C fields a provider reads and
 * writes: opcodes, keys, scatter/gather entries, chain links, immediates in network byte order.
 */
class WorkRequestFlyweightTest {

  @Test
  void sendRequestsAreChainedWithTheirScatterGatherEntries() {
    try (Arena arena = Arena.ofConfined()) {
      SendWorkRequests wrs = new SendWorkRequests(arena, 4);
      wrs.rdmaWrite(0, 10, 0x1000, 64, 0x11, 0x9000, 0x22, VerbsConstants.IBV_SEND_SIGNALED)
          .rdmaWriteWithImmediate(1, 11, 0x2000, 0, 0x11, 0xA000, 0x22, 0, 0x01020304)
          .rdmaRead(2, 12, 0x3000, 128, 0x11, 0xB000, 0x23, 0);

      MemorySegment first = wrs.chain(3);
      MemorySegment w0 = first.asSlice(0, IBV_SEND_WR);
      MemorySegment w1 = first.asSlice(IBV_SEND_WR.byteSize(), IBV_SEND_WR);
      MemorySegment w2 = first.asSlice(2 * IBV_SEND_WR.byteSize(), IBV_SEND_WR);

      assertEquals(10, w0.get(JAVA_LONG, offset(IBV_SEND_WR, "wr_id")));
      assertEquals(VerbsConstants.IBV_WR_RDMA_WRITE, w0.get(JAVA_INT, offset(IBV_SEND_WR, "opcode")));
      assertEquals(VerbsConstants.IBV_SEND_SIGNALED, w0.get(JAVA_INT, offset(IBV_SEND_WR, "send_flags")));
      assertEquals(0x9000, w0.get(JAVA_LONG, offset(IBV_SEND_WR, "wr.rdma.remote_addr")));
      assertEquals(0x22, w0.get(JAVA_INT, offset(IBV_SEND_WR, "wr.rdma.rkey")));
      assertEquals(1, w0.get(JAVA_INT, offset(IBV_SEND_WR, "num_sge")));
      MemorySegment sge0 = w0.get(ADDRESS, offset(IBV_SEND_WR, "sg_list")).reinterpret(IBV_SGE.byteSize());
      assertEquals(0x1000, sge0.get(JAVA_LONG, offset(IBV_SGE, "addr")));
      assertEquals(64, sge0.get(JAVA_INT, offset(IBV_SGE, "length")));
      assertEquals(0x11, sge0.get(JAVA_INT, offset(IBV_SGE, "lkey")));

      assertEquals(w1.address(), w0.get(ADDRESS, offset(IBV_SEND_WR, "next")).address());
      assertEquals(w2.address(), w1.get(ADDRESS, offset(IBV_SEND_WR, "next")).address());
      assertEquals(0, w2.get(ADDRESS, offset(IBV_SEND_WR, "next")).address(), "the chain ends at count");

      // A zero-length write with immediate carries no SGE, and the immediate goes out big-endian.
      assertEquals(0, w1.get(JAVA_INT, offset(IBV_SEND_WR, "num_sge")));
      long imm = offset(IBV_SEND_WR, "$anon_imm.imm_data");
      assertEquals(1, w1.get(JAVA_BYTE, imm));
      assertEquals(4, w1.get(JAVA_BYTE, imm + 3));
      assertEquals(VerbsConstants.IBV_WR_RDMA_READ, w2.get(JAVA_INT, offset(IBV_SEND_WR, "opcode")));

      // Shorter and then longer chains move only the terminator.
      wrs.chain(1);
      assertEquals(0, w0.get(ADDRESS, offset(IBV_SEND_WR, "next")).address());
      wrs.chain(4);
      assertEquals(w1.address(), w0.get(ADDRESS, offset(IBV_SEND_WR, "next")).address());
      assertEquals(w2.address(), w1.get(ADDRESS, offset(IBV_SEND_WR, "next")).address());
      assertEquals(2, wrs.indexOf(w2.address()));
      assertEquals(-1, wrs.indexOf(w2.address() + 1));
      assertThrows(IllegalArgumentException.class, () -> wrs.chain(5));
      assertThrows(IndexOutOfBoundsException.class, () -> wrs.send(4, 0, 0, 0, 0, 0));
    }
  }

  @Test
  void receiveRequestsAreChained() {
    try (Arena arena = Arena.ofConfined()) {
      ReceiveWorkRequests wrs = new ReceiveWorkRequests(arena, 2);
      wrs.receive(0, 7, 0x4000, 256, 0x33).receive(1, 8, 0, 0, 0);
      MemorySegment first = wrs.chain(2);
      MemorySegment r1 = first.asSlice(IBV_RECV_WR.byteSize(), IBV_RECV_WR);
      assertEquals(7, first.get(JAVA_LONG, offset(IBV_RECV_WR, "wr_id")));
      assertEquals(1, first.get(JAVA_INT, offset(IBV_RECV_WR, "num_sge")));
      assertEquals(r1.address(), first.get(ADDRESS, offset(IBV_RECV_WR, "next")).address());
      assertEquals(0, r1.get(JAVA_INT, offset(IBV_RECV_WR, "num_sge")));
      assertEquals(0, r1.get(ADDRESS, offset(IBV_RECV_WR, "next")).address());
    }
  }

  @Test
  void completionsAreReadInPlace() {
    try (Arena arena = Arena.ofConfined()) {
      WorkCompletions wcs = new WorkCompletions(arena, 2);
      MemorySegment wc1 = wcs.segment().asSlice(IBV_WC.byteSize(), IBV_WC);
      wc1.set(JAVA_LONG, offset(IBV_WC, "wr_id"), 99);
      wc1.set(JAVA_INT, offset(IBV_WC, "status"), VerbsConstants.IBV_WC_REM_ACCESS_ERR);
      wc1.set(JAVA_INT, offset(IBV_WC, "opcode"), VerbsConstants.IBV_WC_RECV_RDMA_WITH_IMM);
      wc1.set(JAVA_INT, offset(IBV_WC, "wc_flags"), VerbsConstants.IBV_WC_WITH_IMM);
      long imm = offset(IBV_WC, "$anon_imm.imm_data");
      wc1.set(JAVA_BYTE, imm, (byte) 0x0A);
      wc1.set(JAVA_BYTE, imm + 3, (byte) 0x0D);

      assertEquals(99, wcs.wrId(1));
      assertFalse(wcs.succeeded(1));
      assertTrue(wcs.hasImmediate(1));
      assertEquals(0x0A00000D, wcs.immediate(1));
      assertTrue((wcs.opcode(1) & VerbsConstants.IBV_WC_RECV) != 0);
      if (IbVerbs.available()) {
        assertEquals("remote access error", wcs.statusString(1));
        assertTrue(wcs.failure(1).getMessage().contains("work request 99 completed with remote access error"),
            wcs.failure(1).getMessage());
      }
    }
  }
}
