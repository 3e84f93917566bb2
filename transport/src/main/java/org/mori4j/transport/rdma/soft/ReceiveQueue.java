package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.VerbsConstants.*;

import org.mori4j.transport.rdma.verbs.ReceiveRequests;

/**
 * The receive queue of a software queue pair: posted receives in order; a SEND or WRITE_WITH_IMM takes the
 * oldest ({@link #take}) and completes it when its payload has landed. {@code head <= taken <= tail}; slots are
 * free below {@code head}. Not thread-safe: every method runs under the owning queue pair's lock.
 */
final class ReceiveQueue {
  final int capacity;
  private final long[] wrId;
  private final long[] address;
  private final int[] length;
  private final int[] lkey;
  private long head;
  private long taken;
  private long tail;

  ReceiveQueue(int capacity) {
    this.capacity = capacity;
    wrId = new long[capacity];
    address = new long[capacity];
    length = new int[capacity];
    lkey = new int[capacity];
  }

  int free() {
    return capacity - (int) (tail - head);
  }

  void put(ReceiveRequests r, int i) {
    int s = (int) (tail++ % capacity);
    wrId[s] = r.wrId(i);
    address[s] = r.address(i);
    length[s] = r.length(i);
    lkey[s] = r.lkey(i);
  }

  /** Takes the oldest untaken receive into {@code into}; its sequence number, or -1 when none is posted. */
  long take(ReceiveSlot into) {
    if (taken == tail) return -1;
    int s = (int) (taken % capacity);
    into.wrId = wrId[s];
    into.address = address[s];
    into.length = length[s];
    into.lkey = lkey[s];
    return taken++;
  }

  /** Completes taken receive {@code seq}; ignored when a flush or reset already ended it. */
  void complete(long seq, SoftCompletionQueue cq, int qpn, int status, int opcode, int byteLength, int imm, int flags,
                boolean solicited) {
    if (seq < head) return;
    cq.push(wrId[(int) (seq % capacity)], status, opcode, byteLength, imm, qpn, flags, solicited || status != IBV_WC_SUCCESS);
    head = seq + 1;
  }

  void flush(SoftCompletionQueue cq, int qpn) {
    for (; head < tail; head++) cq.push(wrId[(int) (head % capacity)], IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, 0, qpn, 0, true);
    taken = tail;
  }

  void clear() {
    head = tail;
    taken = tail;
  }

  /** One receive as the responder holds it while its payload arrives. */
  static final class ReceiveSlot {
    long wrId;
    long address;
    int length;
    int lkey;
  }
}
