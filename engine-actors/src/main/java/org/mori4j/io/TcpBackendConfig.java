package org.mori4j.io;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the TCP backend. {@link #defaults()} reads {@code mori4j.tcp} from {@code reference.conf}
 * (overridable by the environment variables named there); the canonical constructor takes every value
 * explicitly and checks it.
 *
 * @param connectionsPerPeer data connections opened to each remote engine; large transfers are striped over them
 * @param ioThreads          I/O loops (completion sources) of this backend; connections are spread over them
 * @param stripeThreshold    transfers at least this large are split over all connections of the peer
 * @param socketBufferBytes  SO_SNDBUF/SO_RCVBUF of each data socket (0 keeps the kernel's autotuning; values below the
 *                           link's segment size, 64 KiB on loopback, stall TCP's window updates)
 * @param peerTimeout        silence with transfers outstanding after which a peer is declared lost
 * @param connectTimeout     limit for opening a data connection and its hello exchange
 * @param enableNotification whether the target records inbound transfers for {@code popInboundTransferStatus}
 * @param tls                TLS on the data connections ({@link TcpTlsConfig}: off, on, or auto with the cluster's TLS)
 */
public record TcpBackendConfig(int connectionsPerPeer, int ioThreads, long stripeThreshold, int socketBufferBytes,
                               Duration peerTimeout, Duration connectTimeout, boolean enableNotification, TcpTlsConfig tls)
    implements BackendConfig {
  /** Without a TLS choice of its own: {@link TcpTlsConfig#auto()}, TLS exactly when the cluster's Artery runs TLS. */
  public TcpBackendConfig(int connectionsPerPeer, int ioThreads, long stripeThreshold, int socketBufferBytes,
                          Duration peerTimeout, Duration connectTimeout, boolean enableNotification) {
    this(connectionsPerPeer, ioThreads, stripeThreshold, socketBufferBytes, peerTimeout, connectTimeout, enableNotification,
        TcpTlsConfig.auto());
  }

  public TcpBackendConfig {
    Objects.requireNonNull(tls, "tls (TcpTlsConfig.off() for plain TCP)");
    if (connectionsPerPeer < 1 || connectionsPerPeer > 64)
      throw new IllegalArgumentException("connectionsPerPeer must be in 1..64: " + connectionsPerPeer);
    if (ioThreads < 1 || ioThreads > 64) throw new IllegalArgumentException("ioThreads must be in 1..64: " + ioThreads);
    if (stripeThreshold < 4096) throw new IllegalArgumentException("stripeThreshold must be >= 4096: " + stripeThreshold);
    if (socketBufferBytes < 0) throw new IllegalArgumentException("socketBufferBytes must be >= 0: " + socketBufferBytes);
    Objects.requireNonNull(peerTimeout, "peerTimeout");
    Objects.requireNonNull(connectTimeout, "connectTimeout");
    if (peerTimeout.isNegative() || peerTimeout.isZero())
      throw new IllegalArgumentException("peerTimeout must be positive: " + peerTimeout);
    if (connectTimeout.isNegative() || connectTimeout.isZero())
      throw new IllegalArgumentException("connectTimeout must be positive: " + connectTimeout);
  }

  /** The values of {@code mori4j.tcp} in the loaded configuration. */
  public static TcpBackendConfig defaults() {
    return org.mori4j.io.internal.EngineSettings.load().tcpDefaults();
  }

  public TcpBackendConfig withConnectionsPerPeer(int n) {
    return new TcpBackendConfig(n, ioThreads, stripeThreshold, socketBufferBytes, peerTimeout, connectTimeout, enableNotification, tls);
  }

  public TcpBackendConfig withIoThreads(int n) {
    return new TcpBackendConfig(connectionsPerPeer, n, stripeThreshold, socketBufferBytes, peerTimeout, connectTimeout, enableNotification, tls);
  }

  public TcpBackendConfig withStripeThreshold(long bytes) {
    return new TcpBackendConfig(connectionsPerPeer, ioThreads, bytes, socketBufferBytes, peerTimeout, connectTimeout, enableNotification, tls);
  }

  public TcpBackendConfig withPeerTimeout(Duration d) {
    return new TcpBackendConfig(connectionsPerPeer, ioThreads, stripeThreshold, socketBufferBytes, d, connectTimeout, enableNotification, tls);
  }

  public TcpBackendConfig withEnableNotification(boolean on) {
    return new TcpBackendConfig(connectionsPerPeer, ioThreads, stripeThreshold, socketBufferBytes, peerTimeout, connectTimeout, on, tls);
  }

  /** These settings with {@code tls} on the data connections. */
  public TcpBackendConfig withTls(TcpTlsConfig tls) {
    return new TcpBackendConfig(connectionsPerPeer, ioThreads, stripeThreshold, socketBufferBytes, peerTimeout, connectTimeout, enableNotification, tls);
  }

  @Override
  public BackendType type() {
    return BackendType.TCP;
  }
}
