package org.mori4j.io.internal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueType;
import java.time.Duration;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.transport.StagingTuning;
import org.mori4j.transport.tcp.TcpLatency;

/**
 * The {@code mori4j} section of the configuration, read once when an engine starts.
 *
 * @param askTimeout       limit of the facade's control calls
 * @param handshakeTimeout limit of a backend handshake through the control plane
 * @param awaitSpinNanos   how long a waiting caller spins before it parks ({@code auto}: {@link #AUTO_SPIN_NANOS} on a
 *                         machine of at least {@link #AUTO_SPIN_MIN_CPUS} processors, else 0)
 * @param systemName       name of the ActorSystem a standalone engine starts
 * @param pollerSpinNanos  poller spin after work
 * @param pollerYieldNanos poller yield phase after the spin
 * @param pollerParkNanos  longest block of an idle poller in its source
 * @param pollerMaxRunNanos longest uninterrupted stretch of a poller before its mailbox runs
 * @param tcpDefaults      TCP backend defaults
 * @param tcpPort          TCP data listener port
 * @param tcpMaxBatchEntries most blocks in one TCP request
 * @param tcpGpuStagingChunk bytes of each pinned staging buffer for GPU memory over TCP
 * @param gpuRuntime       GPU runtime mode: auto, cuda or hip
 * @param lostPeersRemembered how many engine keys declared lost the engine remembers (most recent first)
 * @param xgmiPollNapNanos  XGMI: 0 polls GPU events without sleeping while transfers run, more naps that long between polls
 * @param xgmiMaxBatchBlocks XGMI: most blocks in one batch (one kernel launch)
 * @param tcpGpuStagingPrewarm idle TCP staging slots prepared when GPU memory is registered (0: none; GpuStaging)
 * @param xgmiMappedTable  XGMI: the batch kernel reads its block table in place from pinned host memory ({@code
 *                         block-table = mapped}) instead of a device copy ({@code device})
 * @param xgmiFuseBatches  XGMI: the entries of one batch-of-batches call between the same two devices share kernel
 *                         launches ({@code mori4j.xgmi.fuse-batches})
 * @param tcpGpuStagingTuning TCP GPU staging: pieces in a transfer's middle and the copy spin
 *                         ({@code mori4j.tcp.gpu-staging-pieces}, {@code gpu-copy-spin})
 * @param tcpLatency       TCP small-transfer latency: {@code mori4j.tcp.caller-drive}, {@code caller-drive-spin},
 *                         {@code serve-spin} ({@link TcpLatencySetup})
 * @param tcpBulkLanes     TCP: extra connections per peer for the stripes of large transfers ({@code mori4j.tcp.bulk-lanes})
 * @param xgmiCallerPollNanos XGMI: -1 ({@code off}) single copies go through the worker; else the caller issues them and
 *                         polls their event for up to this long ({@code mori4j.xgmi.caller-poll}; {@code auto}: the await spin)
 */
public record EngineSettings(Duration askTimeout, Duration handshakeTimeout, long awaitSpinNanos, String systemName,
                             long pollerSpinNanos, long pollerYieldNanos, long pollerParkNanos, long pollerMaxRunNanos,
                             TcpBackendConfig tcpDefaults, int tcpPort, int tcpMaxBatchEntries, int tcpGpuStagingChunk,
                             String gpuRuntime, int lostPeersRemembered, long xgmiPollNapNanos, int xgmiMaxBatchBlocks,
                             int tcpGpuStagingPrewarm, boolean xgmiMappedTable, boolean xgmiFuseBatches,
                             StagingTuning tcpGpuStagingTuning, TcpLatency tcpLatency, int tcpBulkLanes, long xgmiCallerPollNanos) {

  /** What {@code await-spin = auto} spins for: longer than a small GPU copy or a loopback round trip takes. */
  public static final long AUTO_SPIN_NANOS = 50_000;
  /**
   * Fewest processors on which {@code auto} spins: on fewer, the waiting caller would take the core that the
   * poller and I/O threads need to finish its transfer.
   */
  public static final int AUTO_SPIN_MIN_CPUS = 8;

  public static EngineSettings load() {
    return from(ConfigFactory.load());
  }

  public static EngineSettings from(Config root) {
    Config c = root.getConfig("mori4j");
    Config tcp = c.getConfig("tcp");
    TcpBackendConfig tcpDefaults = new TcpBackendConfig(tcp.getInt("connections-per-peer"), tcp.getInt("io-threads"),
        tcp.getBytes("stripe-threshold"), tcp.getBytes("socket-buffer").intValue(), tcp.getDuration("peer-timeout"),
        tcp.getDuration("connect-timeout"), tcp.getBoolean("enable-notification"), TcpTlsSetup.fromConfig(tcp));
    long awaitSpin = awaitSpin(c, Runtime.getRuntime().availableProcessors());
    return new EngineSettings(c.getDuration("engine.ask-timeout"), c.getDuration("engine.handshake-timeout"),
        awaitSpin, c.getString("engine.system-name"),
        c.getDuration("poller.spin").toNanos(), c.getDuration("poller.yield").toNanos(),
        c.getDuration("poller.park-max").toNanos(), c.getDuration("poller.max-run").toNanos(), tcpDefaults,
        tcp.getInt("port"), tcp.getInt("max-batch-entries"), stagingChunk(tcp.getBytes("gpu-staging-chunk")),
        c.getString("gpu.runtime"), positive("engine.lost-peers-remembered", c.getInt("engine.lost-peers-remembered")),
        notNegative("xgmi.poll-nap", c.getDuration("xgmi.poll-nap").toNanos()), positive("xgmi.max-batch-blocks", c.getInt("xgmi.max-batch-blocks")),
        notNegative("tcp.gpu-staging-prewarm", tcp.getInt("gpu-staging-prewarm")), xgmiBlockTable(c.getString("xgmi.block-table")),
        c.getBoolean("xgmi.fuse-batches"), stagingTuning(tcp), TcpLatencySetup.fromConfig(tcp), TcpLatencySetup.bulkLanes(tcp),
        xgmiCallerPoll(c, awaitSpin));
  }

  /**
   * {@code mori4j.xgmi.caller-poll}: {@code off} (-1), {@code auto} ({@code awaitSpin}, the resolved await spin) or a
   * duration of 0 or more; anything else is refused naming the path and the value.
   */
  static long xgmiCallerPoll(Config c, long awaitSpin) {
    String path = "xgmi.caller-poll";
    if (isOff(c, path)) return -1;
    if (c.getValue(path).valueType() == ConfigValueType.STRING && c.getString(path).trim().equalsIgnoreCase("auto")) return awaitSpin;
    try {
      return notNegative(path, c.getDuration(path).toNanos());
    } catch (com.typesafe.config.ConfigException e) {
      throw new IllegalArgumentException("mori4j." + path + " must be off, auto or a duration: '" + c.getValue(path).unwrapped() + "'", e);
    }
  }

  /** {@code mori4j.xgmi.block-table}: true for {@code mapped}, false for {@code device}. */
  static boolean xgmiBlockTable(String value) {
    return switch (value.trim().toLowerCase(java.util.Locale.ROOT)) {
      case "mapped" -> true;
      case "device" -> false;
      default -> throw new IllegalArgumentException("mori4j.xgmi.block-table must be mapped or device: '" + value + "'");
    };
  }

  /** {@code mori4j.engine.await-spin}: a duration, or {@code auto} (decided by the {@code cpus} this JVM may use). */
  static long awaitSpin(Config c, int cpus) {
    String path = "engine.await-spin";
    if (c.getValue(path).valueType() == ConfigValueType.STRING && c.getString(path).trim().equalsIgnoreCase("auto"))
      return cpus >= AUTO_SPIN_MIN_CPUS ? AUTO_SPIN_NANOS : 0;
    return notNegative(path, c.getDuration(path).toNanos());
  }

  /**
   * A setting at {@code path} (full path) that is a positive duration or {@code off} (HOCON reads a bare {@code off} as
   * false): null for off; a value that is neither, or not positive, is refused naming the path and the value.
   */
  static Duration positiveOrOff(Config root, String path) {
    if (isOff(root, path)) return null;
    Duration d;
    try {
      d = root.getDuration(path);
    } catch (com.typesafe.config.ConfigException e) {
      throw new IllegalArgumentException(path + " must be a duration or off: '" + root.getValue(path).unwrapped() + "'", e);
    }
    if (d.isZero() || d.isNegative()) throw new IllegalArgumentException(path + " must be positive or off: " + d);
    return d;
  }

  /** Whether the setting at {@code path} says off: the word, or the false HOCON reads a bare {@code off} as. */
  private static boolean isOff(Config c, String path) {
    ConfigValueType type = c.getValue(path).valueType();
    return type == ConfigValueType.BOOLEAN && !c.getBoolean(path)
        || type == ConfigValueType.STRING && c.getString(path).trim().equalsIgnoreCase("off");
  }

  private static long notNegative(String name, long nanos) {
    if (nanos < 0) throw new IllegalArgumentException("mori4j." + name + " must not be negative: " + nanos + " ns");
    return nanos;
  }

  private static int notNegative(String name, int value) {
    if (value < 0) throw new IllegalArgumentException("mori4j." + name + " must not be negative: " + value);
    return value;
  }

  private static int positive(String name, int value) {
    if (value <= 0) throw new IllegalArgumentException("mori4j." + name + " must be positive: " + value);
    return value;
  }

  /** {@code mori4j.tcp.gpu-staging-pieces} (1..64), {@code gpu-copy-spin} (0..10 ms), {@code gpu-staging-memory} (pinned, registered), {@code gpu-staging-gather}, {@code gpu-staging-scatter}, {@code gpu-staging-early-refill}. */
  static StagingTuning stagingTuning(Config tcp) {
    int pieces = tcp.getInt("gpu-staging-pieces");
    if (pieces < 1 || pieces > 64) throw new IllegalArgumentException("mori4j.tcp.gpu-staging-pieces must be in 1..64: " + pieces);
    String memory = tcp.getString("gpu-staging-memory");
    if (!memory.equals("pinned") && !memory.equals("registered"))
      throw new IllegalArgumentException("mori4j.tcp.gpu-staging-memory must be pinned or registered: " + memory);
    return new StagingTuning(pieces, TcpLatencySetup.nanos(tcp, "gpu-copy-spin"), memory.equals("registered"),
        tcp.getBoolean("gpu-staging-gather"), tcp.getBoolean("gpu-staging-scatter"), tcp.getBoolean("gpu-staging-early-refill"));
  }

  private static int stagingChunk(long bytes) {
    if (bytes < 4096 || bytes > (1L << 30))
      throw new IllegalArgumentException("mori4j.tcp.gpu-staging-chunk must be in 4 KiB..1 GiB: " + bytes);
    return (int) bytes;
  }
}
