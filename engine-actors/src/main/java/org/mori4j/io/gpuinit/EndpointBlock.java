package org.mori4j.io.gpuinit;

import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * One endpoint's memory (control block, rings, atomic result cells) and its single owner. On a GPU it is pinned
 * host memory from the engine's GPU runtime ({@code allocPinned}: with unified addressing the host address is the
 * device address, so the kernel and the proxy share it without copies); otherwise an {@link Arena} of its own.
 * Counters shared with the device are read with acquire and written with release semantics (the device side uses
 * {@code __threadfence_system()} and volatile accesses).
 */
final class EndpointBlock implements AutoCloseable {
  static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
  static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
  private static final AtomicInteger OPEN = new AtomicInteger();

  final MemorySegment seg;
  final int sqDepth, cqDepth, rqDepth;
  final long sqRing, cqRing, rqRing, atomics;
  private final Arena arena;
  private final PinnedBuffer pinned;
  private boolean closed;

  private EndpointBlock(MemorySegment seg, Arena arena, PinnedBuffer pinned, int sq, int cq, int rq) {
    this.seg = seg;
    this.arena = arena;
    this.pinned = pinned;
    this.sqDepth = sq;
    this.cqDepth = cq;
    this.rqDepth = rq;
    this.sqRing = sqRingOffset();
    this.cqRing = cqRingOffset(sq);
    this.rqRing = rqRingOffset(sq, cq);
    this.atomics = atomicResultsOffset(sq, cq, rq);
    OPEN.incrementAndGet();
  }

  /** Allocates and zeroes a block; {@code runtime} is used (and must be available) only when {@code onGpu}. */
  static EndpointBlock allocate(RdmaEndpointConfig cfg, GpuRuntime runtime) {
    long bytes = blockBytes(cfg.maxSendWr(), cfg.maxCqe(), cfg.maxRecvWr());
    if (cfg.onGpu()) {
      if (runtime == null || !runtime.available())
        throw new IllegalStateException("an endpoint on GPU " + cfg.deviceId() + " needs a GPU runtime: "
            + (runtime == null ? "none" : runtime.version()));
      if (cfg.deviceId() >= runtime.deviceCount())
        throw new IllegalArgumentException("deviceId " + cfg.deviceId() + " out of range: " + runtime.name() + " has " + runtime.deviceCount() + " device(s)");
      PinnedBuffer p = runtime.allocPinned(bytes);
      MemorySegment s = p.segment();
      if ((s.address() & (CTRL_ALIGN - 1)) != 0) {
        p.close();
        throw new IllegalStateException("pinned memory at 0x" + Long.toHexString(s.address()) + " is not " + CTRL_ALIGN + "-byte aligned");
      }
      s.fill((byte) 0);
      return new EndpointBlock(s, null, p, cfg.maxSendWr(), cfg.maxCqe(), cfg.maxRecvWr());
    }
    Arena a = Arena.ofShared();
    MemorySegment s = a.allocate(bytes, 4096);
    return new EndpointBlock(s, a, null, cfg.maxSendWr(), cfg.maxCqe(), cfg.maxRecvWr());
  }

  /** Writes the host-owned fields of the control block. */
  void init(int qpn, int internalLkey, long waitTimeoutNanos) {
    seg.set(ValueLayout.JAVA_INT, CTRL_VERSION, VERSION);
    seg.set(ValueLayout.JAVA_INT, CTRL_QPN, qpn);
    seg.set(ValueLayout.JAVA_INT, CTRL_SQ_DEPTH, sqDepth);
    seg.set(ValueLayout.JAVA_INT, CTRL_CQ_DEPTH, cqDepth);
    seg.set(ValueLayout.JAVA_INT, CTRL_RQ_DEPTH, rqDepth);
    seg.set(ValueLayout.JAVA_INT, CTRL_INTERNAL_LKEY, internalLkey);
    seg.set(ValueLayout.JAVA_LONG, CTRL_SQ_RING, address() + sqRing);
    seg.set(ValueLayout.JAVA_LONG, CTRL_CQ_RING, address() + cqRing);
    seg.set(ValueLayout.JAVA_LONG, CTRL_RQ_RING, rqDepth == 0 ? 0 : address() + rqRing);
    seg.set(ValueLayout.JAVA_LONG, CTRL_ATOMIC_RESULTS, address() + atomics);
    seg.set(ValueLayout.JAVA_LONG, CTRL_WAIT_TIMEOUT_NS, waitTimeoutNanos);
    INT.setRelease(seg, (long) CTRL_STATE, STATE_RESET);
    // the magic last: a reader that sees it sees a complete header
    INT.setRelease(seg, (long) CTRL_MAGIC, MAGIC);
  }

  long address() {
    return seg.address();
  }

  long bytes() {
    return seg.byteSize();
  }

  long getAcquire(int offset) {
    return (long) LONG.getAcquire(seg, (long) offset);
  }

  void setRelease(int offset, long v) {
    LONG.setRelease(seg, (long) offset, v);
  }

  int getIntAcquire(long offset) {
    return (int) INT.getAcquire(seg, offset);
  }

  void setIntRelease(long offset, int v) {
    INT.setRelease(seg, offset, v);
  }

  /** Offset of send WQE {@code index}'s slot. */
  long wqe(long index) {
    return sqRing + (index & (sqDepth - 1)) * WQE_BYTES;
  }

  long cqe(long index) {
    return cqRing + (index & (cqDepth - 1)) * CQE_BYTES;
  }

  long recv(long index) {
    return rqRing + (index & (rqDepth - 1)) * RECV_WQE_BYTES;
  }

  /** Address of the atomic result cells (what the internal lkey covers). */
  long atomicsAddress() {
    return address() + atomics;
  }

  long atomicsBytes() {
    return (long) sqDepth * ATOMIC_RESULT_BYTES;
  }

  /** Endpoint blocks open now in this process (tests check that closing frees them all). */
  static int openInProcess() {
    return OPEN.get();
  }

  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    OPEN.decrementAndGet();
    if (pinned != null) pinned.close();
    else arena.close();
  }
}
