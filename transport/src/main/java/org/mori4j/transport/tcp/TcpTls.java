package org.mori4j.transport.tcp;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Collections;
import java.util.Objects;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS for the TCP data path: one {@link SSLContext} made from a key store (this engine's certificate and key)
 * and a trust store (the certificates or CA it accepts from peers), and the engines made from it. Only TLS 1.3
 * is offered, both ends must present a certificate that chains to the other's trust store (the target sets
 * {@code needClientAuth}), and with {@code hostnameVerification} the initiator also requires the target's
 * certificate to name the host the target advertised in its handshake reply (a SAN with that IP address or
 * DNS name, checked by the JDK's endpoint identification, algorithm {@code HTTPS}). The target does not check
 * the initiator's host: initiators connect from addresses nobody announced.
 */
public final class TcpTls {
  static final String PROTOCOL = "TLSv1.3";
  /**
   * AES-GCM only, AES-128 first: both run on the JVM's AES-NI/CLMUL intrinsics, and 128-bit keys take 10 rounds
   * where 256-bit take 14 (the JDK's own order puts AES-256 first). The target's order decides.
   */
  public static final java.util.List<String> CIPHER_SUITES = java.util.List.of("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384");

  private final SSLContext context;
  private final boolean hostnameVerification;
  private final String description;

  private TcpTls(SSLContext context, boolean hostnameVerification, String description) {
    this.context = context;
    this.hostnameVerification = hostnameVerification;
    this.description = description;
  }

  /**
   * Opens the stores and builds the context; every failure names the store and why (missing file, wrong
   * password, no private key, empty trust store).
   *
   * @param keyStore             PKCS12 (or JKS) file with this engine's private key and certificate chain
   * @param keyStorePassword     its password
   * @param keyPassword          the private key's password
   * @param trustStore           the store of certificates a peer's chain must end in
   * @param trustStorePassword   its password
   * @param hostnameVerification whether the initiator checks that the target's certificate names the target's host
   */
  public static TcpTls load(Path keyStore, String keyStorePassword, String keyPassword, Path trustStore,
                            String trustStorePassword, boolean hostnameVerification) {
    Objects.requireNonNull(keyStore, "keyStore");
    Objects.requireNonNull(trustStore, "trustStore");
    KeyStore keys = open("key store", keyStore, keyStorePassword);
    KeyStore trust = open("trust store", trustStore, trustStorePassword);
    try {
      boolean hasKey = false;
      for (String alias : Collections.list(keys.aliases())) hasKey |= keys.isKeyEntry(alias);
      if (!hasKey) throw new IllegalArgumentException("TLS key store '" + keyStore + "' holds no private key (an engine must present its own certificate)");
      if (trust.size() == 0) throw new IllegalArgumentException("TLS trust store '" + trustStore + "' is empty: no peer could ever be accepted");
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, chars(keyPassword));
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext ctx = SSLContext.getInstance(PROTOCOL);
      ctx.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
      return new TcpTls(ctx, hostnameVerification, "TLSv1.3, key store " + keyStore + ", trust store " + trustStore
          + ", hostname verification " + (hostnameVerification ? "on" : "off"));
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("TLS key store '" + keyStore + "' / trust store '" + trustStore
          + "' cannot make a TLS context (is the key password right?): " + e.getMessage(), e);
    }
  }

  /** A context built elsewhere (it must support TLS 1.3); for callers that manage their own key material. */
  public static TcpTls of(SSLContext context, boolean hostnameVerification) {
    return new TcpTls(Objects.requireNonNull(context, "context"), hostnameVerification,
        "TLSv1.3, context " + context.getProvider().getName() + ", hostname verification " + (hostnameVerification ? "on" : "off"));
  }

  public boolean hostnameVerification() {
    return hostnameVerification;
  }

  /** The engine of a target's end: TLS 1.3 only, the initiator's certificate required. */
  SSLEngine serverEngine() {
    SSLEngine e = context.createSSLEngine();
    e.setUseClientMode(false);
    SSLParameters p = e.getSSLParameters();
    p.setProtocols(new String[] {PROTOCOL});
    p.setCipherSuites(CIPHER_SUITES.toArray(String[]::new));
    p.setUseCipherSuitesOrder(true);
    p.setNeedClientAuth(true);
    e.setSSLParameters(p);
    return e;
  }

  /** The engine of an initiator's end towards {@code host} (as the target advertised it) and {@code port}. */
  SSLEngine clientEngine(String host, int port) {
    SSLEngine e = context.createSSLEngine(host, port);
    e.setUseClientMode(true);
    SSLParameters p = e.getSSLParameters();
    p.setProtocols(new String[] {PROTOCOL});
    p.setCipherSuites(CIPHER_SUITES.toArray(String[]::new));
    if (hostnameVerification) p.setEndpointIdentificationAlgorithm("HTTPS");
    e.setSSLParameters(p);
    return e;
  }

  private static KeyStore open(String what, Path file, String password) {
    if (!Files.isRegularFile(file)) throw new IllegalArgumentException("TLS " + what + " '" + file + "' does not exist or is not a file");
    try (InputStream in = Files.newInputStream(file)) {
      KeyStore ks = KeyStore.getInstance(file.toString().endsWith(".jks") ? "JKS" : "PKCS12");
      ks.load(in, chars(password));
      return ks;
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException("TLS " + what + " '" + file + "' cannot be opened (wrong password or not a "
          + "PKCS12/JKS store?): " + e.getMessage(), e);
    }
  }

  private static char[] chars(String s) {
    return s == null ? null : s.toCharArray();
  }

  @Override
  public String toString() {
    return description;
  }
}
