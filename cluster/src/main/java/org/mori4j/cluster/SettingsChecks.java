package org.mori4j.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Collections;
import java.util.Set;

/**
 * The checks behind {@link ClusterSettings}' promise that a bad value fails when the settings are built, naming the
 * argument and its value: hosts, ports, seeds ({@code host:port}, {@code [ipv6]:port}), durations, and TLS (protocol,
 * cipher suites, key and trust stores opened with their passwords, so that a wrong password does not surface later as
 * a failed handshake inside Artery).
 */
final class SettingsChecks {
  private static final Set<String> TLS_PROTOCOLS = Set.of("TLSv1.3", "TLSv1.2");

  private SettingsChecks() {}

  /**
   * Checks that TLS as configured can work: a known protocol, cipher suites, a key store with a private key that its
   * password opens, a trust store that is not empty.
   */
  static void checkTls(ClusterSettings.Tls tls) {
    if (!TLS_PROTOCOLS.contains(tls.protocol()))
      throw bad("tls protocol '" + tls.protocol() + "' is not TLSv1.3 or TLSv1.2");
    if (tls.enabledAlgorithms().isEmpty()) throw bad("tls enabled-algorithms is empty: no cipher suite to offer");
    KeyStore keys = open("key-store", tls.keyStore(), tls.keyStorePassword(), "MORI4J_TLS_KEY_STORE");
    boolean hasKey = false;
    try {
      for (String alias : Collections.list(keys.aliases())) {
        if (!keys.isKeyEntry(alias)) continue;
        hasKey = true;
        // the key password is checked here too: a wrong one otherwise surfaces as a failed handshake
        keys.getKey(alias, tls.keyPassword().toCharArray());
      }
    } catch (GeneralSecurityException e) {
      throw bad("tls key-password does not open the private key in key-store '" + tls.keyStore() + "': " + e.getMessage());
    }
    if (!hasKey) throw bad("tls key-store '" + tls.keyStore() + "' holds no private key (a member must present its own certificate)");
    KeyStore trust = open("trust-store", tls.trustStore(), tls.trustStorePassword(), "MORI4J_TLS_TRUST_STORE");
    try {
      if (trust.size() == 0) throw bad("tls trust-store '" + tls.trustStore() + "' is empty: no peer could ever be accepted");
    } catch (GeneralSecurityException e) {
      throw bad("tls trust-store '" + tls.trustStore() + "': " + e.getMessage());
    }
  }

  private static KeyStore open(String what, String file, String password, String env) {
    if (file.isBlank()) throw bad("tls is enabled but no " + what + " is set (mori4j.cluster.tls." + what + ", " + env + ")");
    Path p = Path.of(file);
    if (!Files.isRegularFile(p) || !Files.isReadable(p)) throw bad("tls " + what + " '" + file + "' is not a readable file");
    try {
      // KeyStore.getInstance(File, ...) detects PKCS12 or JKS, the two formats Artery's provider can read
      return KeyStore.getInstance(p.toFile(), password.toCharArray());
    } catch (IOException | GeneralSecurityException e) {
      throw bad("tls " + what + " '" + file + "' does not open with its password: " + e.getMessage());
    }
  }

  static void checkHost(String what, String h) {
    if (h == null || h.isBlank() || h.chars().anyMatch(Character::isWhitespace) || h.contains("/") || h.contains("@"))
      throw bad(what + " '" + h + "' is not a host name or IP address");
  }

  static void checkPort(String what, int p, int min) {
    if (p < min || p > 65535) throw bad(what + " " + p + " is out of range " + min + "..65535");
  }

  static void checkPositive(String what, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) throw bad(what + " '" + d + "' must be a positive duration");
  }

  /** Checks a seed of the form {@code host:port} or {@code [ipv6]:port}; a seed's port must be a real one. */
  static void checkSeed(String seed) {
    String why = seedProblem(seed);
    if (why != null) throw bad("seed '" + seed + "' is not host:port (" + why + "), e.g. 127.0.0.1:25520");
  }

  private static String seedProblem(String seed) {
    if (seed == null || seed.isBlank()) return "empty";
    int colon = seed.lastIndexOf(':');
    if (colon <= 0 || colon == seed.length() - 1) return "no port";
    String h = seed.substring(0, colon);
    if (h.startsWith("[") != h.endsWith("]")) return "unbalanced brackets";
    if (!h.startsWith("[") && h.indexOf(':') >= 0) return "an IPv6 address needs brackets";
    if (h.chars().anyMatch(Character::isWhitespace) || h.contains("/") || h.contains("@")) return "bad host '" + h + "'";
    int p;
    try {
      p = Integer.parseInt(seed.substring(colon + 1));
    } catch (NumberFormatException e) {
      return "port '" + seed.substring(colon + 1) + "' is not a number";
    }
    if (p < 1 || p > 65535) return "port " + p + " out of range 1..65535";
    return null;
  }

  static IllegalArgumentException bad(String message) {
    return new IllegalArgumentException(message);
  }
}
