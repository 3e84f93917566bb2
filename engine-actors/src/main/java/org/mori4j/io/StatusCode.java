package org.mori4j.io;

/**
 * The state or outcome of a transfer, with MORI-IO's names. {@code INIT} and {@code IN_PROGRESS} are
 * the running states; {@code SUCCESS} and every {@code ERR_*} are final. {@code ERR_TRANSPORT},
 * {@code ERR_PEER_LOST} and {@code ERR_TIMEOUT} extend MORI's set: they say that the bytes may not have
 * moved because the path to the peer broke, not because the request was wrong.
 */
public enum StatusCode {
  SUCCESS, INIT, IN_PROGRESS, ERR_INVALID_ARGS, ERR_NOT_FOUND, ERR_RDMA_OP, ERR_BAD_STATE, ERR_GPU_OP,
  ERR_TRANSPORT, ERR_PEER_LOST, ERR_TIMEOUT;

  /** True for {@code SUCCESS} and every error code: the transfer will not change any more. */
  public boolean isFinal() {
    return this != INIT && this != IN_PROGRESS;
  }
}
