package org.mori4j.transport.rdma.verbs;

import static org.mori4j.natives.verbs.VerbsConstants.*;

/**
 * A reusable array of send work requests ({@code struct ibv_send_wr} with one SGE each), held as parallel
 * primitive arrays so that filling and posting a chain allocates nothing. The backend fills entries and
 * posts a range of them as one chain; providers read them (the ibverbs provider copies them into native
 * {@code ibv_send_wr}s, the software provider executes them).
 */
public final class SendRequests {
  private final int[] opcode;
  private final int[] flags;
  private final long[] wrId;
  private final long[] localAddress;
  private final int[] length;
  private final int[] lkey;
  private final long[] remoteAddress;
  private final int[] rkey;
  private final int[] immediate;

  public SendRequests(int capacity) {
    if (capacity < 1) throw new IllegalArgumentException("capacity must be >= 1: " + capacity);
    opcode = new int[capacity];
    flags = new int[capacity];
    wrId = new long[capacity];
    localAddress = new long[capacity];
    length = new int[capacity];
    lkey = new int[capacity];
    remoteAddress = new long[capacity];
    rkey = new int[capacity];
    immediate = new int[capacity];
  }

  public int capacity() {
    return opcode.length;
  }

  /** {@code IBV_WR_RDMA_WRITE}: {@code length} bytes from local memory to the remote address. */
  public SendRequests write(int i, long wrId, long localAddress, int length, int lkey, long remoteAddress, int rkey, int flags) {
    return set(i, IBV_WR_RDMA_WRITE, wrId, localAddress, length, lkey, remoteAddress, rkey, 0, flags);
  }

  /** {@code IBV_WR_RDMA_WRITE_WITH_IMM}: a write whose 32-bit immediate consumes a receive at the target. */
  public SendRequests writeWithImmediate(int i, long wrId, long localAddress, int length, int lkey, long remoteAddress,
                                         int rkey, int immediate, int flags) {
    return set(i, IBV_WR_RDMA_WRITE_WITH_IMM, wrId, localAddress, length, lkey, remoteAddress, rkey, immediate, flags);
  }

  /** {@code IBV_WR_RDMA_READ}: {@code length} bytes from the remote address into local memory. */
  public SendRequests read(int i, long wrId, long localAddress, int length, int lkey, long remoteAddress, int rkey, int flags) {
    return set(i, IBV_WR_RDMA_READ, wrId, localAddress, length, lkey, remoteAddress, rkey, 0, flags);
  }

  /** {@code IBV_WR_SEND}: {@code length} bytes into the target's next posted receive. */
  public SendRequests send(int i, long wrId, long localAddress, int length, int lkey, int flags) {
    return set(i, IBV_WR_SEND, wrId, localAddress, length, lkey, 0, 0, 0, flags);
  }

  private SendRequests set(int i, int op, long id, long laddr, int len, int lk, long raddr, int rk, int imm, int fl) {
    if (len < 0) throw new IllegalArgumentException("work request length must be >= 0: " + len);
    opcode[i] = op;
    wrId[i] = id;
    localAddress[i] = laddr;
    length[i] = len;
    lkey[i] = lk;
    remoteAddress[i] = raddr;
    rkey[i] = rk;
    immediate[i] = imm;
    flags[i] = fl;
    return this;
  }

  public int opcode(int i) { return opcode[i]; }
  public int flags(int i) { return flags[i]; }
  public long wrId(int i) { return wrId[i]; }
  public long localAddress(int i) { return localAddress[i]; }
  public int length(int i) { return length[i]; }
  public int lkey(int i) { return lkey[i]; }
  public long remoteAddress(int i) { return remoteAddress[i]; }
  public int rkey(int i) { return rkey[i]; }
  public int immediate(int i) { return immediate[i]; }

  public boolean signaled(int i) {
    return (flags[i] & IBV_SEND_SIGNALED) != 0;
  }
}
