package org.mori4j.transport.xgmi;

import java.util.List;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The batch entries of one batch-of-batches call, queued to the XGMI worker as one item so that they are issued
 * together, in the queue's order, and those between the same two devices in the same direction share kernel
 * launches ({@link FusedIssue}). It is only a carrier: each member keeps its own outcome, and the group never goes
 * on the GPU itself. Members leave the group as they are issued, failed or handed on; a group that has to wait for an
 * event slot keeps the rest. Failing the group (the worker closing with it queued) fails the members still in it.
 * Worker thread only, once queued.
 */
final class FusedBatch extends TransferOp {
  private final TransferOp[] members;
  private int left;

  FusedBatch(List<? extends TransferOp> ops) {
    this.members = ops.toArray(new TransferOp[0]);
    this.left = members.length;
    TransferOp first = members[0];
    // the queue and the worker's first looks treat it as an op of its first member's pair
    initSingle(first.kind(), first.local(), 0, first.peer(), first.remoteId(), first.remoteAccessKey(), first.remoteAddress(), 0,
        0, first.uid());
  }

  /** Members the group was made with. */
  int size() {
    return members.length;
  }

  /** Member {@code i} in call order; null once it has left the group. */
  TransferOp member(int i) {
    return members[i];
  }

  /** Member {@code i} was issued, failed or handed on: it is no longer the group's. */
  void take(int i) {
    if (members[i] != null) {
      members[i] = null;
      left--;
    }
  }

  /** Whether every member has left. */
  boolean empty() {
    return left == 0;
  }

  /** A group never goes on the GPU as itself: its members are completed one by one. */
  @Override
  public void transferSucceeded() {
    throw new IllegalStateException("a fused batch is completed through its members");
  }

  @Override
  public void transferFailed(TransportError error, String message) {
    for (int i = 0; i < members.length; i++) {
      TransferOp m = members[i];
      if (m == null) continue;
      take(i);
      m.transferFailed(error, message);
    }
  }
}
