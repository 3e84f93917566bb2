package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.mori4j.natives.verbs.WorkRequestLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A reusable batch of send work requests ({@code struct ibv_send_wr}, one scatter/gather entry each),
 * written in place and posted as one chain by {@link VerbsQueuePair#postSend}: a batch of N transfers is one
 * {@code ibv_post_send}, as the architecture asks. Each setter fills every field its opcode reads, so a slot
 * can be reused for a different operation without clearing.
 */
public final class SendWorkRequests {
  private static final ValueLayout.OfInt NETWORK_INT = JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);

  private final MemorySegment wrs;
  private final MemorySegment sges;
  private final int capacity;
  private int terminated;

  public SendWorkRequests(Arena arena, int capacity) {
    if (capacity <= 0) throw new IllegalArgumentException("capacity must be positive: " + capacity);
    this.capacity = capacity;
    this.wrs = arena.allocate(IBV_SEND_WR, capacity);
    this.sges = arena.allocate(IBV_SGE, capacity);
    for (int i = 0; i < capacity; i++) wrs.set(ADDRESS, wr(i) + SEND_SG_LIST, sges.asSlice(sge(i), IBV_SGE));
    for (int i = 0; i < capacity - 1; i++) link(i);
    this.terminated = capacity - 1;
  }

  public int capacity() {
    return capacity;
  }

  /**
   * The native array: request {@code i} at {@code i * IBV_SEND_WR.byteSize()}, its scatter/gather entry where its
   * {@code sg_list} points. For checking what a copy wrote; posting goes through {@link VerbsQueuePair}.
   */
  public MemorySegment segment() {
    return wrs;
  }

  /** {@code IBV_WR_RDMA_WRITE}: {@code length} local bytes to {@code remoteAddress} under {@code rkey}. */
  public SendWorkRequests rdmaWrite(int i, long wrId, long localAddress, int length, int lkey, long remoteAddress,
      int rkey, int sendFlags) {
    return set(i, VerbsConstants.IBV_WR_RDMA_WRITE, wrId, localAddress, length, lkey, remoteAddress, rkey,
        sendFlags, 0);
  }

  /**
   * {@code IBV_WR_RDMA_WRITE_WITH_IMM}: a write that also consumes a receive at the target and hands it
   * {@code immediate} (host order here; stored in network order as the header requires).
   */
  public SendWorkRequests rdmaWriteWithImmediate(int i, long wrId, long localAddress, int length, int lkey,
      long remoteAddress, int rkey, int sendFlags, int immediate) {
    return set(i, VerbsConstants.IBV_WR_RDMA_WRITE_WITH_IMM, wrId, localAddress, length, lkey, remoteAddress,
        rkey, sendFlags, immediate);
  }

  /** {@code IBV_WR_RDMA_READ}: {@code length} bytes from {@code remoteAddress} into local memory. */
  public SendWorkRequests rdmaRead(int i, long wrId, long localAddress, int length, int lkey, long remoteAddress,
      int rkey, int sendFlags) {
    return set(i, VerbsConstants.IBV_WR_RDMA_READ, wrId, localAddress, length, lkey, remoteAddress, rkey,
        sendFlags, 0);
  }

  /** {@code IBV_WR_SEND}: {@code length} local bytes into the target's next posted receive. */
  public SendWorkRequests send(int i, long wrId, long localAddress, int length, int lkey, int sendFlags) {
    return set(i, VerbsConstants.IBV_WR_SEND, wrId, localAddress, length, lkey, 0, 0, sendFlags, 0);
  }

  /**
   * Terminates the chain after request {@code count-1} and returns the first. Requests are linked
   * {@code i -> i+1} once, at construction; only the terminator moves, so posting allocates nothing.
   */
  MemorySegment chain(int count) {
    if (count <= 0 || count > capacity) throw new IllegalArgumentException("count " + count + " of " + capacity);
    if (terminated != count - 1) {
      if (terminated < capacity - 1) link(terminated);
      wrs.set(ADDRESS, wr(count - 1) + SEND_NEXT, MemorySegment.NULL);
      terminated = count - 1;
    }
    return wrs;
  }

  private void link(int i) {
    wrs.set(ADDRESS, wr(i) + SEND_NEXT, wrs.asSlice(wr(i + 1), IBV_SEND_WR));
  }

  /** The index of the request at {@code address} (e.g. {@code bad_wr}), or -1. */
  int indexOf(long address) {
    long d = address - wrs.address();
    return d < 0 || d >= wrs.byteSize() || d % IBV_SEND_WR.byteSize() != 0 ? -1 : (int) (d / IBV_SEND_WR.byteSize());
  }

  public long wrId(int i) {
    return wrs.get(JAVA_LONG, wr(i) + SEND_WR_ID);
  }

  private SendWorkRequests set(int i, int opcode, long wrId, long localAddress, int length, int lkey,
      long remoteAddress, int rkey, int sendFlags, int immediate) {
    long w = wr(i);
    long s = sge(i);
    sges.set(JAVA_LONG, s + SGE_ADDR, localAddress);
    sges.set(JAVA_INT, s + SGE_LENGTH, length);
    sges.set(JAVA_INT, s + SGE_LKEY, lkey);
    wrs.set(JAVA_LONG, w + SEND_WR_ID, wrId);
    // A zero-length write (with immediate, as a notification) carries no scatter/gather entry.
    wrs.set(JAVA_INT, w + SEND_NUM_SGE, length == 0 ? 0 : 1);
    wrs.set(JAVA_INT, w + SEND_OPCODE, opcode);
    wrs.set(JAVA_INT, w + SEND_FLAGS, sendFlags);
    wrs.set(NETWORK_INT, w + SEND_IMM_DATA, immediate);
    wrs.set(JAVA_LONG, w + SEND_RDMA_REMOTE_ADDR, remoteAddress);
    wrs.set(JAVA_INT, w + SEND_RDMA_RKEY, rkey);
    return this;
  }

  private long wr(int i) {
    if (i < 0 || i >= capacity) throw new IndexOutOfBoundsException("work request " + i + " of " + capacity);
    return IBV_SEND_WR.byteSize() * i;
  }

  private long sge(int i) {
    return IBV_SGE.byteSize() * i;
  }
}
