package org.mori4j.bench;

import java.util.ArrayList;
import java.util.List;
import org.mori4j.io.TcpBackendConfig;
import picocli.CommandLine.Option;

/**
 * The TCP backend flags shared by {@code serve} and {@code bench}. Unset flags keep the values of
 * {@code mori4j.tcp} in {@code reference.conf} ({@link TcpBackendConfig#defaults()}), so the command line
 * never carries its own copy of a default.
 */
public final class TcpOptions {
  @Option(names = "--connections", paramLabel = "N", description = "TCP data connections per peer (default: mori4j.tcp in reference.conf).")
  Integer connections;

  @Option(names = "--io-threads", paramLabel = "N", description = "I/O threads of the TCP backend (default: mori4j.tcp in reference.conf).")
  Integer ioThreads;

  /** The backend configuration these flags select. */
  public TcpBackendConfig config() {
    TcpBackendConfig c = TcpBackendConfig.defaults();
    if (connections != null) c = c.withConnectionsPerPeer(connections);
    if (ioThreads != null) c = c.withIoThreads(ioThreads);
    return c;
  }

  /** The flags to hand to a child {@code serve} so that both ends use the same settings. */
  public List<String> asArgs() {
    List<String> a = new ArrayList<>();
    if (connections != null) a.addAll(List.of("--connections", connections.toString()));
    if (ioThreads != null) a.addAll(List.of("--io-threads", ioThreads.toString()));
    return a;
  }
}
