package org.mori4j.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.mori4j.cluster.ClusterSettings;
import picocli.CommandLine.Option;

/**
 * The cluster flags of {@code node} and {@code cluster-bench}: where this member listens, which seeds it
 * joins, and Artery TLS. Unset flags keep {@link ClusterSettings}' values (reference.conf and the
 * {@code MORI4J_*} environment), so the command line and the environment configure the same thing.
 * Passwords are never flags (a command line is visible to every user of the machine in {@code ps}): they
 * come from {@code MORI4J_TLS_KEY_STORE_PASSWORD} and {@code MORI4J_TLS_TRUST_STORE_PASSWORD}.
 */
public final class ClusterOptions {
  @Option(names = "--host", paramLabel = "HOST", description = "Canonical host of this member: what the others connect to "
      + "(default: mori4j.cluster.node.host, MORI4J_CLUSTER_HOST, else 127.0.0.1).")
  String host;

  @Option(names = "--port", paramLabel = "PORT", description = "Cluster (control-plane) port; 0 picks a free one "
      + "(default: mori4j.cluster.node.port, MORI4J_CLUSTER_PORT, else 0).")
  Integer port;

  @Option(names = "--seed", paramLabel = "HOST:PORT", description = "A member to join through; repeat for several "
      + "(default: MORI4J_SEED_NODES; none: found a new cluster).")
  List<String> seeds;

  @Option(names = "--system-name", paramLabel = "NAME", description = "ActorSystem name, the same on every member (default: mori4j).")
  String systemName;

  @Option(names = "--tls", description = "Artery TLS (tls-tcp, mutual authentication) for the control plane; passwords from "
      + "MORI4J_TLS_KEY_STORE_PASSWORD / MORI4J_TLS_TRUST_STORE_PASSWORD.")
  boolean tls;

  @Option(names = "--key-store", paramLabel = "FILE", description = "With --tls: this member's key and certificate, PKCS12 or JKS "
      + "(default: MORI4J_TLS_KEY_STORE).")
  Path keyStore;

  @Option(names = "--trust-store", paramLabel = "FILE", description = "With --tls: the certificates accepted from peers "
      + "(default: MORI4J_TLS_TRUST_STORE, else the key store).")
  Path trustStore;

  /**
   * The settings these flags select, {@code seedsOverride} replacing the seeds when not null; a bad value
   * is turned into a usage error by {@code usage}, with ClusterSettings' message naming it.
   */
  ClusterSettings settings(List<String> seedsOverride, Function<String, ? extends RuntimeException> usage) {
    try {
      Config base = ConfigFactory.load();
      ClusterSettings.Builder b = ClusterSettings.builder(base);
      // a flag names only the file: its password is the configured one (environment)
      Config pw = base.getConfig("mori4j.cluster.tls");
      if (host != null) b.host(host);
      if (port != null) b.port(port);
      if (systemName != null) b.systemName(systemName);
      List<String> s = seedsOverride != null ? seedsOverride : seeds;
      if (s != null) b.seeds(s);
      if (tls) b.tls(true);
      if (keyStore != null) b.keyStore(keyStore, pw.getString("key-store-password")).keyPassword(pw.getString("key-password"));
      if (trustStore != null) b.trustStore(trustStore, pw.getString("trust-store-password"));
      // a trust store that only defaulted to the configured key store follows the key store of the flag
      else if (keyStore != null && pw.getString("trust-store").equals(pw.getString("key-store")))
        b.trustStore(keyStore, pw.getString("key-store-password"));
      if ((keyStore != null || trustStore != null) && !tls && !pw.getBoolean("enabled"))
        throw usage.apply("--key-store and --trust-store need --tls (or MORI4J_TLS=on)");
      return b.build();
    } catch (IllegalArgumentException e) {
      throw usage.apply(e.getMessage());
    }
  }

  /** The flags a child member of the same cluster needs: name and TLS (its passwords come from the inherited environment). */
  List<String> memberArgs() {
    List<String> a = new ArrayList<>();
    if (tls) a.add("--tls");
    if (keyStore != null) a.addAll(List.of("--key-store", keyStore.toString()));
    if (trustStore != null) a.addAll(List.of("--trust-store", trustStore.toString()));
    if (systemName != null) a.addAll(List.of("--system-name", systemName));
    return a;
  }
}
