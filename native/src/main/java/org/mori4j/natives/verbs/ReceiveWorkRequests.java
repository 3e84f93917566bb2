package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.mori4j.natives.verbs.WorkRequestLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A reusable batch of receive work requests ({@code struct ibv_recv_wr}, at most one scatter/gather entry
 * each), written in place and posted as one chain by {@link VerbsQueuePair#postReceive}. A receive with no
 * buffer is what an RDMA write with immediate consumes at the target.
 */
public final class ReceiveWorkRequests {
  private final MemorySegment wrs;
  private final MemorySegment sges;
  private final int capacity;
  private int terminated;

  public ReceiveWorkRequests(Arena arena, int capacity) {
    if (capacity <= 0) throw new IllegalArgumentException("capacity must be positive: " + capacity);
    this.capacity = capacity;
    this.wrs = arena.allocate(IBV_RECV_WR, capacity);
    this.sges = arena.allocate(IBV_SGE, capacity);
    for (int i = 0; i < capacity; i++) wrs.set(ADDRESS, wr(i) + RECV_SG_LIST, sges.asSlice(sge(i), IBV_SGE));
    for (int i = 0; i < capacity - 1; i++) link(i);
    this.terminated = capacity - 1;
  }

  public int capacity() {
    return capacity;
  }

  /**
   * The native array: request {@code i} at {@code i * IBV_RECV_WR.byteSize()}, its scatter/gather entry where its
   * {@code sg_list} points. For checking what a copy wrote; posting goes through {@link VerbsQueuePair}.
   */
  public MemorySegment segment() {
    return wrs;
  }

  /** A receive into {@code length} bytes at {@code address} ({@code length} 0: no buffer). */
  public ReceiveWorkRequests receive(int i, long wrId, long address, int length, int lkey) {
    long w = wr(i);
    long s = sge(i);
    sges.set(JAVA_LONG, s + SGE_ADDR, address);
    sges.set(JAVA_INT, s + SGE_LENGTH, length);
    sges.set(JAVA_INT, s + SGE_LKEY, lkey);
    wrs.set(JAVA_LONG, w + RECV_WR_ID, wrId);
    wrs.set(JAVA_INT, w + RECV_NUM_SGE, length == 0 ? 0 : 1);
    return this;
  }

  /**
   * Terminates the chain after request {@code count-1} and returns the first. Requests are linked
   * {@code i -> i+1} once, at construction; only the terminator moves, so posting allocates nothing.
   */
  MemorySegment chain(int count) {
    if (count <= 0 || count > capacity) throw new IllegalArgumentException("count " + count + " of " + capacity);
    if (terminated != count - 1) {
      if (terminated < capacity - 1) link(terminated);
      wrs.set(ADDRESS, wr(count - 1) + RECV_NEXT, MemorySegment.NULL);
      terminated = count - 1;
    }
    return wrs;
  }

  private void link(int i) {
    wrs.set(ADDRESS, wr(i) + RECV_NEXT, wrs.asSlice(wr(i + 1), IBV_RECV_WR));
  }

  /** The index of the request at {@code address} (e.g. {@code bad_wr}), or -1. */
  int indexOf(long address) {
    long d = address - wrs.address();
    return d < 0 || d >= wrs.byteSize() || d % IBV_RECV_WR.byteSize() != 0 ? -1 : (int) (d / IBV_RECV_WR.byteSize());
  }

  private long wr(int i) {
    if (i < 0 || i >= capacity) throw new IndexOutOfBoundsException("receive request " + i + " of " + capacity);
    return IBV_RECV_WR.byteSize() * i;
  }

  private long sge(int i) {
    return IBV_SGE.byteSize() * i;
  }
}
