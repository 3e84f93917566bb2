package org.mori4j.transport.rdma.soft;

import java.time.Duration;

/**
 * Tunables of the software RDMA provider (emulation). {@code minimumRetryBudget} is the least time a requester
 * waits without any answer from its peer before it gives up with {@code IBV_WC_RETRY_EXC_ERR}: a NIC's budget is
 * the queue pair's ACK timeout (4.096 us x 2^timeout) times (retry count + 1), about 0.5 s for the usual
 * timeout 14 and 7 retries, which a garbage-collection pause or a busy CI core can exceed on a JVM; tests set it
 * to zero to get the NIC's figure. {@code stagingChunkBytes} is the size of the staging buffers that carry GPU
 * memory between the device and the socket.
 */
public record SoftSettings(Duration minimumRetryBudget, int stagingChunkBytes) {
  public SoftSettings {
    if (minimumRetryBudget == null || minimumRetryBudget.isNegative()) {
      throw new IllegalArgumentException("minimumRetryBudget must be >= 0: " + minimumRetryBudget);
    }
    if (stagingChunkBytes < 4096) throw new IllegalArgumentException("stagingChunkBytes must be >= 4096: " + stagingChunkBytes);
  }

  /** A 2 s floor under the retry budget and 4 MiB staging chunks. */
  public static SoftSettings defaults() {
    return new SoftSettings(Duration.ofSeconds(2), 4 << 20);
  }

  public SoftSettings withMinimumRetryBudget(Duration budget) {
    return new SoftSettings(budget, stagingChunkBytes);
  }
}
