package org.mori4j.io.internal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import org.mori4j.io.TcpBackendConfig;

/**
 * The {@code mori4j} section of the configuration, read once when an engine starts.
 *
 * @param askTimeout       limit of the facade's control calls
 * @param handshakeTimeout limit of a backend handshake through the control plane
 * @param awaitSpinNanos   how long a waiting caller spins before it parks
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
 */
public record EngineSettings(Duration askTimeout, Duration handshakeTimeout, long awaitSpinNanos, String systemName,
                             long pollerSpinNanos, long pollerYieldNanos, long pollerParkNanos, long pollerMaxRunNanos,
                             TcpBackendConfig tcpDefaults, int tcpPort, int tcpMaxBatchEntries, int tcpGpuStagingChunk,
                             String gpuRuntime, int lostPeersRemembered, long xgmiPollNapNanos, int xgmiMaxBatchBlocks) {

  public static EngineSettings load() {
    return from(ConfigFactory.load());
  }

  public static EngineSettings from(Config root) {
    Config c = root.getConfig("mori4j");
    Config tcp = c.getConfig("tcp");
    TcpBackendConfig tcpDefaults = new TcpBackendConfig(tcp.getInt("connections-per-peer"), tcp.getInt("io-threads"),
        tcp.getBytes("stripe-threshold"), tcp.getBytes("socket-buffer").intValue(), tcp.getDuration("peer-timeout"),
        tcp.getDuration("connect-timeout"), tcp.getBoolean("enable-notification"));
    return new EngineSettings(c.getDuration("engine.ask-timeout"), c.getDuration("engine.handshake-timeout"),
        c.getDuration("engine.await-spin").toNanos(), c.getString("engine.system-name"),
        c.getDuration("poller.spin").toNanos(), c.getDuration("poller.yield").toNanos(),
        c.getDuration("poller.park-max").toNanos(), c.getDuration("poller.max-run").toNanos(), tcpDefaults,
        tcp.getInt("port"), tcp.getInt("max-batch-entries"), stagingChunk(tcp.getBytes("gpu-staging-chunk")),
        c.getString("gpu.runtime"), positive("engine.lost-peers-remembered", c.getInt("engine.lost-peers-remembered")),
        notNegative("xgmi.poll-nap", c.getDuration("xgmi.poll-nap").toNanos()), positive("xgmi.max-batch-blocks", c.getInt("xgmi.max-batch-blocks")));
  }

  private static long notNegative(String name, long nanos) {
    if (nanos < 0) throw new IllegalArgumentException("mori4j." + name + " must not be negative: " + nanos + " ns");
    return nanos;
  }

  private static int positive(String name, int value) {
    if (value <= 0) throw new IllegalArgumentException("mori4j." + name + " must be positive: " + value);
    return value;
  }

  private static int stagingChunk(long bytes) {
    if (bytes < 4096 || bytes > (1L << 30))
      throw new IllegalArgumentException("mori4j.tcp.gpu-staging-chunk must be in 4 KiB..1 GiB: " + bytes);
    return (int) bytes;
  }
}
