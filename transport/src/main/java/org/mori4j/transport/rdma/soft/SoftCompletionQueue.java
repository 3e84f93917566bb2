package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.Errno.*;
import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.Completions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A completion queue of the software RDMA device (emulation): a ring of preallocated entries that the device's
 * I/O thread (and a thread moving a queue pair to ERR) fill and one thread polls. More completions than it
 * holds overrun it as on a NIC: the entry is lost, the queue goes to error, every queue pair completing on it
 * goes to ERR, and {@link #poll} throws {@code EIO} from then on. An armed queue raises one event on its channel
 * at its next completion (solicited-only arming: the next solicited receive or error completion).
 */
final class SoftCompletionQueue implements CompletionQueue {
  private static final Logger log = LoggerFactory.getLogger(SoftCompletionQueue.class);

  final SoftDevice device;
  private final SoftCompletionChannel channel;
  private final int capacity;
  private final long[] wrId;
  private final int[] status;
  private final int[] opcode;
  private final int[] byteLength;
  private final int[] immediate;
  private final int[] qpNumber;
  private final int[] wcFlags;
  private int head;
  private int count;
  private boolean overrun;
  private boolean armed;
  private boolean armedSolicitedOnly;
  private volatile boolean closed;
  private final Set<SoftQueuePair> queuePairs = ConcurrentHashMap.newKeySet();

  SoftCompletionQueue(SoftDevice device, int capacity, SoftCompletionChannel channel) {
    this.device = device;
    this.capacity = capacity;
    this.channel = channel;
    wrId = new long[capacity];
    status = new int[capacity];
    opcode = new int[capacity];
    byteLength = new int[capacity];
    immediate = new int[capacity];
    qpNumber = new int[capacity];
    wcFlags = new int[capacity];
    if (channel != null) channel.attach();
  }

  @Override
  public int capacity() {
    return capacity;
  }

  boolean closed() {
    return closed;
  }

  void attach(SoftQueuePair qp) {
    queuePairs.add(qp);
  }

  void detach(SoftQueuePair qp) {
    queuePairs.remove(qp);
  }

  /** Adds one completion; {@code solicited} marks a receive of a solicited request (errors always count as such). */
  void push(long id, int st, int op, int length, int imm, int qpn, int flags, boolean solicited) {
    boolean raise = false;
    synchronized (this) {
      if (overrun || closed) return;
      if (count == capacity) {
        overrun = true;
        log.warn("software RDMA (emulation) {}: CQ of {} entries overran (a completion of QP {} arrived while it was full);"
            + " the CQ is in error and its {} queue pairs go to ERR", device.label, capacity, SoftErrors.hex(qpn), queuePairs.size());
        for (SoftQueuePair qp : queuePairs) qp.markFatal();
        return;
      }
      int i = head + count;
      if (i >= capacity) i -= capacity;
      wrId[i] = id;
      status[i] = st;
      opcode[i] = op;
      byteLength[i] = length;
      immediate[i] = imm;
      qpNumber[i] = qpn;
      wcFlags[i] = flags;
      count++;
      if (armed && (!armedSolicitedOnly || solicited || st != IBV_WC_SUCCESS)) {
        armed = false;
        raise = true;
      }
    }
    if (raise) channel.raise();
  }

  @Override
  public synchronized int poll(Completions into) {
    if (closed) throw SoftErrors.error("ibv_poll_cq", EINVAL, "CQ is destroyed");
    if (overrun) {
      throw SoftErrors.error("ibv_poll_cq", EIO, "CQ overrun: more than its " + capacity
          + " entries completed before they were polled; the CQ is in error");
    }
    int n = Math.min(count, into.capacity());
    for (int k = 0; k < n; k++) {
      into.set(k, wrId[head], status[head], opcode[head], byteLength[head], immediate[head], qpNumber[head], wcFlags[head], 0);
      if (++head == capacity) head = 0;
    }
    count -= n;
    return n;
  }

  @Override
  public synchronized void requestNotify(boolean solicitedOnly) {
    if (closed) throw SoftErrors.error("ibv_req_notify_cq", EINVAL, "CQ is destroyed");
    if (channel == null) throw SoftErrors.error("ibv_req_notify_cq", EINVAL, "CQ was created without a completion channel");
    armed = true;
    armedSolicitedOnly = solicitedOnly;
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) return;
      if (!queuePairs.isEmpty()) {
        throw SoftErrors.error("ibv_destroy_cq", EBUSY, queuePairs.size() + " queue pairs still complete on this CQ; close them first");
      }
      closed = true;
    }
    if (channel != null) channel.detach();
    device.forget(this);
  }
}
