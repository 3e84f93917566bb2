package org.mori4j.io.internal;

import com.typesafe.config.Config;
import java.nio.file.Path;
import org.mori4j.io.TcpTlsConfig;
import org.mori4j.io.internal.SettingReads.Section;
import org.mori4j.transport.tcp.TcpTls;

/**
 * Turns {@code mori4j.tcp.tls*} and the ActorSystem's Artery settings into the TCP backend's TLS: reads the
 * keys into a {@link TcpTlsConfig}, decides {@code auto} (on exactly when Artery's transport is {@code tls-tcp}),
 * fills stores left empty from Artery's {@code ssl.config-ssl-engine} (the cluster's TLS), and opens them. Every
 * refusal names the setting and the value.
 */
final class TcpTlsSetup {
  private static final String ARTERY_TRANSPORT = "pekko.remote.artery.transport";
  private static final String ARTERY_SSL = "pekko.remote.artery.ssl.config-ssl-engine.";

  private TcpTlsSetup() {}

  /** {@code mori4j.tcp}'s TLS keys. */
  static TcpTlsConfig fromConfig(Section tcp) {
    TcpTlsConfig.Mode mode;
    try {
      mode = TcpTlsConfig.Mode.parse(tcp.path("tls"), tcp.getString("tls"));
    } catch (IllegalArgumentException e) {
      throw tcp.refused("tls", "must be on, off or auto", e);
    }
    return new TcpTlsConfig(mode, path(tcp.getString("tls-key-store")), text(tcp.getString("tls-key-store-password")),
        text(tcp.getString("tls-key-password")), path(tcp.getString("tls-trust-store")),
        text(tcp.getString("tls-trust-store-password")), tcp.getBoolean("tls-hostname-verification"));
  }

  /** Whether the ActorSystem configured by {@code system} runs Artery over TLS. */
  static boolean clusterTls(Config system) {
    return system.hasPath(ARTERY_TRANSPORT) && "tls-tcp".equals(system.getString(ARTERY_TRANSPORT));
  }

  /**
   * The TLS the backend runs, or null for plain TCP.
   *
   * @throws IllegalArgumentException when TLS is on and a store is missing or cannot be opened
   */
  static TcpTls resolve(TcpTlsConfig c, Config system) {
    boolean cluster = clusterTls(system);
    boolean on = switch (c.mode()) {
      case ON -> true;
      case OFF -> false;
      case AUTO -> cluster;
    };
    if (!on) return null;
    Path keyStore = c.keyStore();
    String keyStorePassword = c.keyStorePassword();
    String keyPassword = c.keyPassword();
    Path trustStore = c.trustStore();
    String trustStorePassword = c.trustStorePassword();
    if (keyStore == null) {
      if (!cluster)
        throw new IllegalArgumentException("mori4j.tcp.tls is on but no key store is set (mori4j.tcp.tls-key-store, "
            + "MORI4J_TCP_TLS_KEY_STORE) and the cluster runs no TLS to borrow one from");
      keyStore = Path.of(system.getString(ARTERY_SSL + "key-store"));
      if (keyStorePassword == null) keyStorePassword = system.getString(ARTERY_SSL + "key-store-password");
      if (keyPassword == null) keyPassword = system.getString(ARTERY_SSL + "key-password");
    }
    if (keyPassword == null) keyPassword = keyStorePassword;
    if (trustStore == null) {
      if (cluster && c.keyStore() == null) {
        trustStore = Path.of(system.getString(ARTERY_SSL + "trust-store"));
        if (trustStorePassword == null) trustStorePassword = system.getString(ARTERY_SSL + "trust-store-password");
      } else {
        trustStore = keyStore;
        if (trustStorePassword == null) trustStorePassword = keyStorePassword;
      }
    }
    if (trustStorePassword == null) trustStorePassword = keyStorePassword;
    return TcpTls.load(keyStore, keyStorePassword, keyPassword, trustStore, trustStorePassword, c.hostnameVerification());
  }

  private static Path path(String s) {
    return s == null || s.isBlank() ? null : Path.of(s.trim());
  }

  private static String text(String s) {
    return s == null || s.isEmpty() ? null : s;
  }
}
