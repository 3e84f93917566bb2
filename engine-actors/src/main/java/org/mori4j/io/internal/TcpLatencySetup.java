package org.mori4j.io.internal;

import org.mori4j.io.internal.SettingReads.Section;
import org.mori4j.transport.tcp.TcpLatency;

/**
 * Reads the TCP backend's settings that are not part of {@code TcpBackendConfig}: the latency ones
 * ({@code mori4j.tcp.caller-drive}, {@code caller-drive-spin}, {@code serve-spin}; see reference.conf and
 * {@link TcpLatency}) and {@code bulk-lanes}, and refuses bad values with the key and the value ({@link SettingReads}). Called once, by
 * {@link EngineSettings#from} at engine start, with the rest of {@code mori4j.tcp}; each TCP backend the engine
 * creates takes them from there.
 */
final class TcpLatencySetup {
  private TcpLatencySetup() {}

  static TcpLatency fromConfig(Section tcp) {
    boolean on = tcp.getBoolean("caller-drive");
    long drive = nanos(tcp, "caller-drive-spin");
    long serve = nanos(tcp, "serve-spin");
    return new TcpLatency(on, drive, serve);
  }

  /** {@code mori4j.tcp.bulk-lanes}: extra connections per peer for the stripes of large transfers (0 to 16). */
  static int bulkLanes(Section tcp) {
    return tcp.intIn("bulk-lanes", 0, 16);
  }

  /** A duration setting of {@code mori4j.tcp} from 0 to 10 ms (the spins), in nanoseconds. */
  static long nanos(Section tcp, String key) {
    long n = tcp.getDuration(key).toNanos();
    if (n < 0 || n > 10_000_000L) throw tcp.refused(key, "must be between 0 and 10ms");
    return n;
  }
}
