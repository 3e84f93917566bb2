package org.mori4j.cluster;

import static org.junit.jupiter.api.Assertions.*;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@link ClusterSettings} produces from defaults, environment-style strings and the builder, and what it refuses. */
class ClusterSettingsTest {

  /** reference.conf as {@code ConfigFactory.load()} sees it, with {@code hocon} in place of application.conf/environment. */
  private static Config base(String hocon) {
    ConfigFactory.invalidateCaches();
    return ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve();
  }

  @Test
  void defaultsGiveALoopbackClusterMemberOnPlainTcp() {
    ClusterSettings s = ClusterSettings.fromConfig(base(""));
    Config c = s.toConfig();
    assertEquals("cluster", c.getString("pekko.actor.provider"));
    assertEquals("127.0.0.1", c.getString("pekko.remote.artery.canonical.hostname"));
    assertEquals(0, c.getInt("pekko.remote.artery.canonical.port"));
    assertEquals("tcp", c.getString("pekko.remote.artery.transport"));
    assertEquals(List.of(), c.getStringList("pekko.cluster.seed-nodes"));
    assertEquals("keep-majority", c.getString("pekko.cluster.split-brain-resolver.active-strategy"));
    assertEquals(Duration.ofSeconds(3), c.getDuration("pekko.cluster.failure-detector.acceptable-heartbeat-pause"));
    // reference.conf defaults of other modules still apply underneath
    assertEquals("jackson-cbor", c.getString("pekko.actor.serialization-bindings.\"org.mori4j.cluster.CborSerializable\""));
    assertEquals("", c.getString("pekko.remote.artery.bind.hostname"));
    assertEquals("", c.getString("pekko.remote.artery.bind.port"));
  }

  @Test
  void seedsBecomePekkoAddressesOfTheSystem() {
    ClusterSettings s = ClusterSettings.builder(base("")).systemName("kv-cache").seed("127.0.0.1:25520").seed("[::1]:25521")
        .port(25522).bind("0.0.0.0", 25600).build();
    Config c = s.toConfig();
    assertEquals(List.of("pekko://kv-cache@127.0.0.1:25520", "pekko://kv-cache@[::1]:25521"), c.getStringList("pekko.cluster.seed-nodes"));
    assertEquals(25522, c.getInt("pekko.remote.artery.canonical.port"));
    assertEquals("0.0.0.0", c.getString("pekko.remote.artery.bind.hostname"));
    assertEquals(25600, c.getInt("pekko.remote.artery.bind.port"));
  }

  @Test
  void environmentStyleValuesAreRead() {
    // what MORI4J_SEED_NODES / MORI4J_CLUSTER_PORT / MORI4J_FD_ACCEPTABLE_PAUSE put there: strings
    ClusterSettings s = ClusterSettings.fromConfig(base("""
        mori4j.cluster.node.seed-nodes = "127.0.0.2:25520, 127.0.0.3:25520"
        mori4j.cluster.node.port = "25530"
        mori4j.cluster.node.system-name = cache
        mori4j.cluster.failure-handling.acceptable-heartbeat-pause = 5s
        """));
    assertEquals(List.of("127.0.0.2:25520", "127.0.0.3:25520"), s.seedNodes());
    assertEquals(25530, s.port());
    assertEquals(List.of("pekko://cache@127.0.0.2:25520", "pekko://cache@127.0.0.3:25520"), s.seedAddresses());
    assertEquals(Duration.ofSeconds(5), s.toConfig().getDuration("pekko.cluster.failure-detector.acceptable-heartbeat-pause"));
  }

  @Test
  void downingIsOnEvenWhenPekkosReferenceConfWinsTheClassPathRace() {
    // what the merged reference.conf looks like when Pekko's jar comes before mori4j-cluster's on the class path
    Config pekkoFirst = base("""
        pekko.cluster.downing-provider-class = ""
        pekko.cluster.split-brain-resolver.stable-after = 20s
        """);
    Config c = ClusterSettings.fromConfig(pekkoFirst).toConfig();
    assertEquals("org.apache.pekko.cluster.sbr.SplitBrainResolverProvider", c.getString("pekko.cluster.downing-provider-class"));
    assertEquals(Duration.ofSeconds(7), c.getDuration("pekko.cluster.split-brain-resolver.stable-after"));
    assertEquals("keep-majority", c.getString("pekko.cluster.split-brain-resolver.active-strategy"));

    ClusterSettings off = ClusterSettings.builder(pekkoFirst).downingProviderClass("").build();
    assertEquals("", off.toConfig().getString("pekko.cluster.downing-provider-class"));
    assertTrue(off.toString().contains("downing=off"), off.toString());
  }

  @Test
  void failureDetectorSplitBrainAndFreeOverridesWin() {
    Config c = ClusterSettings.builder(base("")).heartbeatInterval(Duration.ofMillis(500)).acceptableHeartbeatPause(Duration.ofSeconds(2))
        .downingStrategy("keep-oldest").stableAfter(Duration.ofSeconds(4))
        .override("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on")
        .override("pekko.remote.artery.canonical.hostname", "127.0.0.5").build().toConfig();
    assertEquals(Duration.ofMillis(500), c.getDuration("pekko.cluster.failure-detector.heartbeat-interval"));
    assertEquals(Duration.ofSeconds(2), c.getDuration("pekko.cluster.failure-detector.acceptable-heartbeat-pause"));
    assertEquals("keep-oldest", c.getString("pekko.cluster.split-brain-resolver.active-strategy"));
    assertEquals(Duration.ofSeconds(4), c.getDuration("pekko.cluster.split-brain-resolver.stable-after"));
    assertTrue(c.getBoolean("pekko.cluster.jmx.multi-mbeans-in-same-jvm"));
    assertEquals("127.0.0.5", c.getString("pekko.remote.artery.canonical.hostname"));
  }

  @Test
  void badArgumentsAreRefusedNamingArgumentAndValue() {
    Config b = base("");
    assertRefused("seed '127.0.0.1' is not host:port (no port)", () -> ClusterSettings.builder(b).seed("127.0.0.1"));
    assertRefused("seed 'node-a:http' is not host:port (port 'http' is not a number)", () -> ClusterSettings.builder(b).seed("node-a:http"));
    assertRefused("seed 'node-a:0' is not host:port (port 0 out of range 1..65535)", () -> ClusterSettings.builder(b).seed("node-a:0"));
    assertRefused("seed '::1:25520' is not host:port (an IPv6 address needs brackets)", () -> ClusterSettings.builder(b).seed("::1:25520"));
    assertRefused("seed 'pekko://mori4j@h:1' is not host:port", () -> ClusterSettings.builder(b).seeds(List.of("pekko://mori4j@h:1")));
    assertRefused("port 70000 is out of range 0..65535", () -> ClusterSettings.builder(b).port(70000).build());
    assertRefused("bind port -2 is out of range", () -> ClusterSettings.builder(b).bind(null, -2).build());
    assertRefused("host 'two words' is not a host name", () -> ClusterSettings.builder(b).host("two words").build());
    assertRefused("system name 'my app'", () -> ClusterSettings.builder(b).systemName("my app").build());
    assertRefused("acceptable heartbeat pause 'PT0S' must be a positive", () -> ClusterSettings.builder(b).acceptableHeartbeatPause(Duration.ZERO).build());
    assertRefused("downing strategy 'keep-everyone'", () -> ClusterSettings.builder(b).downingStrategy("keep-everyone").build());
    assertRefused("mori4j.cluster.node.port 'abc' is not a port number", () -> ClusterSettings.fromConfig(base("mori4j.cluster.node.port = abc")));
    assertRefused("seed 'a:1:2' is not host:port", () -> ClusterSettings.fromConfig(base("mori4j.cluster.node.seed-nodes = \"a:1:2\"")));
  }

  @Test
  void tlsIsCheckedBeforeArteryEverSeesIt(@TempDir Path dir) throws Exception {
    Config b = base("");
    assertRefused("tls is enabled but no key-store is set (mori4j.cluster.tls.key-store, MORI4J_TLS_KEY_STORE)",
        () -> ClusterSettings.builder(b).tls(true).build());
    Path missing = dir.resolve("missing.p12");
    assertRefused("tls key-store '" + missing + "' is not a readable file",
        () -> ClusterSettings.builder(b).tls(true).keyStore(missing, "x").build());
    TestKeyStores stores = new TestKeyStores(dir);
    Path member = stores.member("member");
    assertRefused("tls key-store '" + member + "' does not open with its password",
        () -> ClusterSettings.builder(b).tls(true).keyStore(member, "wrong").build());
    assertRefused("tls key-store '" + stores.trustStore() + "' holds no private key",
        () -> ClusterSettings.builder(b).tls(true).keyStore(stores.trustStore(), TestKeyStores.PASSWORD).build());
    assertRefused("tls protocol 'TLSv1.1' is not TLSv1.3 or TLSv1.2",
        () -> ClusterSettings.builder(b).tls(true).keyStore(member, TestKeyStores.PASSWORD).tlsProtocol("TLSv1.1").build());
    Path garbage = Files.writeString(dir.resolve("garbage.p12"), "not a key store");
    assertRefused("tls trust-store '" + garbage + "' does not open with its password",
        () -> ClusterSettings.builder(b).tls(true).keyStore(member, TestKeyStores.PASSWORD).trustStore(garbage, "x").build());

    ClusterSettings ok = ClusterSettings.builder(b).tls(true).keyStore(member, TestKeyStores.PASSWORD)
        .trustStore(stores.trustStore(), TestKeyStores.PASSWORD).build();
    Config c = ok.toConfig();
    String ssl = "pekko.remote.artery.ssl.config-ssl-engine.";
    assertEquals("tls-tcp", c.getString("pekko.remote.artery.transport"));
    assertEquals(member.toString(), c.getString(ssl + "key-store"));
    assertEquals(stores.trustStore().toString(), c.getString(ssl + "trust-store"));
    assertTrue(c.getBoolean(ssl + "require-mutual-authentication"));
    assertEquals("TLSv1.3", c.getString(ssl + "protocol"));
    assertFalse(ok.toString().contains(TestKeyStores.PASSWORD), "passwords must not be printed: " + ok);
    // without a trust store of its own, the key store is trusted (the shared self-signed certificate setup)
    ClusterSettings shared = ClusterSettings.builder(b).tls(true).keyStore(member, TestKeyStores.PASSWORD).build();
    assertEquals(member.toString(), shared.tls().trustStore());
  }

  @Test
  void withoutSeedsTheMemberFoundsItsOwnCluster() throws Exception {
    ActorSystem<Void> sys = ClusterSettings.builder().override("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on").build().startSystem();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      while (Cluster.get(sys).selfMember().status() != MemberStatus.up()) {
        assertTrue(System.nanoTime() < deadline, "the member is not Up 15 s after starting: " + Cluster.get(sys).selfMember());
        Thread.sleep(50);
      }
      assertEquals("127.0.0.1", sys.address().getHost().orElseThrow());
    } finally {
      sys.terminate();
      sys.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static void assertRefused(String expectedPart, org.junit.jupiter.api.function.Executable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(expectedPart), "message '" + e.getMessage() + "' should contain '" + expectedPart + "'");
  }
}
