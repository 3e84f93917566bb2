package org.mori4j.cluster;

import static org.junit.jupiter.api.Assertions.*;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.Test;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * Three clustered ActorSystems in one JVM, each with an embedded engine and a TCP backend: the engines find
 * and register each other through the cluster alone, and a member that leaves is declared lost while the
 * survivors keep transferring. One JVM means the departing member shuts down cleanly (it leaves the cluster);
 * a SIGKILLed process and a partition are the multi-JVM and network-namespace tests issue 5 still asks for.
 */
class ClusterMembershipTest {
  private static final int N = 3;
  private static final int SIZE = 1 << 20;
  private static final Duration DEADLINE = Duration.ofSeconds(15);

  private static Config config() {
    return ConfigFactory.parseString("""
        pekko.actor.provider = cluster
        pekko.remote.artery.canonical.hostname = "127.0.0.1"
        pekko.remote.artery.canonical.port = 0
        pekko.cluster.jmx.multi-mbeans-in-same-jvm = on
        """).withFallback(ConfigFactory.load());
  }

  @Test
  void enginesRegisterEachOtherThroughTheClusterAndDropAMemberThatLeaves() throws Exception {
    String run = Long.toHexString(System.nanoTime());
    List<ActorSystem<Void>> systems = new ArrayList<>();
    List<IoEngine> engines = new ArrayList<>();
    List<ActorRef<ClusterEngine.Command>> members = new ArrayList<>();
    try (Arena arena = Arena.ofShared()) {
      for (int i = 0; i < N; i++) {
        ActorSystem<Void> sys = ActorSystem.create(Behaviors.empty(), "mori4j-cluster-test", config());
        systems.add(sys);
        IoEngine e = IoEngine.create(sys, "cluster-" + run + "-" + i, IoEngineConfig.loopback());
        engines.add(e);
        e.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
        members.add(ClusterEngine.start(e));
      }
      var seed = Cluster.get(systems.get(0)).selfMember().address();
      for (ActorSystem<Void> sys : systems) Cluster.get(sys).manager().tell(Join.create(seed));

      MemorySegment[] mem = new MemorySegment[N];
      MemoryDesc[] desc = new MemoryDesc[N];
      for (int i = 0; i < N; i++) {
        mem[i] = arena.allocate(SIZE, 8);
        desc[i] = engines.get(i).registerMemory(mem[i]);
      }

      long start = System.nanoTime();
      for (int i = 0; i < N; i++) {
        Set<String> others = new java.util.HashSet<>();
        for (int j = 0; j < N; j++) if (j != i) others.add(engines.get(j).key());
        awaitRegistered(systems.get(i), members.get(i), others, "engine " + i + " registers the other two");
      }
      System.out.printf("all engines registered each other %d ms after the joins%n", (System.nanoTime() - start) / 1_000_000);
      for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++) {
          if (i == j) continue;
          fill(mem[i], i * 31 + j);
          write(engines.get(i), desc[i], desc[j], "engine " + i + " -> engine " + j);
          assertEquals(-1L, mem[i].asSlice(0, SIZE / 2).mismatch(mem[j].asSlice(0, SIZE / 2)), "bytes of " + i + " -> " + j);
        }
      }

      // member 2 shuts down: its system leaves the cluster, and its coordinated shutdown closes its engine
      String departed = Cluster.get(systems.get(2)).selfMember().address().toString();
      long killed = System.nanoTime();
      systems.get(2).terminate();
      systems.get(2).getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      TransferStatus closed = engines.get(2).write(desc[2], 0, desc[0], 0, 4096, 1);
      assertEquals(StatusCode.ERR_BAD_STATE, closed.code(), "the departed member's engine should be closed: " + closed.message());
      long deadline = killed + DEADLINE.toNanos();
      boolean[] dropped = new boolean[2];
      int survivorWrites = 0;
      while (!(dropped[0] && dropped[1])) {
        assertTrue(System.nanoTime() < deadline, "the survivors did not drop engine 2 within " + DEADLINE
            + " (dropped: " + dropped[0] + ", " + dropped[1] + ")");
        // the survivors never lose a transfer between themselves, before, during and after the departure
        write(engines.get(0), desc[0], desc[1], "survivor 0 -> 1 after member 2 left");
        write(engines.get(1), desc[1], desc[0], "survivor 1 -> 0 after member 2 left");
        survivorWrites += 2;
        for (int i = 0; i < 2; i++) {
          if (dropped[i]) continue;
          Set<String> reg = registered(systems.get(i), members.get(i));
          if (reg.contains(engines.get(2).key())) continue;
          // ERR_PEER_LOST at once (from the TCP layer, which saw the connections close), and once the engine has
          // taken the cluster actor's MarkPeerLost, with a message that names the member
          TransferStatus s;
          do {
            assertTrue(System.nanoTime() < deadline, "writes to the departed engine never named its member");
            s = engines.get(i).write(desc[i], 0, desc[2], 0, 4096, engines.get(i).allocateTransferUid());
            assertTrue(s.await(Duration.ofSeconds(10)), "a write to the departed engine hung");
            assertEquals(StatusCode.ERR_PEER_LOST, s.code(), "write from " + i + " to the departed engine: " + s.message());
          } while (!s.message().contains("member " + departed));
          assertTrue(s.message().contains(engines.get(2).key()), s.message());
          dropped[i] = true;
        }
        Thread.sleep(50);
      }
      System.out.printf("survivors dropped engine 2 %d ms after its system was told to terminate; %d survivor writes, all succeeded%n",
          (System.nanoTime() - killed) / 1_000_000, survivorWrites);
      assertEquals(Set.of(engines.get(1).key()), registered(systems.get(0), members.get(0)));
      assertEquals(Set.of(engines.get(0).key()), registered(systems.get(1), members.get(1)));
    } finally {
      for (IoEngine e : engines) {
        try {
          e.close();
        } catch (RuntimeException ignored) {
          // the departed member's engine was closed by its coordinated shutdown; closing again is a no-op
        }
      }
      for (ActorSystem<Void> sys : systems) sys.terminate();
      for (ActorSystem<Void> sys : systems) sys.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static void fill(MemorySegment seg, int seed) {
    java.util.Random r = new java.util.Random(seed);
    for (long o = 0; o < seg.byteSize(); o += 8) seg.set(ValueLayout.JAVA_LONG, o, r.nextLong());
  }

  private static void write(IoEngine from, MemoryDesc src, MemoryDesc dst, String what) {
    TransferStatus s = from.write(src, 0, dst, 0, SIZE / 2, from.allocateTransferUid());
    assertTrue(s.await(Duration.ofSeconds(10)), what + ": still in progress after 10 s");
    assertTrue(s.succeeded(), what + ": " + s.code() + " " + s.message());
  }

  private static Set<String> registered(ActorSystem<?> sys, ActorRef<ClusterEngine.Command> member) throws Exception {
    return AskPattern.<ClusterEngine.Command, Set<String>>ask(member, ClusterEngine.GetRegisteredEngines::new,
        Duration.ofSeconds(5), sys.scheduler()).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static void awaitRegistered(ActorSystem<?> sys, ActorRef<ClusterEngine.Command> member, Set<String> expected, String what)
      throws Exception {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    Set<String> got = Set.of();
    while (System.nanoTime() < deadline) {
      got = registered(sys, member);
      if (got.equals(expected)) return;
      Thread.sleep(100);
    }
    fail(what + " within " + DEADLINE + ": registered " + got + ", expected " + expected);
  }
}
