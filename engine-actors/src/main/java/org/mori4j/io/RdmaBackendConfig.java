package org.mori4j.io;

/**
 * MORI-IO's RDMA backend settings. The RDMA backend is not in this build yet: creating it fails with a
 * clear {@link IoEngineException}; the record exists so that configurations keep their shape.
 */
public record RdmaBackendConfig(int qpPerTransfer, int postBatchSize, int numWorkerThreads, PollCqMode pollCqMode,
                                boolean enableNotification) implements BackendConfig {
  public RdmaBackendConfig {
    if (qpPerTransfer < 1) throw new IllegalArgumentException("qpPerTransfer must be >= 1: " + qpPerTransfer);
    if (postBatchSize < 1) throw new IllegalArgumentException("postBatchSize must be >= 1: " + postBatchSize);
    if (numWorkerThreads < 1) throw new IllegalArgumentException("numWorkerThreads must be >= 1: " + numWorkerThreads);
    if (pollCqMode == null) throw new IllegalArgumentException("pollCqMode must not be null");
  }

  /** MORI's defaults: one QP per transfer, posts batched by 64, one worker, polling, notifications on. */
  public static RdmaBackendConfig defaults() {
    return new RdmaBackendConfig(1, 64, 1, PollCqMode.POLLING, true);
  }

  @Override
  public BackendType type() {
    return BackendType.RDMA;
  }
}
