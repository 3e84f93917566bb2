package org.mori4j.io.internal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.Locale;
import org.mori4j.io.PollCqMode;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.transport.rdma.RdmaSettings;

/**
 * The {@code mori4j.rdma} section: the provider ({@code MORI4J_RDMA_PROVIDER}), the device selection
 * ({@code MORI_RDMA_DEVICES}), MORI's {@link RdmaBackendConfig} defaults, and the queue sizes of this
 * implementation, turned into the transport's {@link RdmaSettings} for one backend. {@link #from} checks every key
 * (and {@code connect-timeout} against {@code mori4j.engine.handshake-timeout}) and refuses a bad one with an
 * {@link IllegalArgumentException} naming the key, its environment variable where it has one, and the value; the
 * engine calls it at start ({@link EngineStart}), so a bad value fails there and not at the first
 * {@code createBackend(RDMA)}.
 */
public record RdmaOptions(String provider, String devices, RdmaBackendConfig defaults, int sendQueueDepth, int completionQueueDepth,
                          int receiveDepth, long maxWorkRequestBytes, long stripeThreshold, Duration connectTimeout) {
  public static RdmaOptions load() {
    return from(ConfigFactory.load());
  }

  public static RdmaOptions from(Config root) {
    Config r = root.getConfig("mori4j.rdma");
    String provider = read(r, "provider", "MORI4J_RDMA_PROVIDER", () -> r.getString("provider")).trim().toLowerCase(Locale.ROOT);
    if (!provider.equals("auto") && !provider.equals("ibverbs") && !provider.equals("software"))
      throw bad("provider", "MORI4J_RDMA_PROVIDER", r, "must be auto, ibverbs or software");
    String devices = read(r, "devices", "MORI_RDMA_DEVICES", () -> r.getString("devices"));
    checkDevices(r, devices);
    String mode = read(r, "poll-cq-mode", "MORI_IO_POLL_CQ_MODE", () -> r.getString("poll-cq-mode")).trim().toUpperCase(Locale.ROOT);
    PollCqMode poll;
    try {
      poll = PollCqMode.valueOf(mode);
    } catch (IllegalArgumentException e) {
      throw bad("poll-cq-mode", "MORI_IO_POLL_CQ_MODE", r, "must be POLLING or EVENT");
    }
    int qps = between(r, "qp-per-transfer", "MORI_IO_QP_PER_TRANSFER", 1, RdmaSettings.MAX_QP_PER_TRANSFER);
    int postBatch = between(r, "post-batch-size", "MORI_IO_POST_BATCH_SIZE", 1, Integer.MAX_VALUE);
    int workers = between(r, "num-worker-threads", "MORI_IO_NUM_WORKER_THREADS", 1, RdmaSettings.MAX_WORKER_THREADS);
    boolean notify = read(r, "enable-notification", "MORI_IO_ENABLE_NOTIFICATION", () -> r.getBoolean("enable-notification"));
    int sendDepth = between(r, "send-queue-depth", null, 4, Integer.MAX_VALUE);
    if (Integer.bitCount(sendDepth) != 1) throw bad("send-queue-depth", null, r, "must be a power of two");
    int receiveDepth = between(r, "receive-depth", null, 1, Integer.MAX_VALUE);
    int cqDepth = between(r, "completion-queue-depth", null, 1, Integer.MAX_VALUE);
    if ((long) cqDepth < (long) sendDepth + receiveDepth)
      throw bad("completion-queue-depth", null, r, "must hold at least one queue pair's send and receive completions (send-queue-depth "
          + sendDepth + " + receive-depth " + receiveDepth + ")");
    long maxWr = bytes(r, "max-work-request", 1, RdmaSettings.MAX_WORK_REQUEST_BYTES);
    long stripe = bytes(r, "stripe-threshold", 1, Long.MAX_VALUE);
    Duration connect = read(r, "connect-timeout", "MORI4J_RDMA_CONNECT_TIMEOUT", () -> r.getDuration("connect-timeout"));
    if (connect.isNegative() || connect.isZero()) throw bad("connect-timeout", "MORI4J_RDMA_CONNECT_TIMEOUT", r, "must be positive");
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
  private static Duration checkAgainstHandshake(Config root, Config r, Duration connect) {
    Duration handshake = root.getDuration("mori4j.engine.handshake-timeout");
    if (connect.compareTo(handshake) <= 0) return connect;
    if ("reference.conf".equals(r.getValue("connect-timeout").origin().resource())) return handshake;
    throw new IllegalArgumentException("mori4j.rdma.connect-timeout (MORI4J_RDMA_CONNECT_TIMEOUT) = " + connect.toMillis()
          + " ms must not exceed mori4j.engine.handshake-timeout = " + handshake.toMillis() + " ms: the engine stops waiting for"
          + " the RDMA handshake's reply at handshake-timeout, so a longer connect-timeout cannot let a slower peer connect");
  }

  /** MORI_RDMA_DEVICES' form: empty, or names separated by commas, all after one leading '^' to exclude them. */
  private static void checkDevices(Config r, String spec) {
    String s = spec.trim();
    if (s.isEmpty()) return;
    if (s.startsWith("^")) s = s.substring(1);
    for (String n : s.split(",", -1))
      if (n.trim().isEmpty()) throw bad("devices", "MORI_RDMA_DEVICES", r, "has an empty device name");
  }

  private static int between(Config r, String key, String env, int min, int max) {
    int v = read(r, key, env, () -> r.getInt(key));
    if (v < min || v > max)
      throw bad(key, env, r, max == Integer.MAX_VALUE ? "must be at least " + min : "must be in " + min + ".." + max);
    return v;
  }

  private static long bytes(Config r, String key, long min, long max) {
    long v = read(r, key, null, () -> r.getBytes(key));
    if (v < min || v > max) throw bad(key, null, r, max == Long.MAX_VALUE ? "must be at least " + min + " byte" : "must be 1 byte..1GiB");
    return v;
  }

  /** A typed read whose wrong type or format is refused like a wrong value (naming key and value). */
  private static <T> T read(Config r, String key, String env, java.util.function.Supplier<T> get) {
    return SettingReads.read(r, key, name(key, env), get, IllegalArgumentException::new);
  }

  private static IllegalArgumentException bad(String key, String env, Config r, String why) {
    return new IllegalArgumentException(SettingReads.refusal(r, key, name(key, env), why));
  }

  private static String name(String key, String env) {
    return "mori4j.rdma." + key + (env != null ? " (" + env + ")" : "");
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
