package org.mori4j.transport.rdma.ibv;

import static org.mori4j.natives.verbs.VerbsConstants.IBV_WR_RDMA_READ;
import static org.mori4j.natives.verbs.VerbsConstants.IBV_WR_RDMA_WRITE;
import static org.mori4j.natives.verbs.VerbsConstants.IBV_WR_RDMA_WRITE_WITH_IMM;
import static org.mori4j.natives.verbs.VerbsConstants.IBV_WR_SEND;

import java.lang.foreign.Arena;
import java.util.concurrent.atomic.AtomicBoolean;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.natives.verbs.IbVerbs;
import org.mori4j.natives.verbs.ReceiveWorkRequests;
import org.mori4j.natives.verbs.SendWorkRequests;
import org.mori4j.natives.verbs.VerbsPostException;
import org.mori4j.natives.verbs.VerbsQueuePair;
import org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtrAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtsAttributes;
import org.mori4j.transport.rdma.verbs.PostException;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.ReceiveRequests;
import org.mori4j.transport.rdma.verbs.SendRequests;

/**
 * A reliable-connected queue pair ({@code ibv_qp}, owned). State transitions are {@code ibv_modify_qp} with
 * the binding's masks; posts copy the requested range of the Java request arrays into native
 * {@code ibv_send_wr}/{@code ibv_recv_wr} chains this queue pair keeps (as deep as the queues the provider
 * granted, linked once) and post them with one call of the provider's {@code post_send}/{@code post_recv},
 * so posting allocates nothing. A chain longer than the queue is refused before anything is posted
 * ({@code ENOMEM}, none posted); a provider failure becomes a {@link PostException} whose {@code posted()}
 * is the index of {@code bad_wr}. Post from one thread.
 */
final class IbvQueuePair implements QueuePair {
  private final VerbsQueuePair qp;
  private final Arena arena = Arena.ofShared();
  private final SendWorkRequests sends;
  /** Null when the queue pair has no receive queue (maxReceiveWr 0). */
  private final ReceiveWorkRequests receives;
  private final AtomicBoolean closed = new AtomicBoolean();

  IbvQueuePair(VerbsQueuePair qp) {
    this.qp = qp;
    VerbsQueuePair.Capabilities caps = qp.capabilities();
    try {
      this.sends = new SendWorkRequests(arena, caps.maxSendWr());
      this.receives = caps.maxReceiveWr() > 0 ? new ReceiveWorkRequests(arena, caps.maxReceiveWr()) : null;
    } catch (RuntimeException e) {
      arena.close();
      throw e;
    }
  }

  @Override
  public int qpNumber() {
    return qp.qpNumber();
  }

  @Override
  public int state() {
    return qp.state();
  }

  @Override
  public int maxSendWr() {
    return qp.capabilities().maxSendWr();
  }

  @Override
  public void toInit(InitAttributes init) {
    qp.toInit(init);
  }

  @Override
  public void toReadyToReceive(RtrAttributes rtr) {
    qp.toReadyToReceive(rtr);
  }

  @Override
  public void toReadyToSend(RtsAttributes rts) {
    qp.toReadyToSend(rts);
  }

  @Override
  public void toError() {
    qp.toError();
  }

  @Override
  public void postSend(SendRequests requests, int from, int count) {
    checkRange("send", requests.capacity(), from, count);
    if (count == 0) return;
    if (count > sends.capacity()) throw tooLong("ibv_post_send", count, sends.capacity());
    copySends(requests, from, count, sends);
    try {
      qp.postSend(sends, count);
    } catch (VerbsPostException e) {
      throw postException(e);
    }
  }

  @Override
  public void postReceive(ReceiveRequests requests, int from, int count) {
    checkRange("receive", requests.capacity(), from, count);
    if (count == 0) return;
    int depth = receives == null ? 0 : receives.capacity();
    if (count > depth) throw tooLong("ibv_post_recv", count, depth);
    copyReceives(requests, from, count, receives);
    try {
      qp.postReceive(receives, count);
    } catch (VerbsPostException e) {
      throw postException(e);
    }
  }

  /**
   * Copies send requests {@code from..from+count-1} into native requests {@code 0..count-1}: opcode, flags,
   * wr_id, the one SGE (address, length, lkey; none for length 0), remote address and rkey, and for
   * WRITE_WITH_IMM the immediate, which {@link SendWorkRequests} stores in network byte order.
   */
  static void copySends(SendRequests from, int start, int count, SendWorkRequests into) {
    for (int k = 0; k < count; k++) {
      int i = start + k;
      int opcode = from.opcode(i);
      switch (opcode) {
        case IBV_WR_RDMA_WRITE -> into.rdmaWrite(k, from.wrId(i), from.localAddress(i), from.length(i), from.lkey(i),
            from.remoteAddress(i), from.rkey(i), from.flags(i));
        case IBV_WR_RDMA_WRITE_WITH_IMM -> into.rdmaWriteWithImmediate(k, from.wrId(i), from.localAddress(i),
            from.length(i), from.lkey(i), from.remoteAddress(i), from.rkey(i), from.flags(i), from.immediate(i));
        case IBV_WR_RDMA_READ -> into.rdmaRead(k, from.wrId(i), from.localAddress(i), from.length(i), from.lkey(i),
            from.remoteAddress(i), from.rkey(i), from.flags(i));
        case IBV_WR_SEND -> into.send(k, from.wrId(i), from.localAddress(i), from.length(i), from.lkey(i),
            from.flags(i));
        default -> throw new IllegalArgumentException("send request " + i + " has opcode " + opcode
            + ", which the ibverbs provider does not post (RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ, SEND)");
      }
    }
  }

  /** Copies receive requests {@code from..from+count-1} into native requests {@code 0..count-1}. */
  static void copyReceives(ReceiveRequests from, int start, int count, ReceiveWorkRequests into) {
    for (int k = 0; k < count; k++) {
      int i = start + k;
      into.receive(k, from.wrId(i), from.address(i), from.length(i), from.lkey(i));
    }
  }

  /**
   * The provider's failure as the interface's {@link PostException}: requests before {@code bad_wr} were
   * posted. When {@code bad_wr} named none of the chain the count is unknowable and reported as 0.
   */
  static PostException postException(VerbsPostException e) {
    int posted = Math.max(0, e.failedIndex());
    String message = e.failedIndex() < 0
        ? e.getMessage() + "; bad_wr is not a request of the chain, so none is counted as posted"
        : e.getMessage();
    return new PostException(e.library(), e.function(), e.code(), e.codeName(), posted, message);
  }

  /** A chain longer than the queue: refused before the provider sees it, so nothing of it is posted. */
  static PostException tooLong(String function, int count, int depth) {
    return new PostException(IbVerbs.LIBRARY, function, Errno.ENOMEM, "ENOMEM", 0, function + " refused: a chain of "
        + count + " requests is longer than the queue's " + depth + " slots; nothing was posted");
  }

  static void checkRange(String what, int capacity, int from, int count) {
    if (from < 0 || count < 0 || from > capacity - count) {
      throw new IndexOutOfBoundsException(what + " requests from " + from + " count " + count + " of " + capacity);
    }
  }

  /**
   * Frees the native request arrays, then destroys the queue pair ({@code ibv_destroy_qp}). The arrays go
   * first: that fails while a post is in flight on another thread, before anything is destroyed. Requests
   * already posted need no Java memory (the provider copied them into its queue at post time).
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) return;
    try {
      arena.close();
    } catch (IllegalStateException e) {
      closed.set(false);
      throw new IllegalStateException("queue pair " + qp + " is posting on another thread", e);
    }
    qp.close();
  }

  @Override
  public String toString() {
    return "ibverbs " + qp;
  }
}
