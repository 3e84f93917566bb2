package org.mori4j.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;

/**
 * Everything a process needs to be a member of a mori4j cluster, turned into the Typesafe {@link Config} of
 * its clustered ActorSystem by {@link #toConfig()}: system name, canonical and bind address, seed nodes
 * ({@code host:port}, expanded to {@code pekko://<system>@host:port}), Artery TLS (transport {@code tls-tcp},
 * PKCS12/JKS key and trust stores, mutual authentication always on) and the failure-detector and Split Brain
 * Resolver values that decide how fast a dead member's engine is dropped. Defaults come from
 * {@code mori4j.cluster.node} and {@code mori4j.cluster.tls} in {@code reference.conf} (each with its
 * {@code MORI4J_*} environment variable), so a process configured only by its environment and one built
 * with {@link #builder()} end up the same. Every argument is checked when the settings are built, and a
 * refusal names the argument and its value: a bad seed or a key store that does not open fails here, not
 * later inside Artery with a stack trace about an SSL context.
 */
public final class ClusterSettings {

  /** Pekko's rule for ActorSystem names (also the "system" part of every member address). */
  private static final Pattern SYSTEM_NAME = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_-]*");
  private static final Set<String> DOWNING_STRATEGIES = Set.of("keep-majority", "keep-oldest", "static-quorum",
      "keep-referee", "down-all", "lease-majority");
  private static final String ARTERY_SSL = "pekko.remote.artery.ssl.config-ssl-engine.";

  private final Config base;
  private final String systemName;
  private final String host;
  private final int port;
  private final String bindHost;
  private final int bindPort;
  private final List<String> seedNodes;
  private final Tls tls;
  private final Duration heartbeatInterval;
  private final Duration acceptableHeartbeatPause;
  private final String downingProviderClass;
  private final String downingStrategy;
  private final Duration stableAfter;
  private final Config overrides;

  /**
   * Artery TLS: when {@code enabled}, remoting runs over {@code tls-tcp} with Pekko's
   * {@code ConfigSSLEngineProvider}; every member presents the key store's certificate and accepts only peers
   * whose certificate chains to the trust store (mutual authentication is not optional here). The passwords
   * never appear in {@link #toString()}.
   */
  public record Tls(boolean enabled, String keyStore, String keyStorePassword, String keyPassword, String trustStore,
                    String trustStorePassword, String protocol, List<String> enabledAlgorithms,
                    boolean hostnameVerification) {
    public Tls {
      Objects.requireNonNull(keyStore, "tls key-store");
      Objects.requireNonNull(keyStorePassword, "tls key-store-password");
      Objects.requireNonNull(keyPassword, "tls key-password");
      Objects.requireNonNull(trustStore, "tls trust-store");
      Objects.requireNonNull(trustStorePassword, "tls trust-store-password");
      Objects.requireNonNull(protocol, "tls protocol");
      enabledAlgorithms = List.copyOf(Objects.requireNonNull(enabledAlgorithms, "tls enabled-algorithms"));
    }

    @Override
    public String toString() {
      return "Tls[enabled=" + enabled + ", keyStore=" + keyStore + ", trustStore=" + trustStore + ", protocol=" + protocol
          + ", enabledAlgorithms=" + enabledAlgorithms + ", hostnameVerification=" + hostnameVerification + "]";
    }
  }

  private ClusterSettings(Builder b) {
    this.base = b.base;
    this.systemName = b.systemName;
    this.host = b.host;
    this.port = b.port;
    this.bindHost = b.bindHost;
    this.bindPort = b.bindPort;
    this.seedNodes = List.copyOf(b.seedNodes);
    // no trust store of its own: the key store's certificate is the one to trust (one shared certificate)
    boolean ownTrust = !b.trustStore.isBlank();
    this.tls = new Tls(b.tlsEnabled, b.keyStore, b.keyStorePassword, b.keyPassword, ownTrust ? b.trustStore : b.keyStore,
        ownTrust ? b.trustStorePassword : b.keyStorePassword, b.tlsProtocol, b.enabledAlgorithms, b.hostnameVerification);
    this.heartbeatInterval = b.heartbeatInterval;
    this.acceptableHeartbeatPause = b.acceptableHeartbeatPause;
    this.downingProviderClass = b.downingProviderClass == null ? "" : b.downingProviderClass.trim();
    this.downingStrategy = b.downingStrategy;
    this.stableAfter = b.stableAfter;
    this.overrides = b.overrides;
    validate();
  }

  /** A builder preset from {@code ConfigFactory.load()}: reference.conf, application.conf, environment. */
  public static Builder builder() {
    return builder(ConfigFactory.load());
  }

  /** A builder preset from {@code base}, which must contain this module's reference.conf (as load() does). */
  public static Builder builder(Config base) {
    return new Builder(Objects.requireNonNull(base, "base config"));
  }

  /** The settings exactly as configuration and environment give them. */
  public static ClusterSettings fromConfig(Config base) {
    return builder(base).build();
  }

  public String systemName() { return systemName; }
  public String host() { return host; }
  public int port() { return port; }
  /** The address the socket binds; the canonical host when none was given. */
  public String bindHost() { return bindHost.isEmpty() ? host : bindHost; }
  /** The port the socket binds; the canonical port when none was given. */
  public int bindPort() { return bindPort < 0 ? port : bindPort; }
  /** Seeds as given, {@code host:port}. */
  public List<String> seedNodes() { return seedNodes; }
  public Tls tls() { return tls; }
  public Duration heartbeatInterval() { return heartbeatInterval; }
  public Duration acceptableHeartbeatPause() { return acceptableHeartbeatPause; }
  /** Empty when nobody is to be downed automatically (then a crashed member is never removed). */
  public String downingProviderClass() { return downingProviderClass; }
  public String downingStrategy() { return downingStrategy; }
  public Duration stableAfter() { return stableAfter; }

  /** The seeds as Pekko addresses: {@code pekko://<system>@host:port}. */
  public List<String> seedAddresses() {
    List<String> out = new ArrayList<>(seedNodes.size());
    for (String s : seedNodes) out.add("pekko://" + systemName + "@" + s);
    return out;
  }

  /**
   * The complete configuration for the member's ActorSystem: explicit overrides first, then what these
   * settings generate, then the base configuration (so every reference.conf default still applies).
   */
  public Config toConfig() {
    Config c = ConfigFactory.empty()
        .withValue("pekko.actor.provider", ConfigValueFactory.fromAnyRef("cluster"))
        .withValue("pekko.remote.artery.canonical.hostname", ConfigValueFactory.fromAnyRef(host))
        .withValue("pekko.remote.artery.canonical.port", ConfigValueFactory.fromAnyRef(port))
        // an empty bind host/port means "as canonical" to Artery: keep that meaning instead of copying values
        .withValue("pekko.remote.artery.bind.hostname", ConfigValueFactory.fromAnyRef(bindHost))
        .withValue("pekko.remote.artery.bind.port", ConfigValueFactory.fromAnyRef(bindPort < 0 ? "" : Integer.toString(bindPort)))
        .withValue("pekko.cluster.seed-nodes", ConfigValueFactory.fromIterable(seedAddresses()))
        .withValue("pekko.remote.artery.transport", ConfigValueFactory.fromAnyRef(tls.enabled() ? "tls-tcp" : "tcp"))
        .withValue("pekko.cluster.failure-detector.heartbeat-interval", ConfigValueFactory.fromAnyRef(heartbeatInterval))
        .withValue("pekko.cluster.failure-detector.acceptable-heartbeat-pause", ConfigValueFactory.fromAnyRef(acceptableHeartbeatPause))
        .withValue("pekko.cluster.split-brain-resolver.active-strategy", ConfigValueFactory.fromAnyRef(downingStrategy))
        .withValue("pekko.cluster.split-brain-resolver.stable-after", ConfigValueFactory.fromAnyRef(stableAfter))
        .withValue("pekko.cluster.downing-provider-class", ConfigValueFactory.fromAnyRef(downingProviderClass));
    if (tls.enabled()) {
      c = c.withValue("pekko.remote.artery.ssl.ssl-engine-provider",
              ConfigValueFactory.fromAnyRef("org.apache.pekko.remote.artery.tcp.ConfigSSLEngineProvider"))
          .withValue(ARTERY_SSL + "key-store", ConfigValueFactory.fromAnyRef(tls.keyStore()))
          .withValue(ARTERY_SSL + "key-store-password", ConfigValueFactory.fromAnyRef(tls.keyStorePassword()))
          .withValue(ARTERY_SSL + "key-password", ConfigValueFactory.fromAnyRef(tls.keyPassword()))
          .withValue(ARTERY_SSL + "trust-store", ConfigValueFactory.fromAnyRef(tls.trustStore()))
          .withValue(ARTERY_SSL + "trust-store-password", ConfigValueFactory.fromAnyRef(tls.trustStorePassword()))
          .withValue(ARTERY_SSL + "protocol", ConfigValueFactory.fromAnyRef(tls.protocol()))
          .withValue(ARTERY_SSL + "enabled-algorithms", ConfigValueFactory.fromIterable(tls.enabledAlgorithms()))
          .withValue(ARTERY_SSL + "require-mutual-authentication", ConfigValueFactory.fromAnyRef(true))
          .withValue(ARTERY_SSL + "hostname-verification", ConfigValueFactory.fromAnyRef(tls.hostnameVerification()));
    }
    return overrides.withFallback(c).withFallback(base).resolve();
  }

  /**
   * Starts the member's ActorSystem with {@link #toConfig()}. Without seeds the member joins itself and so
   * founds a cluster that others can join through its address; with seeds Pekko joins them by itself.
   */
  public ActorSystem<Void> startSystem() {
    ActorSystem<Void> sys = ActorSystem.create(Behaviors.empty(), systemName, toConfig());
    if (seedNodes.isEmpty()) {
      Cluster cluster = Cluster.get(sys);
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
    }
    return sys;
  }

  @Override
  public String toString() {
    return "ClusterSettings[system=" + systemName + ", canonical=" + hostPort(host, port) + ", bind="
        + hostPort(bindHost(), bindPort()) + ", seeds=" + seedNodes + ", " + tls + ", heartbeat-interval=" + heartbeatInterval
        + ", acceptable-heartbeat-pause=" + acceptableHeartbeatPause + ", downing=" + (downingProviderClass.isEmpty() ? "off" : downingStrategy)
        + ", stable-after=" + stableAfter + "]";
  }

  private static String hostPort(String h, int p) {
    return (h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + p;
  }

  private void validate() {
    if (systemName == null || !SYSTEM_NAME.matcher(systemName).matches())
      throw SettingsChecks.bad("system name '" + systemName + "' is not a valid ActorSystem name (letters, digits, '-', '_'; not starting with '-' or '_')");
    SettingsChecks.checkHost("host", host);
    SettingsChecks.checkPort("port", port, 0);
    if (!bindHost.isEmpty()) SettingsChecks.checkHost("bind host", bindHost);
    if (bindPort != -1) SettingsChecks.checkPort("bind port", bindPort, 0);
    for (String s : seedNodes) SettingsChecks.checkSeed(s);
    SettingsChecks.checkPositive("heartbeat interval", heartbeatInterval);
    SettingsChecks.checkPositive("acceptable heartbeat pause", acceptableHeartbeatPause);
    SettingsChecks.checkPositive("stable-after", stableAfter);
    if (!DOWNING_STRATEGIES.contains(downingStrategy))
      throw SettingsChecks.bad("downing strategy '" + downingStrategy + "' is not one of " + new java.util.TreeSet<>(DOWNING_STRATEGIES));
    if (tls.enabled()) SettingsChecks.checkTls(tls);
  }

  /**
   * Collects the settings; starts from the base configuration's values, and {@link #build()} validates. Not
   * thread-safe, and reusable: each build takes a snapshot.
   */
  public static final class Builder {
    private final Config base;
    private String systemName;
    private String host;
    private int port;
    private String bindHost;
    private int bindPort;
    private final List<String> seedNodes = new ArrayList<>();
    private boolean tlsEnabled;
    private String keyStore;
    private String keyStorePassword;
    private String keyPassword;
    private String trustStore;
    private String trustStorePassword;
    private String tlsProtocol;
    private List<String> enabledAlgorithms;
    private boolean hostnameVerification;
    private Duration heartbeatInterval;
    private Duration acceptableHeartbeatPause;
    private String downingProviderClass;
    private String downingStrategy;
    private Duration stableAfter;
    private Config overrides = ConfigFactory.empty();

    private Builder(Config base) {
      this.base = base;
      Config n = base.getConfig("mori4j.cluster.node");
      systemName = n.getString("system-name");
      host = n.getString("host");
      port = intSetting(n, "port", "mori4j.cluster.node.port");
      bindHost = n.getString("bind-host");
      bindPort = n.getString("bind-port").isBlank() ? -1 : intSetting(n, "bind-port", "mori4j.cluster.node.bind-port");
      seedNodes.addAll(stringList(n, "seed-nodes"));
      Config t = base.getConfig("mori4j.cluster.tls");
      tlsEnabled = t.getBoolean("enabled");
      keyStore = t.getString("key-store");
      keyStorePassword = t.getString("key-store-password");
      keyPassword = t.getString("key-password");
      trustStore = t.getString("trust-store");
      trustStorePassword = t.getString("trust-store-password");
      tlsProtocol = t.getString("protocol");
      enabledAlgorithms = stringList(t, "enabled-algorithms");
      hostnameVerification = t.getBoolean("hostname-verification");
      // read from mori4j.* and not pekko.*: Pekko's reference.conf may win the pekko.* keys (class-path order)
      Config f = base.getConfig("mori4j.cluster.failure-handling");
      downingProviderClass = f.getString("downing-provider-class");
      heartbeatInterval = f.getDuration("heartbeat-interval");
      acceptableHeartbeatPause = f.getDuration("acceptable-heartbeat-pause");
      downingStrategy = f.getString("downing-strategy");
      stableAfter = f.getDuration("stable-after");
    }

    private static int intSetting(Config c, String key, String path) {
      String v = c.getString(key).trim();
      try {
        return Integer.parseInt(v);
      } catch (NumberFormatException e) {
        throw SettingsChecks.bad(path + " '" + v + "' is not a port number");
      }
    }

    /** A list setting, or a comma-separated string (what an environment variable can carry). */
    private static List<String> stringList(Config c, String key) {
      if (c.getValue(key).valueType() == ConfigValueType.LIST) return List.copyOf(c.getStringList(key));
      List<String> out = new ArrayList<>();
      for (String s : c.getString(key).split(",")) if (!s.isBlank()) out.add(s.trim());
      return out;
    }

    public Builder systemName(String name) { this.systemName = name; return this; }
    /** The canonical host: the address other members and engines use to reach this one. */
    public Builder host(String host) { this.host = host; return this; }
    /** The canonical port; 0 picks a free one (then the member cannot be a seed named in advance). */
    public Builder port(int port) { this.port = port; return this; }
    /** Binds another address than the canonical one (behind NAT or in a container); null host keeps the canonical. */
    public Builder bind(String host, int port) { this.bindHost = host == null ? "" : host; this.bindPort = port; return this; }
    /** Adds a seed, {@code host:port}. */
    public Builder seed(String hostPort) { SettingsChecks.checkSeed(hostPort); seedNodes.add(hostPort); return this; }
    /** Replaces the seeds, each {@code host:port}. */
    public Builder seeds(List<String> hostPorts) {
      for (String s : Objects.requireNonNull(hostPorts, "seeds")) SettingsChecks.checkSeed(s);
      seedNodes.clear();
      seedNodes.addAll(hostPorts);
      return this;
    }
    public Builder tls(boolean enabled) { this.tlsEnabled = enabled; return this; }
    /** The member's own key and certificate; the key password is set to the same password (keytool's PKCS12 default). */
    public Builder keyStore(Path file, String password) {
      this.keyStore = Objects.requireNonNull(file, "key store").toString();
      this.keyStorePassword = Objects.requireNonNull(password, "key store password");
      this.keyPassword = password;
      return this;
    }
    public Builder keyPassword(String password) { this.keyPassword = Objects.requireNonNull(password, "key password"); return this; }
    /** The certificates this member accepts from peers (typically the cluster's CA, or the shared self-signed one). */
    public Builder trustStore(Path file, String password) {
      this.trustStore = Objects.requireNonNull(file, "trust store").toString();
      this.trustStorePassword = Objects.requireNonNull(password, "trust store password");
      return this;
    }
    public Builder tlsProtocol(String protocol) { this.tlsProtocol = protocol; return this; }
    public Builder enabledAlgorithms(List<String> suites) { this.enabledAlgorithms = List.copyOf(suites); return this; }
    public Builder hostnameVerification(boolean on) { this.hostnameVerification = on; return this; }
    public Builder heartbeatInterval(Duration d) { this.heartbeatInterval = d; return this; }
    public Builder acceptableHeartbeatPause(Duration d) { this.acceptableHeartbeatPause = d; return this; }
    /** The downing provider; empty turns automatic downing off. Default: Pekko's Split Brain Resolver. */
    public Builder downingProviderClass(String className) { this.downingProviderClass = className; return this; }
    public Builder downingStrategy(String strategy) { this.downingStrategy = strategy; return this; }
    public Builder stableAfter(Duration d) { this.stableAfter = d; return this; }
    /** Any other setting, applied above everything these settings generate. */
    public Builder override(String path, Object value) {
      this.overrides = ConfigFactory.empty().withValue(path, ConfigValueFactory.fromAnyRef(value)).withFallback(overrides);
      return this;
    }
    /** Several other settings at once (e.g. parsed HOCON), applied above everything these settings generate. */
    public Builder overrides(Config more) { this.overrides = more.withFallback(overrides); return this; }

    public ClusterSettings build() { return new ClusterSettings(this); }
  }
}
