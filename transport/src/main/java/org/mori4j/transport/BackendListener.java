package org.mori4j.transport;

/**
 * Events a backend reports to its owner (the engine): a peer went away, or an op should travel another way.
 * Called from backend threads.
 */
public interface BackendListener {
  void peerLost(String peerKey, TransportError error, String reason);

  /**
   * Asks the engine to carry {@code op} over another backend that reaches the same peer, because this one found
   * at run time that it cannot serve the pair ({@code why}; XGMI: an IPC handle that does not open in this
   * process). True when another backend took the op: it is then no longer this backend's, which must not touch
   * or complete it again. False when no other backend can: the caller fails the op.
   */
  default boolean reroute(TransferOp op, String why) {
    return false;
  }

  /**
   * Asks the engine to connect to {@code peerKey} again through this backend, because a path to it left service
   * ({@code why}; RDMA: a queue pair went to ERR). The engine runs the backend handshake again over the control
   * plane; the backend's {@link TransferBackend#connected} must say false until then.
   */
  default void reconnect(String peerKey, String why) {}

  /**
   * The backend launched a GPU kernel for a transfer (XGMI: one gather/scatter kernel per batch of two or more
   * blocks). Called on the backend's worker thread right after the launch, so it must only count: the engine's
   * metrics add it to a counter.
   */
  default void kernelLaunched() {}

  BackendListener NONE = (k, e, r) -> {};
}
