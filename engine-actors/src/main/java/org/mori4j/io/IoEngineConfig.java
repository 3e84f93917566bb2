package org.mori4j.io;

import java.util.Objects;

/**
 * Where an engine is reachable: the host and port that the remoting of the ActorSystem started by
 * {@link IoEngine#create(String, IoEngineConfig)} binds. Port 0 picks a free port; the chosen one is in
 * {@link IoEngine#engineDesc()}. Data connections of the TCP backend bind the same host on their own port.
 */
public record IoEngineConfig(String host, int port) {
  public IoEngineConfig {
    Objects.requireNonNull(host, "host");
    if (host.isBlank()) throw new IllegalArgumentException("host must not be blank");
    if (port < 0 || port > 65535) throw new IllegalArgumentException("port out of range 0..65535: " + port);
  }

  /** Loopback with a free port: the embedded default. */
  public static IoEngineConfig loopback() {
    return new IoEngineConfig("127.0.0.1", 0);
  }
}
