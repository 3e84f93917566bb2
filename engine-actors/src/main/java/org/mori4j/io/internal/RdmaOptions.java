package org.mori4j.io.internal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.Locale;
import org.mori4j.io.PollCqMode;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.io.internal.SettingReads.Section;
import org.mori4j.transport.rdma.RdmaSettings;

/**
 * The {@code mori4j.rdma} section: the provider ({@code MORI4J_RDMA_PROVIDER}), the device selection
 * ({@code MORI_RDMA_DEVICES}), MORI's {@link RdmaBackendConfig} defaults, and the queue sizes of this
 * implementation, turned into the transport's {@link RdmaSettings} for one backend. {@link #from} checks every key
 * (and {@code connect-timeout} against {@code mori4j.engine.handshake-timeout}) and refuses a bad one with a
 * {@link SettingReads.Refused} (an {@link IllegalArgumentException}) naming the key, its environment variable where
 * it has one, and the value; the engine calls it at start ({@link EngineStart}), so a bad value fails there, as
 * {@code ERR_INVALID_ARGS}, and not at the first {@code createBackend(RDMA)}.
 */
public record RdmaOptions(String provider, String devices, RdmaBackendConfig defaults, int sendQueueDepth, int completionQueueDepth,
                          int receiveDepth, long maxWorkRequestBytes, long stripeThreshold, Duration connectTimeout) {
  public static RdmaOptions load() {
    return from(ConfigFactory.load());
  }

  public static RdmaOptions from(Config root) {
    Section r = SettingReads.section(root, "mori4j.rdma");
    String provider = r.getString("provider").trim().toLowerCase(Locale.ROOT);
    if (!provider.equals("auto") && !provider.equals("ibverbs") && !provider.equals("software"))
      throw r.refused("provider", "must be auto, ibverbs or software");
    String devices = r.getString("devices");
    checkDevices(r, devices);
    String mode = r.getString("poll-cq-mode").trim().toUpperCase(Locale.ROOT);
    PollCqMode poll;
    try {
      poll = PollCqMode.valueOf(mode);
    } catch (IllegalArgumentException e) {
      throw r.refused("poll-cq-mode", "must be POLLING or EVENT", e);
    }
    int qps = r.intIn("qp-per-transfer", 1, RdmaSettings.MAX_QP_PER_TRANSFER);
    int postBatch = r.intIn("post-batch-size", 1, Integer.MAX_VALUE);
    int workers = r.intIn("num-worker-threads", 1, RdmaSettings.MAX_WORKER_THREADS);
    boolean notify = r.getBoolean("enable-notification");
    int sendDepth = r.intIn("send-queue-depth", 4, Integer.MAX_VALUE);
    if (Integer.bitCount(sendDepth) != 1) throw r.refused("send-queue-depth", "must be a power of two");
    int receiveDepth = r.intIn("receive-depth", 1, Integer.MAX_VALUE);
    int cqDepth = r.intIn("completion-queue-depth", 1, Integer.MAX_VALUE);
    if ((long) cqDepth < (long) sendDepth + receiveDepth)
      throw r.refused("completion-queue-depth", "must hold at least one queue pair's send and receive completions (send-queue-depth "
          + sendDepth + " + receive-depth " + receiveDepth + ")");
    long maxWr = r.getBytes("max-work-request");
    if (maxWr < 1 || maxWr > RdmaSettings.MAX_WORK_REQUEST_BYTES) throw r.refused("max-work-request", "must be 1 byte..1GiB");
    long stripe = r.getBytes("stripe-threshold");
    if (stripe < 1) throw r.refused("stripe-threshold", "must be at least 1 byte");
    Duration connect = r.positiveDuration("connect-timeout");
    connect = checkAgainstHandshake(root, r, connect);
    return new RdmaOptions(provider, devices, new RdmaBackendConfig(qps, postBatch, workers, poll, notify), sendDepth, cqDepth,
        receiveDepth, maxWr, stripe, connect);
  }

  /**
   * The queue pairs of an RDMA handshake are closed {@code connect-timeout} after its request, and the reply can only
   * arrive through the engine's handshake, which gives up after {@code handshake-timeout}: a longer connect-timeout
   * would never let a slow peer connect (its reply is not waited for) and only keeps dead queue pairs longer. Shorter
   * is allowed (the default, 5 s against 10 s): a reply later than connect-timeout is refused with a message naming
   * the setting. Only a connect-timeout the application set is refused: the default follows a handshake-timeout
   * lowered below it, so an engine that never uses RDMA does not fail to start over a setting it never touched.
   */
  private static Duration checkAgainstHandshake(Config root, Section r, Duration connect) {
    Section engine = SettingReads.section(root, "mori4j.engine");
    Duration handshake = engine.getDuration("handshake-timeout");
    if (connect.compareTo(handshake) <= 0) return connect;
    if ("reference.conf".equals(r.config().getValue("connect-timeout").origin().resource())) return handshake;
    throw r.refused("connect-timeout", "must not exceed " + SettingReads.name(engine.path("handshake-timeout")) + " = '"
        + engine.config().getValue("handshake-timeout").unwrapped() + "': the engine stops waiting for the RDMA handshake's reply at"
        + " handshake-timeout, so a longer connect-timeout cannot let a slower peer connect");
  }

  /** MORI_RDMA_DEVICES' form: empty, or names separated by commas, all after one leading '^' to exclude them. */
  private static void checkDevices(Section r, String spec) {
    String s = spec.trim();
    if (s.isEmpty()) return;
    if (s.startsWith("^")) s = s.substring(1);
    for (String n : s.split(",", -1))
      if (n.trim().isEmpty()) throw r.refused("devices", "has an empty device name");
  }

  /**
   * The settings of a backend created with {@code config}; {@code handshakeTimeout} (mori4j.engine.handshake-timeout)
   * also bounds how long new transfers wait for a connection that replaces a broken one.
   */
  public RdmaSettings settings(RdmaBackendConfig config, Duration handshakeTimeout) {
    return new RdmaSettings(config.qpPerTransfer(), config.postBatchSize(), config.numWorkerThreads(), config.pollCqMode() == PollCqMode.EVENT,
        config.enableNotification(), devices, sendQueueDepth, completionQueueDepth, receiveDepth, maxWorkRequestBytes, stripeThreshold,
        connectTimeout, handshakeTimeout);
  }
}
