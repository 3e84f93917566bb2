package org.mori4j.io.gpuinit;

import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A Java stand-in for the device library: posts send and receive work requests and polls completions through an
 * endpoint's memory exactly as {@code mori_rdma.cuh} does (reserve with an atomic add, wait while the queue is
 * full, fill, publish through the doorbell record in index order, ring the doorbell with an atomic max; accept a
 * CQE when its owner equals its index + 1, then update the CQ doorbell record). Several threads may post at once;
 * one thread polls the CQ at a time.
 */
final class HostDevice {
  static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
  static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
  private static final Duration WAIT = Duration.ofSeconds(20);

  record Cqe(long wrId, int status, int opcode, int flags, int byteLen, int imm, int wqeIndex) {
    @Override
    public String toString() {
      return "CQE[wrId " + wrId + ", " + statusName(status) + ", op " + opcode + ", flags " + flags + ", bytes " + byteLen + ", imm " + imm
          + ", wqe " + wqeIndex + "]";
    }
  }

  final MemorySegment m;
  final int sqDepth, cqDepth, rqDepth;
  private final long sqRing, cqRing, rqRing;

  HostDevice(RdmaEndpoint ep) {
    m = MemorySegment.ofAddress(ep.address()).reinterpret(ep.blockBytes());
    if (m.get(ValueLayout.JAVA_INT, CTRL_MAGIC) != MAGIC) throw new IllegalStateException("no endpoint header at " + ep.address());
    sqDepth = m.get(ValueLayout.JAVA_INT, CTRL_SQ_DEPTH);
    cqDepth = m.get(ValueLayout.JAVA_INT, CTRL_CQ_DEPTH);
    rqDepth = m.get(ValueLayout.JAVA_INT, CTRL_RQ_DEPTH);
    sqRing = m.get(ValueLayout.JAVA_LONG, CTRL_SQ_RING) - ep.address();
    cqRing = m.get(ValueLayout.JAVA_LONG, CTRL_CQ_RING) - ep.address();
    rqRing = rqDepth == 0 ? 0 : m.get(ValueLayout.JAVA_LONG, CTRL_RQ_RING) - ep.address();
  }

  long get(int off) {
    return (long) LONG.getAcquire(m, (long) off);
  }

  int getInt(int off) {
    return (int) INT.getAcquire(m, (long) off);
  }

  /** Everything a WQE holds. */
  record Wr(int op, int flags, int imm, long wrId, long laddr, int lkey, int length, long raddr, int rkey, long compareAdd, long swap) {
    static Wr write(long laddr, int lkey, long raddr, int rkey, int len, int flags, long wrId) {
      return new Wr(OP_RDMA_WRITE, flags, 0, wrId, laddr, lkey, len, raddr, rkey, 0, 0);
    }

    static Wr read(long laddr, int lkey, long raddr, int rkey, int len, int flags, long wrId) {
      return new Wr(OP_RDMA_READ, flags, 0, wrId, laddr, lkey, len, raddr, rkey, 0, 0);
    }

    static Wr writeImm(long laddr, int lkey, long raddr, int rkey, int len, int imm, int flags, long wrId) {
      return new Wr(OP_RDMA_WRITE_WITH_IMM, flags, imm, wrId, laddr, lkey, len, raddr, rkey, 0, 0);
    }

    static Wr send(long laddr, int lkey, int len, int flags, long wrId) {
      return new Wr(OP_SEND, flags, 0, wrId, laddr, lkey, len, 0, 0, 0, 0);
    }

    static Wr fetchAdd(long laddr, int lkey, long raddr, int rkey, long add, int flags, long wrId) {
      return new Wr(OP_ATOMIC_FETCH_AND_ADD, flags, 0, wrId, laddr, lkey, 8, raddr, rkey, add, 0);
    }

    static Wr cas(long laddr, int lkey, long raddr, int rkey, long compare, long swap, int flags, long wrId) {
      return new Wr(OP_ATOMIC_CMP_AND_SWP, flags, 0, wrId, laddr, lkey, 8, raddr, rkey, compare, swap);
    }
  }

  /** Posts {@code wrs} as one group (one reservation, one publication, one doorbell); returns the first index. */
  long post(Wr... wrs) {
    int n = wrs.length;
    long i = (long) LONG.getAndAdd(m, (long) CTRL_SQ_POST_IDX, (long) n);
    long end = deadline();
    while (i + n - get(CTRL_SQ_RETIRED) > sqDepth) {
      check(end, "queue full: WQEs [" + i + ", " + (i + n) + ") wait for sqRetired " + get(CTRL_SQ_RETIRED));
      pause();
    }
    for (int k = 0; k < n; k++) fill(i + k, wrs[k]);
    // UpdateSendDbrRecord: in index order
    while (get(CTRL_SQ_DBR_RECORD) != i) {
      check(end, "dbr record " + get(CTRL_SQ_DBR_RECORD) + " never reached " + i);
      pause();
    }
    VarHandle.fullFence();
    LONG.setRelease(m, (long) CTRL_SQ_DBR_RECORD, i + n);
    // RingDoorbell: atomic max
    VarHandle.fullFence();
    long upTo = i + n;
    long cur;
    while ((cur = get(CTRL_SQ_DOORBELL)) < upTo && !LONG.compareAndSet(m, (long) CTRL_SQ_DOORBELL, cur, upTo)) pause();
    return i;
  }

  private void fill(long index, Wr w) {
    long o = sqRing + (index & (sqDepth - 1)) * WQE_BYTES;
    m.set(ValueLayout.JAVA_BYTE, o + WQE_OPCODE, (byte) w.op());
    m.set(ValueLayout.JAVA_BYTE, o + WQE_FLAGS, (byte) w.flags());
    m.set(ValueLayout.JAVA_SHORT, o + WQE_RESERVED0, (short) 0);
    m.set(ValueLayout.JAVA_INT, o + WQE_IMMEDIATE, w.imm());
    m.set(ValueLayout.JAVA_LONG, o + WQE_WR_ID, w.wrId());
    m.set(ValueLayout.JAVA_LONG, o + WQE_LOCAL_ADDR, w.laddr());
    m.set(ValueLayout.JAVA_INT, o + WQE_LKEY, w.lkey());
    m.set(ValueLayout.JAVA_INT, o + WQE_LENGTH, w.length());
    m.set(ValueLayout.JAVA_LONG, o + WQE_REMOTE_ADDR, w.raddr());
    m.set(ValueLayout.JAVA_INT, o + WQE_RKEY, w.rkey());
    m.set(ValueLayout.JAVA_INT, o + WQE_RESERVED1, 0);
    m.set(ValueLayout.JAVA_LONG, o + WQE_COMPARE_ADD, w.compareAdd());
    m.set(ValueLayout.JAVA_LONG, o + WQE_SWAP, w.swap());
  }

  /** Posts one receive WQE and publishes it; returns its RQ index. */
  long postRecv(long addr, int lkey, int len, long wrId) {
    long j = (long) LONG.getAndAdd(m, (long) CTRL_RQ_POST_IDX, 1L);
    long end = deadline();
    while (j + 1 - get(CTRL_RQ_RETIRED) > rqDepth) {
      check(end, "receive queue full");
      pause();
    }
    long o = rqRing + (j & (rqDepth - 1)) * RECV_WQE_BYTES;
    m.set(ValueLayout.JAVA_LONG, o + RECV_WR_ID, wrId);
    m.set(ValueLayout.JAVA_LONG, o + RECV_ADDR, addr);
    m.set(ValueLayout.JAVA_INT, o + RECV_LKEY, lkey);
    m.set(ValueLayout.JAVA_INT, o + RECV_LENGTH, len);
    while (get(CTRL_RQ_DBR_RECORD) != j) {
      check(end, "receive dbr record");
      pause();
    }
    VarHandle.fullFence();
    LONG.setRelease(m, (long) CTRL_RQ_DBR_RECORD, j + 1);
    return j;
  }

  /** PollCq: the next CQE if the proxy wrote it, else null; updates the CQ doorbell record after taking one. */
  Cqe pollCq() {
    long idx = get(CTRL_CQ_POLL_IDX);
    long o = cqRing + (idx & (cqDepth - 1)) * CQE_BYTES;
    if ((int) INT.getAcquire(m, o + CQE_OWNER) != (int) (idx + 1)) return null;
    Cqe c = new Cqe(m.get(ValueLayout.JAVA_LONG, o + CQE_WR_ID), m.get(ValueLayout.JAVA_INT, o + CQE_STATUS),
        m.get(ValueLayout.JAVA_BYTE, o + CQE_OPCODE) & 0xFF, m.get(ValueLayout.JAVA_BYTE, o + CQE_FLAGS) & 0xFF,
        m.get(ValueLayout.JAVA_INT, o + CQE_BYTE_LEN), m.get(ValueLayout.JAVA_INT, o + CQE_IMMEDIATE), m.get(ValueLayout.JAVA_INT, o + CQE_WQE_INDEX));
    LONG.setRelease(m, (long) CTRL_CQ_POLL_IDX, idx + 1);
    VarHandle.fullFence();
    LONG.setRelease(m, (long) CTRL_CQ_DBR_RECORD, idx + 1);
    return c;
  }

  Cqe awaitCqe() {
    long end = deadline();
    while (true) {
      Cqe c = pollCq();
      if (c != null) return c;
      check(end, "no CQE at index " + get(CTRL_CQ_POLL_IDX) + " (cqProducerIdx " + get(CTRL_CQ_PRODUCER_IDX) + ", sqRetired " + get(CTRL_SQ_RETIRED)
          + ", sqDoorbell " + get(CTRL_SQ_DOORBELL) + ")");
      pause();
    }
  }

  List<Cqe> awaitCqes(int n) {
    List<Cqe> out = new ArrayList<>();
    for (int i = 0; i < n; i++) out.add(awaitCqe());
    return out;
  }

  /** mori_rdma_wait_retired: until sqRetired > idx. */
  void waitRetired(long idx) {
    long end = deadline();
    while (get(CTRL_SQ_RETIRED) <= idx) {
      check(end, "WQE " + idx + " never retired (sqRetired " + get(CTRL_SQ_RETIRED) + ")");
      pause();
    }
  }

  /** Waits briefly without holding a core: the CI machine has two, and the proxy needs one. */
  private static void pause() {
    java.util.concurrent.locks.LockSupport.parkNanos(5_000);
  }

  private static long deadline() {
    return System.nanoTime() + WAIT.toNanos();
  }

  private static void check(long end, String what) {
    if (System.nanoTime() - end > 0) throw new AssertionError("device wait timed out after " + WAIT.toSeconds() + " s: " + what);
  }
}
