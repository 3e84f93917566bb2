package org.mori4j.io.internal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.Locale;
import org.mori4j.io.PollCqMode;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.transport.rdma.RdmaSettings;

/**
 * The {@code mori4j.rdma} section: the provider ({@code MORI4J_RDMA_PROVIDER}), the device selection
 * ({@code MORI_RDMA_DEVICES}), MORI's {@link RdmaBackendConfig} defaults, and the queue sizes of this
 * implementation, turned into the transport's {@link RdmaSettings} for one backend.
 */
public record RdmaOptions(String provider, String devices, RdmaBackendConfig defaults, int sendQueueDepth, int completionQueueDepth,
                          int receiveDepth, long maxWorkRequestBytes, long stripeThreshold, java.time.Duration connectTimeout) {
  public static RdmaOptions load() {
    return from(ConfigFactory.load());
  }

  public static RdmaOptions from(Config root) {
    Config r = root.getConfig("mori4j.rdma");
    String mode = r.getString("poll-cq-mode").trim().toUpperCase(Locale.ROOT);
    PollCqMode poll;
    try {
      poll = PollCqMode.valueOf(mode);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("mori4j.rdma.poll-cq-mode (MORI_IO_POLL_CQ_MODE) must be POLLING or EVENT: '" + mode + "'");
    }
    RdmaBackendConfig defaults = new RdmaBackendConfig(r.getInt("qp-per-transfer"), r.getInt("post-batch-size"), r.getInt("num-worker-threads"),
        poll, r.getBoolean("enable-notification"));
    return new RdmaOptions(r.getString("provider"), r.getString("devices"), defaults, r.getInt("send-queue-depth"),
        r.getInt("completion-queue-depth"), r.getInt("receive-depth"), r.getBytes("max-work-request"), r.getBytes("stripe-threshold"),
        r.getDuration("connect-timeout"));
  }

  /**
   * The settings of a backend created with {@code config}; {@code handshakeTimeout} (mori4j.engine.handshake-timeout)
   * also bounds how long new transfers wait for a connection that replaces a broken one.
   */
  public RdmaSettings settings(RdmaBackendConfig config, java.time.Duration handshakeTimeout) {
    return new RdmaSettings(config.qpPerTransfer(), config.postBatchSize(), config.numWorkerThreads(), config.pollCqMode() == PollCqMode.EVENT,
        config.enableNotification(), devices, sendQueueDepth, completionQueueDepth, receiveDepth, maxWorkRequestBytes, stripeThreshold,
        connectTimeout, handshakeTimeout);
  }
}
