package org.mori4j.transport;

/**
 * A backend's offer to let the thread that waits for an op finish it itself: TCP sends a small request of an idle
 * connection from the caller's thread and lets the caller read the response from the socket while it waits, so that
 * a round trip wakes no I/O thread and parks no caller. A backend sets {@link TransferOp#callerDrive} on such an op;
 * whoever waits calls {@link #drive}, and anyone who will not wait on the socket (a future, a listener, a poll of the
 * status, a cancellation) calls {@link #handOff} so that the backend's own threads finish the op.
 */
public interface CallerDrive {
  /**
   * The waiting thread: reads the op's response on this thread for at most {@code maxNanos} (capped by the backend's
   * own limit) and completes the op when it is there; when the time is up first, hands the op back to the backend's
   * threads as {@link #handOff} does. Returns when the op is complete or handed back.
   */
  void drive(TransferOp op, long maxNanos);

  /** Any thread: the op will not be driven by its caller; the backend's own threads finish it. Idempotent. */
  void handOff(TransferOp op);
}
