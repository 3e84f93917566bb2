package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * PEs formed from a Pekko Cluster (three ActorSystems in one JVM over loopback Artery, on the in-memory GPU):
 * the members with the {@code shmem} role become the PEs, ranked by member address; collective calls go
 * through cluster messages; a member that leaves fails the others' waiting calls, naming the PE and member.
 */
class ShmemClusterTest {
  private final List<ActorSystem<Void>> systems = new ArrayList<>();
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> Thread.ofPlatform().daemon().unstarted(r));
  private ShmemTestDevice device;

  @BeforeEach
  void device() {
    device = new ShmemTestDevice(2);
  }

  @AfterEach
  void shutdown() throws Exception {
    for (ActorSystem<Void> s : systems) s.terminate();
    for (ActorSystem<Void> s : systems) s.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    threads.shutdownNow();
    device.shutdown();
  }

  private ActorSystem<Void> member(String role) {
    Config c = ConfigFactory.parseString("""
        pekko.actor.provider = cluster
        pekko.remote.artery.canonical.hostname = "127.0.0.1"
        pekko.remote.artery.canonical.port = 0
        pekko.cluster.jmx.multi-mbeans-in-same-jvm = on
        pekko.cluster.roles = [%s]
        pekko.coordinated-shutdown.exit-jvm = off
        pekko.cluster.downing-provider-class = ""
        """.formatted(role)).withFallback(ConfigFactory.load());
    ActorSystem<Void> s = ActorSystem.create(Behaviors.empty(), "shmem-cluster-test", c);
    systems.add(s);
    return s;
  }

  private List<Shmem> initAll(List<ActorSystem<Void>> pes, ShmemConfig config) throws Exception {
    Address seed = Cluster.get(systems.getFirst()).selfMember().address();
    for (ActorSystem<Void> s : systems) Cluster.get(s).manager().tell(Join.create(seed));
    List<CompletableFuture<Shmem>> starting = new ArrayList<>();
    for (ActorSystem<Void> s : pes) starting.add(CompletableFuture.supplyAsync(() -> Shmem.initFromCluster(s, pes.size(), config), threads));
    List<Shmem> out = new ArrayList<>();
    for (var f : starting) out.add(f.get(60, TimeUnit.SECONDS));
    return out;
  }

  @Test
  void membersWithTheShmemRoleBecomePesRankedByAddress() throws Exception {
    ActorSystem<Void> a = member("shmem"), b = member("shmem");
    member("other"); // a member without the role takes no part
    ShmemConfig config = device.config(8 << 20);
    List<Shmem> pes = initAll(List.of(a, b), config);
    try {
      List<Address> addresses = List.of(Cluster.get(a).selfMember().address(), Cluster.get(b).selfMember().address());
      List<Address> sorted = ClusterBootstrap.rankOrder(addresses);
      for (int i = 0; i < 2; i++) {
        assertEquals(2, pes.get(i).nPes());
        assertEquals(sorted.indexOf(addresses.get(i)), pes.get(i).myPe(), "rank = position in address order");
      }
      List<CompletableFuture<Long>> offsets = new ArrayList<>();
      for (Shmem pe : pes) offsets.add(CompletableFuture.supplyAsync(() -> pe.malloc(12345) - pe.heapBase(), threads));
      assertEquals(offsets.get(0).get(30, TimeUnit.SECONDS), offsets.get(1).get(30, TimeUnit.SECONDS));
      Shmem p0 = pes.get(0), p1 = pes.get(1);
      long obj0 = p0.heapBase() + offsets.get(0).get();
      assertEquals(p1.heapBase() + offsets.get(1).get(), p0.ptrP2p(obj0, p0.myPe(), p1.myPe()));
      // a mismatched malloc is refused on both through the cluster as through TCP
      var m0 = CompletableFuture.supplyAsync(() -> p0.malloc(100), threads);
      var m1 = CompletableFuture.supplyAsync(() -> p1.malloc(200), threads);
      for (var m : List.of(m0, m1)) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> m.get(30, TimeUnit.SECONDS));
        assertTrue(e.getCause().getMessage().contains("malloc(size 100") && e.getCause().getMessage().contains("malloc(size 200"), e.getCause().getMessage());
      }
      var f0 = CompletableFuture.runAsync(p0::finalizeShmem, threads);
      var f1 = CompletableFuture.runAsync(p1::finalizeShmem, threads);
      f0.get(30, TimeUnit.SECONDS);
      f1.get(30, TimeUnit.SECONDS);
      assertEquals(0, device.gpu.liveAllocations());
    } finally {
      pes.forEach(Shmem::finalizeShmem);
    }
  }

  @Test
  void aMemberThatLeavesFailsTheOthersWaitingCallNamingIt() throws Exception {
    ActorSystem<Void> a = member("shmem"), b = member("shmem");
    List<Shmem> pes = initAll(List.of(a, b), device.config(8 << 20).withTimeout(Duration.ofSeconds(60)));
    Shmem stays = pes.get(0);
    int gone = pes.get(1).myPe();
    var waiting = CompletableFuture.runAsync(stays::barrierAll, threads);
    Thread.sleep(300);
    long t = System.nanoTime();
    b.terminate(); // the member leaves (its PE never joins the barrier)
    ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(30, TimeUnit.SECONDS));
    long took = System.nanoTime() - t;
    assertTrue(e.getCause() instanceof ShmemException && e.getCause().getMessage().contains("PE " + gone + " ("), e.getCause().toString());
    assertTrue(took < 20_000_000_000L, "failed after " + took / 1_000_000 + " ms, not the 60 s timeout");
    assertThrows(ShmemException.class, stays::barrierAll);
    stays.finalizeShmem();
    pes.get(1).finalizeShmem();
    assertEquals(0, device.gpu.liveAllocations());
  }

  @Test
  void aMemberWithoutTheRoleIsRefused() {
    ActorSystem<Void> other = member("other");
    Cluster.get(other).manager().tell(Join.create(Cluster.get(other).selfMember().address()));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Shmem.initFromCluster(other, 1, device.config(8 << 20)));
    assertTrue(e.getMessage().contains("does not have the cluster role 'shmem'"), e.getMessage());
  }
}
