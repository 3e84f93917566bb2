package org.mori4j.io;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * The state of one transfer (or one batch entry), returned at once by every transfer call and completed
 * later by the engine. A status is final once it leaves {@code IN_PROGRESS}; it always does: success, an
 * error code, or {@code ERR_PEER_LOST}/{@code ERR_TIMEOUT}/{@code ERR_BAD_STATE} when the peer or the engine
 * goes away. Calls that were refused for bad input return a status that has already failed.
 */
public interface TransferStatus {
  StatusCode code();

  /** Empty on success; on failure, what went wrong, naming the argument or peer concerned. */
  String message();

  boolean inProgress();

  boolean succeeded();

  boolean failed();

  /** Blocks until the transfer is done; returns this status. */
  TransferStatus await();

  /** Waits at most {@code timeout}; false if the transfer is still in progress then. */
  boolean await(Duration timeout);

  /** A stage completed with this status when the transfer is done (also on failure). */
  CompletionStage<TransferStatus> completion();

  /**
   * Cancels the transfer if it is still in progress: it then ends at once with {@code ERR_TIMEOUT} ("cancelled by
   * the caller"), and what its backend does later for it is dropped (a late completion is ignored; a TCP request that
   * has not left is not sent, and a READ's late data goes to scratch memory). Over TCP with host memory the caller may
   * reuse its buffer as soon as this returns true: no byte moves into or out of it any more. Over XGMI and RDMA a copy
   * or work request already launched cannot be stopped and may still move bytes until it completes (unseen); over TCP
   * with GPU memory, a staged copy already launched likewise. Bytes that already moved stay moved (a WRITE may have
   * landed in part or in full). Returns false when the transfer had already ended.
   */
  boolean cancel();
}
