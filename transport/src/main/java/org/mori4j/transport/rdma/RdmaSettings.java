package org.mori4j.transport.rdma;

import java.time.Duration;

/**
 * What the RDMA backend runs with: MORI's {@code RdmaBackendConfig} fields ({@code qpPerTransfer},
 * {@code postBatchSize}, {@code numWorkerThreads}, the poll mode, {@code enableNotification}) and the queue
 * sizes and device selection of this implementation.
 *
 * @param qpPerTransfer      queue pairs per remote engine and device; large transfers and batches are striped over them
 * @param postBatchSize      work requests handed to one post call (one chain)
 * @param numWorkerThreads   workers per device, each with its own completion queue and thread; peers are spread over them
 * @param eventMode          true: an idle worker sleeps on the completion channel (MORI's EVENT); false: POLLING
 * @param enableNotification whether this engine, as target, records inbound writes for {@code popInboundTransferStatus}
 * @param devices            {@code MORI_RDMA_DEVICES}: empty for all, {@code mlx5_0,mlx5_1} to include, {@code ^mlx5_2} to exclude
 * @param sendQueueDepth     work requests outstanding per queue pair (a power of two)
 * @param completionQueueDepth entries of each worker's completion queue
 * @param receiveDepth       notification receives kept posted per queue pair on the target side
 * @param maxWorkRequestBytes largest payload of one work request; larger blocks are split
 * @param stripeThreshold    single transfers at least this large are split over the queue pairs of their peer
 * @param connectTimeout     how long the queue pairs of a handshake wait in INIT for its reply; then they are closed
 *                           and a later reply is refused
 * @param replaceTimeout     how long new ops wait for the new connection that replaces one whose queue pair left
 *                           service (the engine's handshake timeout); then they fail and the peer is lost
 */
public record RdmaSettings(int qpPerTransfer, int postBatchSize, int numWorkerThreads, boolean eventMode, boolean enableNotification,
                           String devices, int sendQueueDepth, int completionQueueDepth, int receiveDepth, long maxWorkRequestBytes,
                           long stripeThreshold, Duration connectTimeout, Duration replaceTimeout) {
  /** With the engine's default handshake timeout (10 s) as the replacement's limit. */
  public RdmaSettings(int qpPerTransfer, int postBatchSize, int numWorkerThreads, boolean eventMode, boolean enableNotification,
                      String devices, int sendQueueDepth, int completionQueueDepth, int receiveDepth, long maxWorkRequestBytes,
                      long stripeThreshold, Duration connectTimeout) {
    this(qpPerTransfer, postBatchSize, numWorkerThreads, eventMode, enableNotification, devices, sendQueueDepth, completionQueueDepth,
        receiveDepth, maxWorkRequestBytes, stripeThreshold, connectTimeout, Duration.ofSeconds(10));
  }

  /** Upper limits of {@code qpPerTransfer}, {@code numWorkerThreads} and {@code maxWorkRequestBytes} (the engine's settings check names the key with them). */
  public static final int MAX_QP_PER_TRANSFER = 64, MAX_WORKER_THREADS = 64;
  public static final long MAX_WORK_REQUEST_BYTES = 1L << 30;

  public RdmaSettings {
    if (qpPerTransfer < 1 || qpPerTransfer > MAX_QP_PER_TRANSFER) throw new IllegalArgumentException("qpPerTransfer must be in 1..64: " + qpPerTransfer);
    if (postBatchSize < 1) throw new IllegalArgumentException("postBatchSize must be >= 1: " + postBatchSize);
    if (numWorkerThreads < 1 || numWorkerThreads > MAX_WORKER_THREADS)
      throw new IllegalArgumentException("numWorkerThreads must be in 1..64: " + numWorkerThreads);
    if (sendQueueDepth < 4 || Integer.bitCount(sendQueueDepth) != 1)
      throw new IllegalArgumentException("sendQueueDepth must be a power of two >= 4: " + sendQueueDepth);
    if (receiveDepth < 1) throw new IllegalArgumentException("receiveDepth must be >= 1: " + receiveDepth);
    if (completionQueueDepth < sendQueueDepth + receiveDepth)
      throw new IllegalArgumentException("completionQueueDepth " + completionQueueDepth + " must hold at least one queue pair's "
          + "send and receive completions (" + (sendQueueDepth + receiveDepth) + ")");
    if (maxWorkRequestBytes < 1 || maxWorkRequestBytes > MAX_WORK_REQUEST_BYTES)
      throw new IllegalArgumentException("maxWorkRequestBytes must be in 1..1 GiB: " + maxWorkRequestBytes);
    if (stripeThreshold < 1) throw new IllegalArgumentException("stripeThreshold must be >= 1: " + stripeThreshold);
    if (devices == null) devices = "";
    if (connectTimeout == null || connectTimeout.isNegative() || connectTimeout.isZero())
      throw new IllegalArgumentException("connectTimeout must be positive: " + connectTimeout);
    if (replaceTimeout == null || replaceTimeout.isNegative() || replaceTimeout.isZero())
      throw new IllegalArgumentException("replaceTimeout must be positive: " + replaceTimeout);
  }

  /** MORI's defaults for the config fields, with this implementation's queue sizes. */
  public static RdmaSettings defaults() {
    return new RdmaSettings(1, 64, 1, false, true, "", 1024, 16384, 1024, 1L << 30, 4L << 20, Duration.ofSeconds(5));
  }
}
