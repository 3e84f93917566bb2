package org.mori4j.io;

/**
 * MORI-IO's RDMA backend settings, with MORI's field names and defaults. The verbs provider (real NICs through
 * libibverbs, or the software device, which is emulation) and the device selection are not per backend: they
 * come from {@code mori4j.rdma.provider} ({@code MORI4J_RDMA_PROVIDER}) and {@code MORI_RDMA_DEVICES}.
 *
 * @param qpPerTransfer      queue pairs per remote engine and device; large transfers and batches are striped over them
 * @param postBatchSize      work requests handed to the NIC in one post call
 * @param numWorkerThreads   workers per device, each with its own completion queue, poller thread and queue pairs
 * @param pollCqMode         {@code POLLING} (busy, lowest latency) or {@code EVENT} (sleeps on the completion channel)
 * @param enableNotification whether this engine, as target, records inbound writes for {@code popInboundTransferStatus}
 */
public record RdmaBackendConfig(int qpPerTransfer, int postBatchSize, int numWorkerThreads, PollCqMode pollCqMode,
                                boolean enableNotification) implements BackendConfig {
  public RdmaBackendConfig {
    if (qpPerTransfer < 1) throw new IllegalArgumentException("qpPerTransfer must be >= 1: " + qpPerTransfer);
    if (postBatchSize < 1) throw new IllegalArgumentException("postBatchSize must be >= 1: " + postBatchSize);
    if (numWorkerThreads < 1) throw new IllegalArgumentException("numWorkerThreads must be >= 1: " + numWorkerThreads);
    if (pollCqMode == null) throw new IllegalArgumentException("pollCqMode must not be null");
  }

  /**
   * The values of {@code mori4j.rdma} in the loaded configuration; MORI's defaults unless overridden: one QP per
   * transfer, posts batched by 64, one worker, polling, notifications on.
   */
  public static RdmaBackendConfig defaults() {
    return org.mori4j.io.internal.RdmaOptions.load().defaults();
  }

  public RdmaBackendConfig withQpPerTransfer(int n) {
    return new RdmaBackendConfig(n, postBatchSize, numWorkerThreads, pollCqMode, enableNotification);
  }

  public RdmaBackendConfig withPollCqMode(PollCqMode mode) {
    return new RdmaBackendConfig(qpPerTransfer, postBatchSize, numWorkerThreads, mode, enableNotification);
  }

  public RdmaBackendConfig withEnableNotification(boolean on) {
    return new RdmaBackendConfig(qpPerTransfer, postBatchSize, numWorkerThreads, pollCqMode, on);
  }

  @Override
  public BackendType type() {
    return BackendType.RDMA;
  }
}
