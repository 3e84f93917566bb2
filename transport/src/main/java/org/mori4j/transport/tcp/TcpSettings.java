package org.mori4j.transport.tcp;

import java.time.Duration;

/**
 * Everything the TCP backend needs to know, already checked by the engine.
 *
 * @param bindHost           address the data listener binds (the engine's host)
 * @param bindPort           data listener port, 0 for a free one
 * @param connectionsPerPeer lanes opened to each peer
 * @param ioThreads          I/O loops
 * @param stripeThreshold    single transfers at least this large are split over all lanes of a peer
 * @param socketBufferBytes  SO_SNDBUF/SO_RCVBUF, 0 for the kernel's autotuning
 * @param peerTimeout        silence with transfers outstanding that loses the peer
 * @param connectTimeout     limit for connect plus hello
 * @param maxBatchEntries    most blocks in one request (bounds the target's entry buffer)
 * @param enableNotification whether inbound writes are recorded for the application
 * @param gpuStagingChunk    bytes of each pinned staging buffer for GPU memory (four per direction per connection; a transfer's piece size is at most this)
 * @param tls                TLS for every data connection, or null for plain TCP
 */
public record TcpSettings(String bindHost, int bindPort, int connectionsPerPeer, int ioThreads, long stripeThreshold,
                          int socketBufferBytes, Duration peerTimeout, Duration connectTimeout, int maxBatchEntries,
                          boolean enableNotification, int gpuStagingChunk, TcpTls tls) {
  /**
   * The largest {@code maxBatchEntries}: a target reads a request's block list into one buffer of 16 bytes per entry,
   * whose size must fit an {@code int}.
   */
  public static final int MAX_BATCH_ENTRIES = Integer.MAX_VALUE / WireFormat.ENTRY;

  public TcpSettings {
    if (maxBatchEntries < 1 || maxBatchEntries > MAX_BATCH_ENTRIES)
      throw new IllegalArgumentException("maxBatchEntries must be in 1.." + MAX_BATCH_ENTRIES + ": " + maxBatchEntries);
    if (gpuStagingChunk < 4096) throw new IllegalArgumentException("gpuStagingChunk must be >= 4096: " + gpuStagingChunk);
  }

  /** Plain TCP (no TLS). */
  public TcpSettings(String bindHost, int bindPort, int connectionsPerPeer, int ioThreads, long stripeThreshold,
                     int socketBufferBytes, Duration peerTimeout, Duration connectTimeout, int maxBatchEntries,
                     boolean enableNotification, int gpuStagingChunk) {
    this(bindHost, bindPort, connectionsPerPeer, ioThreads, stripeThreshold, socketBufferBytes, peerTimeout, connectTimeout,
        maxBatchEntries, enableNotification, gpuStagingChunk, null);
  }

  /** These settings with {@code tls} (null: plain TCP). */
  public TcpSettings withTls(TcpTls tls) {
    return new TcpSettings(bindHost, bindPort, connectionsPerPeer, ioThreads, stripeThreshold, socketBufferBytes, peerTimeout,
        connectTimeout, maxBatchEntries, enableNotification, gpuStagingChunk, tls);
  }
}
