package org.mori4j.io;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;

/**
 * TLS for the TCP backend's data connections ({@code mori4j.tcp.tls} and the {@code mori4j.tcp.tls-*} keys).
 * {@link Mode#AUTO} (the default) turns it on exactly when the engine's ActorSystem runs Artery over TLS
 * ({@code pekko.remote.artery.transport = tls-tcp}, which {@code ClusterSettings} sets for a TLS cluster);
 * {@link Mode#ON} and {@link Mode#OFF} decide regardless. A store left null is taken from the cluster's Artery
 * TLS settings ({@code pekko.remote.artery.ssl.config-ssl-engine}), so a TLS cluster needs nothing more. With TLS
 * on, every data connection is TLS 1.3 with mutual authentication: both engines present a certificate that
 * must chain to the other's trust store, and with {@code hostnameVerification} the initiator also requires the
 * target's certificate to name the host the target advertises for its data listener (a SAN with its IP
 * address, or DNS name). Both ends of a pair must agree: an initiator whose setting differs from the target's
 * is refused at the backend handshake with a message naming both.
 *
 * @param mode                 on, off, or auto (on when the cluster's Artery TLS is on)
 * @param keyStore             this engine's key and certificate (PKCS12, or JKS by a {@code .jks} name); null: the cluster's
 * @param keyStorePassword     its password; null with the cluster's store: the cluster's password
 * @param keyPassword          the private key's password; null: the key store's
 * @param trustStore           the certificates (or CA) a peer's chain must end in; null: the cluster's, else the key store
 * @param trustStorePassword   its password; null: the cluster's, else the key store's
 * @param hostnameVerification whether the initiator checks the target's certificate against the target's advertised host
 */
public record TcpTlsConfig(Mode mode, Path keyStore, String keyStorePassword, String keyPassword, Path trustStore,
                           String trustStorePassword, boolean hostnameVerification) {
  /** Whether the data path runs TLS. */
  public enum Mode {
    OFF, ON, AUTO;

    /** {@code on}/{@code true}/{@code yes}, {@code off}/{@code false}/{@code no}, or {@code auto}; anything else is refused. */
    public static Mode parse(String name, String value) {
      String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
      return switch (v) {
        case "on", "true", "yes" -> ON;
        case "off", "false", "no" -> OFF;
        case "auto" -> AUTO;
        default -> throw new IllegalArgumentException(name + " must be on, off or auto: '" + value + "'");
      };
    }
  }

  public TcpTlsConfig {
    Objects.requireNonNull(mode, "mode");
  }

  /** Plain TCP whatever the cluster does. */
  public static TcpTlsConfig off() {
    return new TcpTlsConfig(Mode.OFF, null, null, null, null, null, true);
  }

  /** TLS exactly when the cluster's Artery runs TLS, with the cluster's stores. */
  public static TcpTlsConfig auto() {
    return new TcpTlsConfig(Mode.AUTO, null, null, null, null, null, true);
  }

  /** TLS with these stores (the key password being the key store's). */
  public static TcpTlsConfig on(Path keyStore, String keyStorePassword, Path trustStore, String trustStorePassword) {
    return new TcpTlsConfig(Mode.ON, Objects.requireNonNull(keyStore, "keyStore"), keyStorePassword, null,
        Objects.requireNonNull(trustStore, "trustStore"), trustStorePassword, true);
  }

  public TcpTlsConfig withHostnameVerification(boolean on) {
    return new TcpTlsConfig(mode, keyStore, keyStorePassword, keyPassword, trustStore, trustStorePassword, on);
  }

  @Override
  public String toString() {
    // passwords stay out of logs
    return "TcpTlsConfig[mode=" + mode + ", keyStore=" + keyStore + ", trustStore=" + trustStore
        + ", hostnameVerification=" + hostnameVerification + "]";
  }
}
