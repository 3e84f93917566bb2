package org.mori4j.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TcpTlsConfig;
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

  @Option(names = "--tls-key-store", paramLabel = "FILE", description = "Run the TCP data path over TLS with this PKCS12 key store "
      + "(default: mori4j.tcp.tls in reference.conf, auto with the cluster's TLS).")
  Path tlsKeyStore;

  @Option(names = "--tls-trust-store", paramLabel = "FILE", description = "With --tls-key-store: the trust store (default: the key store).")
  Path tlsTrustStore;

  @Option(names = "--tls-store-password", paramLabel = "PASS", description = "With --tls-key-store: the stores' password "
      + "(default: MORI4J_TCP_TLS_KEY_STORE_PASSWORD). Visible to other users of this machine: for throwaway keys only.")
  String tlsPassword;

  /** The backend configuration these flags select. */
  public TcpBackendConfig config() {
    TcpBackendConfig c = TcpBackendConfig.defaults();
    if (connections != null) c = c.withConnectionsPerPeer(connections);
    if (ioThreads != null) c = c.withIoThreads(ioThreads);
    if (tlsKeyStore != null) {
      String pass = tlsPassword != null ? tlsPassword : System.getenv("MORI4J_TCP_TLS_KEY_STORE_PASSWORD");
      c = c.withTls(TcpTlsConfig.on(tlsKeyStore, pass, tlsTrustStore != null ? tlsTrustStore : tlsKeyStore, pass));
    } else if (tlsTrustStore != null || tlsPassword != null) {
      throw new IllegalArgumentException((tlsTrustStore != null ? "--tls-trust-store" : "--tls-store-password") + " needs --tls-key-store");
    }
    return c;
  }

  /** The flags to hand to a child {@code serve} so that both ends use the same settings. */
  public List<String> asArgs() {
    List<String> a = new ArrayList<>();
    if (connections != null) a.addAll(List.of("--connections", connections.toString()));
    if (ioThreads != null) a.addAll(List.of("--io-threads", ioThreads.toString()));
    if (tlsKeyStore != null) a.addAll(List.of("--tls-key-store", tlsKeyStore.toString()));
    if (tlsTrustStore != null) a.addAll(List.of("--tls-trust-store", tlsTrustStore.toString()));
    if (tlsPassword != null) a.addAll(List.of("--tls-store-password", tlsPassword));
    return a;
  }
}
