package org.mori4j.transport;

/**
 * Why a backend failed a transfer, in the transport's own words; the engine maps each to its public
 * status code. The byte values travel in TCP error responses, so they must never be renumbered.
 */
public enum TransportError {
  INVALID_ARGS(1), NOT_FOUND(2), BAD_STATE(3), TRANSPORT(4), PEER_LOST(5), TIMEOUT(6),
  /** A copy between device memory and a staging buffer failed. */
  GPU_OP(7),
  /** An RDMA work request completed with an error status, or a verb failed (the message names which). */
  RDMA_OP(8);

  private final int wire;

  TransportError(int wire) {
    this.wire = wire;
  }

  public int wire() {
    return wire;
  }

  /** The error carried on the wire as {@code b}; unknown values read as {@link #TRANSPORT}. */
  public static TransportError fromWire(int b) {
    for (TransportError e : values()) if (e.wire == b) return e;
    return TRANSPORT;
  }
}
