package org.mori4j.cluster;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * Artery TLS configured through {@link ClusterSettings} alone, with key material made by keytool for this run:
 * members whose certificates the test CA signed form a cluster on 127.0.0.1 and their engines register each
 * other and move bytes; a member with a certificate the CA never signed, one whose certificate names another
 * host (hostname verification is on), and a member speaking plain TCP, do not get in. The refusals are checked against a running TLS seed that admitted a trusted member in the
 * same way, so a seed that admits nobody cannot pass them. The three outsiders are independent of each other, so
 * they try to join one such seed at the same time and are watched together for the whole {@link #REFUSED_FOR}
 * ({@link Refusals}): each refusal test reads its own outsider's record instead of waiting out the window again.
 */
class TlsClusterTest {
  private static final Duration FORM = Duration.ofSeconds(20);
  /** How long a refused node keeps trying: several of Pekko's join retries (seed-node-timeout 5 s). */
  private static final Duration REFUSED_FOR = Duration.ofSeconds(12);
  private static final int SIZE = 256 * 1024;

  @TempDir
  static Path dir;
  private static TestKeyStores stores;
  private static Path seedStore;
  private static Path memberStore;
  private static Path strangerStore;
  private static Path elsewhereStore;
  private final List<ActorSystem<Void>> systems = new ArrayList<>();
  private final List<IoEngine> engines = new ArrayList<>();
  /** When each system may be left: terminated, or stuck after its last shutdown phase (a node kept out may retry its handshake). */
  private final List<CompletionStage<Done>> stopped = new ArrayList<>();

  @BeforeAll
  static void keys() throws Exception {
    stores = new TestKeyStores(dir);
    seedStore = stores.member("seed");
    memberStore = stores.member("member");
    strangerStore = stores.stranger("stranger");
    elsewhereStore = stores.member("elsewhere", "DNS:elsewhere.invalid");
  }

  @AfterEach
  void stop() throws Exception {
    for (IoEngine e : engines) e.close();
    for (ActorSystem<Void> s : systems) s.terminate();
    for (CompletionStage<Done> s : stopped) s.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  @AfterAll
  static void stopRefusals() throws Exception {
    if (refusals != null) refusals.stop();
  }

  private static ClusterSettings.Builder tls(Path keyStore, Path trustStore) {
    return ClusterSettings.builder().tls(true).keyStore(keyStore, TestKeyStores.PASSWORD).trustStore(trustStore, TestKeyStores.PASSWORD)
        // certificates carry a SAN for 127.0.0.1, so the strict setting holds here
        .hostnameVerification(true)
        .override("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on");
  }

  private ActorSystem<Void> start(ClusterSettings s) {
    return start(s, systems, stopped);
  }

  private static ActorSystem<Void> start(ClusterSettings s, List<ActorSystem<Void>> systems, List<CompletionStage<Done>> stopped) {
    ActorSystem<Void> sys = s.startSystem();
    systems.add(sys);
    stopped.add(MemberStop.whenStopped(sys));
    return sys;
  }

  private static String hostPort(ActorSystem<?> sys) {
    return sys.address().getHost().orElseThrow() + ":" + sys.address().getPort().orElseThrow();
  }

  @Test
  void membersSignedByTheClusterCaFormAClusterOverTlsAndTheirEnginesTransfer() throws Exception {
    ActorSystem<Void> seed = start(tls(seedStore, stores.trustStore()).build());
    awaitUp(seed, 1);
    ActorSystem<Void> second = start(tls(memberStore, stores.trustStore()).seed(hostPort(seed)).build());
    awaitUp(seed, 2);
    awaitUp(second, 2);
    assertEquals("tls-tcp", seed.settings().config().getString("pekko.remote.artery.transport"));

    String run = Long.toHexString(System.nanoTime());
    List<ActorRef<ClusterEngine.Command>> members = new ArrayList<>();
    for (ActorSystem<Void> sys : systems) {
      IoEngine e = IoEngine.create(sys, "tls-" + run + "-" + engines.size(), IoEngineConfig.loopback());
      engines.add(e);
      e.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      members.add(ClusterEngine.start(e));
    }
    awaitRegistered(seed, members.get(0), Set.of(engines.get(1).key()));
    awaitRegistered(second, members.get(1), Set.of(engines.get(0).key()));

    try (Arena arena = Arena.ofShared()) {
      MemorySegment a = arena.allocate(SIZE, 8);
      MemorySegment b = arena.allocate(SIZE, 8);
      MemoryDesc da = engines.get(0).registerMemory(a);
      MemoryDesc db = engines.get(1).registerMemory(b);
      fill(a, 1);
      transfer(engines.get(0).write(da, 0, db, 0, SIZE, engines.get(0).allocateTransferUid()), "seed writes to second");
      assertEquals(-1L, a.mismatch(b), "bytes written seed -> second");
      fill(b, 2);
      transfer(engines.get(0).read(da, 0, db, 0, SIZE, engines.get(0).allocateTransferUid()), "seed reads from second");
      assertEquals(-1L, a.mismatch(b), "bytes read second -> seed");
    }
  }

  @Test
  void aNodeWithACertificateTheClusterDoesNotTrustCannotJoin() throws Exception {
    // the stranger trusts the cluster's CA, so it accepts the seed; the seed refuses the stranger (it has no
    // certificate the CA signed to present), in both directions of Artery's connections
    refusals().assertStayedOut(STRANGER);
  }

  @Test
  void withHostnameVerificationANodeWhoseCertificateNamesAnotherHostCannotJoin() throws Exception {
    // signed by the cluster's CA, but for elsewhere.invalid, while the node listens on 127.0.0.1: the seed's
    // connection to it fails verification, so Artery's handshake never completes and the join is never answered
    refusals().assertStayedOut(ELSEWHERE);
  }

  @Test
  void aPlainTcpNodeCannotJoinATlsCluster() throws Exception {
    Refusals r = refusals();
    assertEquals("tcp", r.outsiders.get(PLAIN).settings().config().getString("pekko.remote.artery.transport"));
    r.assertStayedOut(PLAIN);
  }

  @Test
  void theTlsPortDemandsAClientCertificateSignedByTheClusterCa() throws Exception {
    ActorSystem<Void> seed = start(tls(seedStore, stores.trustStore()).build());
    awaitUp(seed, 1);
    int port = seed.address().getPort().orElseThrow();
    // a client that trusts the cluster (so the server's certificate is fine) but has no certificate of its
    // own: only mutual authentication refuses it, with TLS 1.3's certificate_required alert
    String noCertificate = probe(port, null);
    assertTrue(noCertificate.startsWith("refused") && noCertificate.contains("certificate_required"), noCertificate);
    // the control: the same client with a member's certificate passes the TLS layer (Artery then waits for
    // its framing, or drops the connection)
    String member = probe(port, memberStore);
    assertTrue(member.startsWith("passed"), member);
  }

  /**
   * Opens a raw TLS connection to {@code port} trusting the cluster's CA and presenting {@code keyStore}'s
   * certificate (none when null), then reads: TLS 1.3 reports a refused client certificate only after the
   * client's side of the handshake, as an alert on the first read. Nothing is written, so the alert cannot
   * be lost to a reset caused by unread bytes.
   */
  private static String probe(int port, Path keyStore) throws Exception {
    char[] pw = TestKeyStores.PASSWORD.toCharArray();
    var tmf = javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(java.security.KeyStore.getInstance(stores.trustStore().toFile(), pw));
    javax.net.ssl.KeyManager[] km = null;
    if (keyStore != null) {
      var kmf = javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(java.security.KeyStore.getInstance(keyStore.toFile(), pw), pw);
      km = kmf.getKeyManagers();
    }
    var ctx = javax.net.ssl.SSLContext.getInstance("TLSv1.3");
    ctx.init(km, tmf.getTrustManagers(), null);
    try (var socket = (javax.net.ssl.SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(3_000);
      socket.startHandshake();
      int b = socket.getInputStream().read();
      return "passed: read " + b;
    } catch (javax.net.ssl.SSLException e) {
      return "refused: " + e;
    } catch (java.io.IOException e) {
      return "passed: " + e;
    }
  }

  private static final String STRANGER = "stranger", ELSEWHERE = "elsewhere", PLAIN = "plain";
  private static Refusals refusals;

  /** The refusal tests' seed and outsiders, started by whichever of them runs first. */
  private static synchronized Refusals refusals() throws Exception {
    if (refusals == null) refusals = new Refusals();
    return refusals;
  }

  /**
   * A TLS seed that has just admitted a trusted member (proof that it accepts joins at all), then the three outsiders
   * pointed at it together: a stranger's certificate, one for another host, plain TCP. Each outsider is watched for
   * {@link #REFUSED_FOR} from its start; the first thing that would have let it in is recorded against it.
   */
  private static final class Refusals {
    final List<ActorSystem<Void>> systems = new ArrayList<>();
    final List<CompletionStage<Done>> stopped = new ArrayList<>();
    final ActorSystem<Void> seed;
    final Map<String, ActorSystem<Void>> outsiders = new LinkedHashMap<>();
    final Map<String, String> violations = new java.util.concurrent.ConcurrentHashMap<>();
    final long watchEnd;
    boolean watched;

    Refusals() throws Exception {
      try {
        seed = start(tls(seedStore, stores.trustStore()).build(), systems, stopped);
        awaitUp(seed, 1);
        ActorSystem<Void> member = start(tls(memberStore, stores.trustStore()).seed(hostPort(seed)).build(), systems, stopped);
        awaitUp(seed, 2);
        awaitUp(member, 2);
        outsiders.put(STRANGER, start(tls(strangerStore, stores.trustStore()).seed(hostPort(seed)).build(), systems, stopped));
        outsiders.put(ELSEWHERE, start(tls(elsewhereStore, stores.trustStore()).seed(hostPort(seed)).build(), systems, stopped));
        outsiders.put(PLAIN, start(ClusterSettings.builder().seed(hostPort(seed))
            .override("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on").build(), systems, stopped));
      } catch (Exception | AssertionError e) {
        for (ActorSystem<Void> s : systems) s.terminate(); // the next refusal test starts over
        throw e;
      }
      watchEnd = System.nanoTime() + REFUSED_FOR.toNanos();
    }

    /** Watches every outsider until the window ends (once), then fails with what let {@code name} in, if anything did. */
    synchronized void assertStayedOut(String name) throws InterruptedException {
      if (!watched) {
        while (System.nanoTime() < watchEnd) {
          Set<String> known = addresses(seed);
          outsiders.forEach((who, outsider) -> {
            String v = null;
            MemberStatus self = Cluster.get(outsider).selfMember().status();
            if (known.contains(outsider.address().toString())) v = "the TLS cluster accepted " + outsider.address() + " as a member: " + known;
            else if (known.size() != 2) v = "members of the TLS cluster: expected 2 (seed and member), got " + known;
            else if (self.equals(MemberStatus.up())) v = "the outsider believes it is Up";
            else if (self.equals(MemberStatus.joining())) v = "the outsider got as far as Joining";
            if (v != null) violations.putIfAbsent(who, v);
          });
          Thread.sleep(200);
        }
        watched = true;
      }
      String v = violations.get(name);
      assertNull(v, name + " (" + outsiders.get(name).address() + "): " + v);
    }

    void stop() throws Exception {
      for (ActorSystem<Void> s : systems) s.terminate();
      for (CompletionStage<Done> s : stopped) s.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static Set<String> addresses(ActorSystem<?> sys) {
    return StreamSupport.stream(Cluster.get(sys).state().getMembers().spliterator(), false)
        .map(m -> m.address().toString()).collect(Collectors.toSet());
  }

  private static void awaitUp(ActorSystem<?> sys, int members) throws InterruptedException {
    long deadline = System.nanoTime() + FORM.toNanos();
    while (true) {
      List<Member> up = new ArrayList<>();
      for (Member m : Cluster.get(sys).state().getMembers()) if (m.status() == MemberStatus.up()) up.add(m);
      if (up.size() == members) return;
      assertTrue(System.nanoTime() < deadline, sys.address() + ": " + up.size() + " members Up after " + FORM + ", expected "
          + members + " (" + Cluster.get(sys).state() + ")");
      Thread.sleep(100);
    }
  }

  private static void awaitRegistered(ActorSystem<?> sys, ActorRef<ClusterEngine.Command> member, Set<String> expected) throws Exception {
    long deadline = System.nanoTime() + FORM.toNanos();
    Set<String> got = Set.of();
    while (System.nanoTime() < deadline) {
      got = AskPattern.<ClusterEngine.Command, Set<String>>ask(member, ClusterEngine.GetRegisteredEngines::new,
          Duration.ofSeconds(5), sys.scheduler()).toCompletableFuture().get(10, TimeUnit.SECONDS);
      if (got.equals(expected)) return;
      Thread.sleep(100);
    }
    fail(sys.address() + " registered " + got + " within " + FORM + ", expected " + expected);
  }

  private static void transfer(TransferStatus s, String what) {
    assertTrue(s.await(Duration.ofSeconds(10)), what + ": still in progress after 10 s");
    assertTrue(s.succeeded(), what + ": " + s.code() + " " + s.message());
  }

  private static void fill(MemorySegment seg, int seed) {
    java.util.Random r = new java.util.Random(seed);
    for (long o = 0; o < seg.byteSize(); o += 8) seg.set(ValueLayout.JAVA_LONG, o, r.nextLong());
  }
}
