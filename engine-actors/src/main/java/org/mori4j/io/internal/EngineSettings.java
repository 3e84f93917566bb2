package org.mori4j.io.internal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueType;
import java.time.Duration;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.internal.SettingReads.Section;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.transport.StagingTuning;
import org.mori4j.transport.tcp.TcpLatency;
import org.mori4j.transport.tcp.TcpSettings;

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

  /**
   * Reads and checks every key; a bad one is refused with a {@link SettingReads.Refused} naming the key, its
   * environment variable and the value ({@link EngineStart} turns it into {@code ERR_INVALID_ARGS}).
   */
  public static EngineSettings from(Config root) {
    Section c = SettingReads.section(root, "mori4j");
    Section tcp = SettingReads.section(root, "mori4j.tcp");
    TcpBackendConfig tcpDefaults = tcpDefaults(tcp);
    long awaitSpin = awaitSpin(c, Runtime.getRuntime().availableProcessors());
    return new EngineSettings(c.getDuration("engine.ask-timeout"), c.getDuration("engine.handshake-timeout"),
        awaitSpin, c.getString("engine.system-name"),
        c.getDuration("poller.spin").toNanos(), c.getDuration("poller.yield").toNanos(),
        c.getDuration("poller.park-max").toNanos(), c.getDuration("poller.max-run").toNanos(), tcpDefaults,
        tcpPort(tcp), tcp.intIn("max-batch-entries", 1, TcpSettings.MAX_BATCH_ENTRIES), stagingChunk(tcp), gpuRuntime(c), c.intIn("engine.lost-peers-remembered", 1, Integer.MAX_VALUE),
        c.nanosNotNegative("xgmi.poll-nap"), c.intIn("xgmi.max-batch-blocks", 1, Integer.MAX_VALUE),
        tcp.intIn("gpu-staging-prewarm", 0, Integer.MAX_VALUE), xgmiBlockTable(c),
        c.getBoolean("xgmi.fuse-batches"), stagingTuning(tcp), TcpLatencySetup.fromConfig(tcp), TcpLatencySetup.bulkLanes(tcp),
        xgmiCallerPoll(c, awaitSpin));
  }

  /**
   * {@code mori4j.tcp}'s {@link TcpBackendConfig}. Each key is checked here against the bounds the record's
   * constructor enforces, so that a refusal names the key rather than the record's parameter;
   * EngineSettingsTest checks that both refuse the same values.
   */
  static TcpBackendConfig tcpDefaults(Section tcp) {
    int connections = tcp.intIn("connections-per-peer", 1, 64);
    int ioThreads = tcp.intIn("io-threads", 1, 64);
    long stripe = tcp.getBytes("stripe-threshold");
    if (stripe < 4096) throw tcp.refused("stripe-threshold", "must be at least 4096 bytes");
    int socketBuffer = socketBuffer(tcp);
    Duration peerTimeout = tcp.positiveDuration("peer-timeout");
    Duration connectTimeout = tcp.positiveDuration("connect-timeout");
    return new TcpBackendConfig(connections, ioThreads, stripe, socketBuffer, peerTimeout, connectTimeout,
        tcp.getBoolean("enable-notification"), TcpTlsSetup.fromConfig(tcp));
  }

  /** Most bytes {@code mori4j.tcp.socket-buffer} takes: SO_SNDBUF and SO_RCVBUF are ints, and NIO refuses a negative one. */
  public static final long MAX_SOCKET_BUFFER = Integer.MAX_VALUE;

  /**
   * {@code mori4j.tcp.socket-buffer}: 0 (the kernel's autotuning) to {@link #MAX_SOCKET_BUFFER} bytes, read as the long
   * it is and refused past the int the socket options take (before, 2 to 4 GiB came out negative and 4 GiB and more
   * wrapped around to a small size). The kernel caps what it grants at net.core.wmem_max/rmem_max without a word.
   */
  static int socketBuffer(Section tcp) {
    long bytes = tcp.getBytes("socket-buffer");
    if (bytes < 0 || bytes > MAX_SOCKET_BUFFER)
      throw tcp.refused("socket-buffer", "must be in 0.." + MAX_SOCKET_BUFFER + " bytes (2 GiB - 1: SO_SNDBUF/SO_RCVBUF take an int; 0: the kernel's autotuning)");
    return (int) bytes;
  }

  /** {@code mori4j.tcp.port}: checked at start, bound by {@code createBackend(TCP)} (a port in use fails there). */
  static int tcpPort(Section tcp) {
    int port = tcp.getInt("port");
    if (port < 0 || port > 65535) throw tcp.refused("port", "must be in 0..65535 (0: a free port)");
    return port;
  }

  /**
   * {@code mori4j.gpu.runtime}: auto, cuda, hip (any case), or a name a runtime was registered under with
   * {@link GpuRuntimes#register} before the engine starts. Only the value is checked: nothing is opened here (the
   * runtime opens at the first GPU registration).
   */
  static String gpuRuntime(Section c) {
    String key = "gpu.runtime";
    String mode = c.getString(key);
    String m = mode.trim().toLowerCase(java.util.Locale.ROOT);
    if (m.equals("auto") || m.equals("cuda") || m.equals("hip")) return mode;
    try {
      GpuRuntimes.select(mode); // any other name: a look-up among the registered runtimes, which opens nothing
    } catch (IllegalArgumentException e) {
      throw c.refused(key, "must be auto, cuda or hip (or the name of a runtime registered with GpuRuntimes.register)", e);
    }
    return mode;
  }

  /**
   * {@code mori4j.xgmi.caller-poll}: {@code off} (-1), {@code auto} ({@code awaitSpin}, the resolved await spin) or a
   * duration of 0 or more; anything else is refused naming the key and the value.
   */
  static long xgmiCallerPoll(Section c, long awaitSpin) {
    String key = "xgmi.caller-poll";
    if (isOff(c, key)) return -1;
    if (isWord(c, key, "auto")) return awaitSpin;
    long n = c.read(key, () -> c.config().getDuration(key), "must be off, auto or a duration").toNanos();
    if (n < 0) throw c.refused(key, "must not be negative");
    return n;
  }

  /** {@code mori4j.xgmi.block-table}: true for {@code mapped}, false for {@code device}. */
  static boolean xgmiBlockTable(Section c) {
    String key = "xgmi.block-table";
    return switch (c.getString(key).trim().toLowerCase(java.util.Locale.ROOT)) {
      case "mapped" -> true;
      case "device" -> false;
      default -> throw c.refused(key, "must be mapped or device");
    };
  }

  /** {@code mori4j.engine.await-spin}: a duration, or {@code auto} (decided by the {@code cpus} this JVM may use). */
  static long awaitSpin(Section c, int cpus) {
    String key = "engine.await-spin";
    if (isWord(c, key, "auto")) return cpus >= AUTO_SPIN_MIN_CPUS ? AUTO_SPIN_NANOS : 0;
    long n = c.read(key, () -> c.config().getDuration(key), "must be auto or a duration").toNanos();
    if (n < 0) throw c.refused(key, "must not be negative");
    return n;
  }

  /**
   * A setting at {@code path} (full path) that is a positive duration or {@code off} (HOCON reads a bare {@code off} as
   * false): null for off; a value that is neither, or not positive, is refused naming the key and the value.
   */
  static Duration positiveOrOff(Config root, String path) {
    int dot = path.lastIndexOf('.');
    Section s = SettingReads.section(root, path.substring(0, dot));
    String key = path.substring(dot + 1);
    if (isOff(s, key)) return null;
    Duration d = s.read(key, () -> s.config().getDuration(key), "must be a duration or off");
    if (d.isZero() || d.isNegative()) throw s.refused(key, "must be positive or off");
    return d;
  }

  /** Whether the setting at {@code key} says off: the word, or the false HOCON reads a bare {@code off} as. */
  private static boolean isOff(Section s, String key) {
    ConfigValueType type = s.read(key, () -> s.config().getValue(key)).valueType();
    return type == ConfigValueType.BOOLEAN && !s.getBoolean(key) || isWord(s, key, "off");
  }

  /** Whether the setting at {@code key} is the string {@code word} (blanks and case aside). */
  private static boolean isWord(Section s, String key, String word) {
    return s.read(key, () -> s.config().getValue(key)).valueType() == ConfigValueType.STRING
        && s.getString(key).trim().equalsIgnoreCase(word);
  }


  /** {@code mori4j.tcp.gpu-staging-pieces} (1..64), {@code gpu-copy-spin} (0..10 ms), {@code gpu-staging-memory} (pinned, registered), {@code gpu-staging-gather}, {@code gpu-staging-scatter}, {@code gpu-staging-early-refill}. */
  static StagingTuning stagingTuning(Section tcp) {
    int pieces = tcp.intIn("gpu-staging-pieces", 1, 64);
    String memory = tcp.getString("gpu-staging-memory");
    if (!memory.equals("pinned") && !memory.equals("registered")) throw tcp.refused("gpu-staging-memory", "must be pinned or registered");
    return new StagingTuning(pieces, TcpLatencySetup.nanos(tcp, "gpu-copy-spin"), memory.equals("registered"),
        tcp.getBoolean("gpu-staging-gather"), tcp.getBoolean("gpu-staging-scatter"), tcp.getBoolean("gpu-staging-early-refill"));
  }

  private static int stagingChunk(Section tcp) {
    long bytes = tcp.getBytes("gpu-staging-chunk");
    if (bytes < 4096 || bytes > (1L << 30)) throw tcp.refused("gpu-staging-chunk", "must be in 4 KiB..1 GiB");
    return (int) bytes;
  }
}
