package org.mori4j.transport.rdma.verbs;

/**
 * A reusable array of receive work requests ({@code struct ibv_recv_wr} with one SGE each): where the payload
 * of a SEND lands; a WRITE_WITH_IMM consumes one too (its immediate arrives in the completion).
 */
public final class ReceiveRequests {
  private final long[] wrId;
  private final long[] address;
  private final int[] length;
  private final int[] lkey;

  public ReceiveRequests(int capacity) {
    if (capacity < 1) throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
    wrId = new long[capacity];
    address = new long[capacity];
    length = new int[capacity];
    lkey = new int[capacity];
  }

  public int capacity() {
    return wrId.length;
  }

  public ReceiveRequests receive(int i, long wrId, long address, int length, int lkey) {
    if (length < 0) throw new IllegalArgumentException("receive length must be >= 0: " + length);
    this.wrId[i] = wrId;
    this.address[i] = address;
    this.length[i] = length;
    this.lkey[i] = lkey;
    return this;
  }

  public long wrId(int i) { return wrId[i]; }
  public long address(int i) { return address[i]; }
  public int length(int i) { return length[i]; }
  public int lkey(int i) { return lkey[i]; }
}
