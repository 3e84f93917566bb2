package org.mori4j.io.internal;

import com.typesafe.config.Config;
import org.mori4j.transport.tcp.TcpLatency;

/**
 * Reads the TCP backend's settings that are not part of {@code TcpBackendConfig}: the latency ones
 * ({@code mori4j.tcp.caller-drive}, {@code caller-drive-spin}, {@code serve-spin}; see reference.conf and
 * {@link TcpLatency}) and {@code bulk-lanes}, and refuses bad values with the key and the value. Called once, by
 * {@link EngineSettings#from} at engine start, with the rest of {@code mori4j.tcp}; each TCP backend the engine
 * creates takes them from there.
 */
final class TcpLatencySetup {
  private TcpLatencySetup() {}

  static TcpLatency fromConfig(Config tcp) {
    boolean on = tcp.getBoolean("caller-drive");
    long drive = nanos(tcp, "caller-drive-spin");
    long serve = nanos(tcp, "serve-spin");
    return new TcpLatency(on, drive, serve);
  }

  /** {@code mori4j.tcp.bulk-lanes}: extra connections per peer for the stripes of large transfers (0 to 16). */
  static int bulkLanes(Config tcp) {
    int n = tcp.getInt("bulk-lanes");
    if (n < 0 || n > 16) throw new IllegalArgumentException("mori4j.tcp.bulk-lanes must be between 0 and 16: " + n);
    return n;
  }

  /** A duration setting of {@code mori4j.tcp} from 0 to 10 ms (the spins), in nanoseconds. */
  static long nanos(Config tcp, String key) {
    long n = tcp.getDuration(key).toNanos();
    if (n < 0 || n > 10_000_000L)
      throw new IllegalArgumentException("mori4j.tcp." + key + " must be between 0 and 10ms: " + tcp.getValue(key).render());
    return n;
  }
}
