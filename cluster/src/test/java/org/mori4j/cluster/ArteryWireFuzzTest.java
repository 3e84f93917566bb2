package org.mori4j.cluster;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * A clustered node's Artery port (Pekko remoting over TCP) against raw connections that are not Pekko: random
 * bytes, a valid connection header followed by random frames on each stream (control, ordinary, large), frames
 * longer than the stream's limit or of length zero, and connections that say nothing. Two members on
 * 127.0.0.1, each with an engine that found the other through the cluster; during and after the attack both
 * must stay up, members with nobody unreachable, keep each other's engine registered and move bytes between
 * their engines, and the file descriptors of this JVM must return to their baseline once the raw connections
 * are closed.
 *
 * <p>Negative frame lengths, and lengths near 2^31 that overflow the parser's read offset, are sent only where
 * Pekko survives them: Pekko 1.7.0's TCP framing checks neither, moves its read offset backwards and decodes
 * garbage for ever from one connection's bytes (apache/pekko#3492, fixed after 1.7.0; on this VM the
 * inbound stream then logs ~200,000 lines a second until heartbeats starve and the cluster downs both
 * members). Over TLS ({@code mori4j.cluster.tls}) a connection without a certificate the cluster trusts never
 * reaches the framing, so the TLS case sends them; the plain case sends them once the Pekko in use is newer
 * than 1.7.0. Seed fixed ({@code
 * -Dmori4j.fuzz.seed=N}), printed in every failure.
 */
class ArteryWireFuzzTest {
  private static final long SEED = Long.getLong("mori4j.fuzz.seed", 0x41525445L);
  private static final int SIZE = 1 << 20;
  private static final Duration DEADLINE = Duration.ofSeconds(20);
  /** Artery's connection header: a magic (Akka's, or Pekko's own) and the stream: 1 control, 2 ordinary, 3 large. */
  private static final byte[][] MAGICS = {{'A', 'K', 'K', 'A'}, {'P', 'E', 'K', 'K'}};
  /** Past the ordinary limit (256 KiB), past the large one (2 MiB), and zero. */
  private static final int[] LONG_LENGTHS = {256 * 1024 + 1, 2 * 1024 * 1024 + 1, 0};
  /** Lengths that Pekko 1.7.0 turns into a step backwards: negative, or so large that its read offset overflows. */
  private static final int[] HOSTILE_LENGTHS = {Integer.MAX_VALUE, Integer.MAX_VALUE - 7, -1, -5, -4096, Integer.MIN_VALUE};

  @TempDir static Path dir;

  private final List<ActorSystem<Void>> systems = new ArrayList<>();
  private final List<IoEngine> engines = new ArrayList<>();
  private final List<CompletionStage<Done>> stopped = new ArrayList<>();
  private final List<SocketChannel> raw = new ArrayList<>();

  private record Node(ActorSystem<Void> system, IoEngine engine, ActorRef<ClusterEngine.Command> member) {}

  @AfterEach
  void stop() throws Exception {
    for (SocketChannel c : raw) c.close();
    for (IoEngine e : engines) e.close();
    for (ActorSystem<Void> s : systems) s.terminate();
    for (CompletionStage<Done> s : stopped) s.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static ClusterSettings.Builder plain() {
    return ClusterSettings.builder().host("127.0.0.1").port(0).override("pekko.cluster.jmx.multi-mbeans-in-same-jvm", "on");
  }

  @Test
  void garbageAndOversizedFramesLeaveAPlainNodeUpAndServing() throws Exception {
    attack(pair(plain(), plain()), false);
  }

  @Test
  void negativeAndOverflowingFrameLengthsLeaveAPlainNodeUpOncePekkoRejectsThem() throws Exception {
    assumeTrue(pekkoNewerThan170(), "Pekko " + org.apache.pekko.Version.current() + " decodes a negative or"
        + " offset-overflowing Artery frame length for ever (apache/pekko#3492, fixed after 1.7.0)");
    attack(pair(plain(), plain()), true);
  }

  @Test
  void overTlsTheSameBytesAndHostileLengthsNeverReachTheFraming() throws Exception {
    long t0 = System.nanoTime();
    TestKeyStores stores = new TestKeyStores(dir);
    Path member = stores.member("fuzz-member"); // both members on 127.0.0.1 may share one key pair
    long t1 = System.nanoTime();
    List<Node> nodes = pair(tls(plain(), member, stores), tls(plain(), member, stores));
    System.out.printf("TLS key stores %d ms, cluster of two %d ms%n", (t1 - t0) / 1_000_000, (System.nanoTime() - t1) / 1_000_000);
    attack(nodes, true);
  }

  private static ClusterSettings.Builder tls(ClusterSettings.Builder b, Path keyStore, TestKeyStores stores) {
    return b.tls(true).keyStore(keyStore, TestKeyStores.PASSWORD).trustStore(stores.trustStore(), TestKeyStores.PASSWORD)
        .hostnameVerification(true);
  }

  static boolean pekkoNewerThan170() {
    int[] v = Arrays.stream(org.apache.pekko.Version.current().split("[.-]")).limit(3).mapToInt(Integer::parseInt).toArray();
    return v[0] > 1 || (v[0] == 1 && (v[1] > 7 || (v[1] == 7 && v[2] > 0)));
  }

  /** Two members (the first the seed), each with an engine and a TCP backend, registered with each other. */
  private List<Node> pair(ClusterSettings.Builder first, ClusterSettings.Builder second) throws Exception {
    List<Node> nodes = new ArrayList<>();
    String run = Long.toHexString(System.nanoTime());
    ActorSystem<Void> seed = start(first.build());
    awaitUp(seed, 1);
    start(second.seed(seed.address().getHost().orElseThrow() + ":" + seed.address().getPort().orElseThrow()).build());
    for (ActorSystem<Void> sys : systems) awaitUp(sys, 2);
    for (ActorSystem<Void> sys : systems) {
      IoEngine e = IoEngine.create(sys, "artery-fuzz-" + run + "-" + engines.size(), IoEngineConfig.loopback());
      engines.add(e);
      e.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      nodes.add(new Node(sys, e, ClusterEngine.start(e)));
    }
    for (int i = 0; i < 2; i++) awaitRegistered(nodes.get(i), Set.of(nodes.get(1 - i).engine().key()));
    return nodes;
  }

  private ActorSystem<Void> start(ClusterSettings s) {
    ActorSystem<Void> sys = s.startSystem();
    systems.add(sys);
    stopped.add(MemberStop.whenStopped(sys));
    return sys;
  }

  /** Counts what Pekko logs during an attack (reported, not asserted: Pekko logs one line per dropped frame). */
  private static final class Counter extends ch.qos.logback.core.AppenderBase<ch.qos.logback.classic.spi.ILoggingEvent> {
    final java.util.concurrent.atomic.AtomicLong lines = new java.util.concurrent.atomic.AtomicLong();

    @Override
    protected void append(ch.qos.logback.classic.spi.ILoggingEvent e) {
      lines.incrementAndGet();
    }
  }

  private void attack(List<Node> nodes, boolean hostileLengths) throws Exception {
    var pekkoLog = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("org.apache.pekko");
    Counter counter = new Counter();
    counter.start();
    pekkoLog.addAppender(counter);
    try (Arena arena = Arena.ofShared()) {
      MemorySegment[] mem = {arena.allocate(SIZE, 8), arena.allocate(SIZE, 8)};
      MemoryDesc[] desc = {nodes.get(0).engine().registerMemory(mem[0]), nodes.get(1).engine().registerMemory(mem[1])};
      assertServing(nodes, mem, desc, 0, "before the attack");
      long baselineFds = fds();
      long started = System.nanoTime();
      InetSocketAddress target = new InetSocketAddress("127.0.0.1", nodes.get(0).system().address().getPort().orElseThrow());
      SplittableRandom rnd = new SplittableRandom(SEED);
      int connections = 0, closedByNode = 0;
      String seed = " (seed " + SEED + ")";

      for (int i = 0; i < 50; i++) raw.add(SocketChannel.open(target)); // say nothing, held through the attack
      for (int i = 0; i < 24; i++, connections++) { // random bytes from the first byte on: no magic
        if (send(target, random(rnd, 1 + rnd.nextInt(i % 2 == 0 ? 16 : 65536)), true)) closedByNode++;
      }
      assertServing(nodes, mem, desc, 1, "after random bytes" + seed);
      for (int i = 0; i < 24; i++, connections++) { // a valid header, then random frames of valid lengths
        ByteBuffer b = ByteBuffer.allocate(128 * 1024).order(ByteOrder.LITTLE_ENDIAN);
        b.put(MAGICS[i % 2]).put((byte) (1 + i % 3));
        for (int f = 1 + rnd.nextInt(16); f > 0 && b.remaining() > 8200; f--) {
          int len = 1 + rnd.nextInt(8191);
          b.putInt(len).put(random(rnd, len));
        }
        send(target, Arrays.copyOf(b.array(), b.position()), false);
      }
      assertServing(nodes, mem, desc, 2, "after random frames" + seed);
      List<Integer> lengths = new ArrayList<>();
      for (int l : LONG_LENGTHS) lengths.add(l);
      if (hostileLengths) for (int l : HOSTILE_LENGTHS) lengths.add(l);
      for (int stream = 1; stream <= 3; stream++) {
        for (int len : lengths) {
          // the header, the length, and (for a length the node waits for) bytes that stop short of it
          ByteBuffer b = ByteBuffer.allocate(5 + 4 + (len > 0 ? 4096 : 0)).order(ByteOrder.LITTLE_ENDIAN);
          b.put(MAGICS[stream % 2]).put((byte) stream).putInt(len);
          if (send(target, b.array(), len != 0)) closedByNode++;
          connections++;
        }
      }
      assertServing(nodes, mem, desc, 3, "after oversized" + (hostileLengths ? " and hostile" : "") + " frame lengths" + seed);
      for (SocketChannel c : raw) c.close();
      raw.clear();
      System.out.printf("artery fuzz%s: %d connections of garbage (%d closed by the node), 50 idle ones, %d ms; Pekko logged %d lines%n",
          hostileLengths ? " with hostile lengths" : "", connections, closedByNode, (System.nanoTime() - started) / 1_000_000,
          counter.lines.get());

      long deadline = System.nanoTime() + 20_000_000_000L;
      long now;
      while ((now = fds()) > baselineFds && System.nanoTime() < deadline) Thread.sleep(50);
      assertTrue(now <= baselineFds, "file descriptors " + now + " after the attack, " + baselineFds + " before" + seed);
      assertServing(nodes, mem, desc, 4, "after the attack" + seed);
    } finally {
      pekkoLog.detachAppender(counter);
    }
  }

  private static byte[] random(SplittableRandom rnd, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) b[i] = (byte) rnd.nextInt(256);
    return b;
  }

  /**
   * Sends {@code bytes} on a new connection and closes it; when {@code expectClose}, first waits up to 0.3 s for the
   * node to close it and returns whether it did.
   */
  private static boolean send(InetSocketAddress target, byte[] bytes, boolean expectClose) throws IOException {
    try (SocketChannel c = SocketChannel.open(target)) {
      c.socket().setSoTimeout(50);
      ByteBuffer b = ByteBuffer.wrap(bytes);
      try {
        while (b.hasRemaining()) c.write(b);
      } catch (IOException e) {
        return true; // the node closed it while we wrote
      }
      if (!expectClose) return false;
      long deadline = System.nanoTime() + 300_000_000L;
      byte[] sink = new byte[4096];
      while (System.nanoTime() < deadline) {
        try {
          if (c.socket().getInputStream().read(sink) < 0) return true;
        } catch (SocketTimeoutException e) {
          // not yet
        } catch (IOException e) {
          return true;
        }
      }
      return false;
    }
  }

  /** Both nodes up, two members Up and nobody unreachable in each view, each other's engine registered, a write each way byte-exact. */
  private static void assertServing(List<Node> nodes, MemorySegment[] mem, MemoryDesc[] desc, int round, String when) throws Exception {
    for (int i = 0; i < 2; i++) {
      Node n = nodes.get(i);
      assertFalse(n.system().getWhenTerminated().toCompletableFuture().isDone(), "node " + i + " terminated " + when);
      var state = Cluster.get(n.system()).state();
      assertTrue(state.getUnreachable().isEmpty(), "node " + i + " sees unreachable members " + when + ": " + state.getUnreachable());
      long up = StreamSupport.stream(state.getMembers().spliterator(), false).filter(m -> m.status() == MemberStatus.up()).count();
      assertEquals(2, up, "members Up in node " + i + "'s view " + when + ": " + state.getMembers());
      assertTrue(registered(n).contains(nodes.get(1 - i).engine().key()), "node " + i + " dropped the other engine " + when);
    }
    for (int i = 0; i < 2; i++) {
      fill(mem[i], round * 2L + i);
      IoEngine from = nodes.get(i).engine();
      TransferStatus s = from.write(desc[i], 0, desc[1 - i], 0, SIZE, from.allocateTransferUid());
      assertTrue(s.await(Duration.ofSeconds(10)), "write " + i + " -> " + (1 - i) + " hung " + when);
      assertTrue(s.succeeded(), "write " + i + " -> " + (1 - i) + " " + when + ": " + s.code() + " " + s.message());
      assertEquals(-1L, mem[i].mismatch(mem[1 - i]), "bytes of write " + i + " -> " + (1 - i) + " " + when);
    }
  }

  private static void fill(MemorySegment seg, long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    for (long o = 0; o < seg.byteSize(); o += 8) seg.set(ValueLayout.JAVA_LONG, o, r.nextLong());
  }

  private static long fds() {
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      return s.count();
    } catch (IOException e) {
      throw new IllegalStateException("cannot count /proc/self/fd", e);
    }
  }

  private static void awaitUp(ActorSystem<?> sys, int members) throws InterruptedException {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (true) {
      long up = StreamSupport.stream(Cluster.get(sys).state().getMembers().spliterator(), false)
          .filter(m -> m.status() == MemberStatus.up()).count();
      if (up == members) return;
      assertTrue(System.nanoTime() < deadline, sys.address() + ": " + up + " members Up after " + DEADLINE + ", expected " + members);
      Thread.sleep(100);
    }
  }

  private static Set<String> registered(Node n) throws Exception {
    return AskPattern.<ClusterEngine.Command, Set<String>>ask(n.member(), ClusterEngine.GetRegisteredEngines::new,
        Duration.ofSeconds(5), n.system().scheduler()).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static void awaitRegistered(Node n, Set<String> expected) throws Exception {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    Set<String> got = Set.of();
    while (System.nanoTime() < deadline) {
      got = registered(n);
      if (got.equals(expected)) return;
      Thread.sleep(100);
    }
    fail("engine " + n.engine().key() + " registered " + got + " within " + DEADLINE + ", expected " + expected);
  }
}
