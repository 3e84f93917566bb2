package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.VerbsConstants.*;

import org.mori4j.transport.rdma.verbs.SendRequests;

/**
 * The send queue of a software queue pair: a ring of posted work requests, numbered by a 64-bit sequence.
 * {@code retired <= completed <= posted}: requests below {@code completed} have finished; their slots are free
 * only below {@code retired}. As on a NIC, a successful unsignaled request produces no completion and keeps its
 * slot until a later signaled request completes (or an error or flush retires it), so a poster that never
 * signals runs out of slots. Not thread-safe: every method runs under the owning queue pair's lock.
 */
final class SendQueue {
  final int capacity;
  private final int[] opcode;
  private final int[] flags;
  private final long[] wrId;
  private final long[] localAddress;
  private final int[] length;
  private final int[] lkey;
  private final long[] remoteAddress;
  private final int[] rkey;
  private final int[] immediate;
  long retired;
  long completed;
  long posted;

  SendQueue(int capacity) {
    this.capacity = capacity;
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

  int free() {
    return capacity - (int) (posted - retired);
  }

  private int slot(long seq) {
    return (int) (seq % capacity);
  }

  void put(SendRequests r, int i) {
    int s = slot(posted++);
    opcode[s] = r.opcode(i);
    flags[s] = r.flags(i);
    wrId[s] = r.wrId(i);
    localAddress[s] = r.localAddress(i);
    length[s] = r.length(i);
    lkey[s] = r.lkey(i);
    remoteAddress[s] = r.remoteAddress(i);
    rkey[s] = r.rkey(i);
    immediate[s] = r.immediate(i);
  }

  void copy(long seq, WorkRequest into) {
    int s = slot(seq);
    into.opcode = opcode[s];
    into.flags = flags[s];
    into.wrId = wrId[s];
    into.localAddress = localAddress[s];
    into.length = length[s];
    into.lkey = lkey[s];
    into.remoteAddress = remoteAddress[s];
    into.rkey = rkey[s];
    into.immediate = immediate[s];
  }

  /** Completes the next request successfully: a completion only if it was signaled. */
  void completeNext(SoftCompletionQueue cq, int qpn) {
    int s = slot(completed);
    if ((flags[s] & IBV_SEND_SIGNALED) != 0) {
      cq.push(wrId[s], IBV_WC_SUCCESS, wcOpcode(opcode[s]), length[s], 0, qpn, 0, false);
      retired = completed + 1;
    }
    completed++;
  }

  /** Completes the next request with an error status; error completions are generated signaled or not. */
  void failNext(SoftCompletionQueue cq, int qpn, int status) {
    int s = slot(completed);
    cq.push(wrId[s], status, wcOpcode(opcode[s]), 0, 0, qpn, 0, true);
    completed++;
    retired = completed;
  }

  /** Flushes every request not yet completed with {@code IBV_WC_WR_FLUSH_ERR}, in posting order. */
  void flush(SoftCompletionQueue cq, int qpn) {
    while (completed < posted) failNext(cq, qpn, IBV_WC_WR_FLUSH_ERR);
    retired = completed;
  }

  /** Drops every request without completions (a transition to RESET). */
  void clear() {
    completed = posted;
    retired = posted;
  }

  static int wcOpcode(int wrOpcode) {
    return switch (wrOpcode) {
      case IBV_WR_RDMA_READ -> IBV_WC_RDMA_READ;
      case IBV_WR_SEND, IBV_WR_SEND_WITH_IMM -> IBV_WC_SEND;
      default -> IBV_WC_RDMA_WRITE;
    };
  }
}
