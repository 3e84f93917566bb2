package org.mori4j.transport.rdma.verbs;

import org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtrAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtsAttributes;

/**
 * A reliable-connected queue pair ({@code struct ibv_qp}), created in RESET and moved RESET -> INIT -> RTR ->
 * RTS with the attributes the IB specification requires for each step (the same records the FFM binding
 * takes), or to ERR, where every outstanding work request completes with {@code IBV_WC_WR_FLUSH_ERR}. A
 * transition the state machine does not allow, or a post in a state that does not allow it, throws a
 * {@link org.mori4j.natives.NativeException} with {@code EINVAL}; a post beyond the send queue's free slots
 * with {@code ENOMEM}. Post from one thread.
 */
public interface QueuePair extends AutoCloseable {
  int qpNumber();

  /** {@code IBV_QPS_*}. */
  int state();

  /** The send queue depth granted (at least what was asked). */
  int maxSendWr();

  void toInit(InitAttributes init);

  void toReadyToReceive(RtrAttributes rtr);

  void toReadyToSend(RtsAttributes rts);

  void toError();

  /**
   * Posts {@code count} send work requests starting at {@code from} as one chain. On failure the exception's
   * {@link PostException#posted()} says how many of them were posted before the one that failed.
   */
  void postSend(SendRequests requests, int from, int count);

  void postReceive(ReceiveRequests requests, int from, int count);

  @Override
  void close();
}
