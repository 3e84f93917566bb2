package org.mori4j.cluster;

import static org.junit.jupiter.api.Assertions.*;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * The named descriptor directory across three clustered ActorSystems in one JVM (127.0.0.1, port 0), each
 * with an engine, a TCP backend, a {@link ClusterEngine} (so the engines register each other and a looked-up
 * descriptor can be read at once) and a {@link DescriptorDirectory}. Names published on one member are looked
 * up on the others and their bytes read through the engines; subscribers follow publish and unpublish; bad
 * names, duplicates, foreign memory and absent names fail with clear errors; a malformed entry written into
 * the replicated map is refused by every reader; an entry whose owner is not a member is swept; and when a
 * member leaves, its entries disappear from every survivor's replica. The last test ends member 2.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DescriptorDirectoryTest {
  private static final int N = 3;
  private static final int SIZE = 1 << 20;
  private static final Duration DEADLINE = Duration.ofSeconds(20);

  private final String run = Long.toHexString(System.nanoTime());
  private final List<ActorSystem<Void>> systems = new ArrayList<>();
  private final List<IoEngine> engines = new ArrayList<>();
  private final List<ActorRef<ClusterEngine.Command>> members = new ArrayList<>();
  private final List<DescriptorDirectory> dirs = new ArrayList<>();
  private Arena arena;

  private static Config config() {
    return ConfigFactory.parseString("""
        pekko.actor.provider = cluster
        pekko.remote.artery.canonical.hostname = "127.0.0.1"
        pekko.remote.artery.canonical.port = 0
        pekko.cluster.jmx.multi-mbeans-in-same-jvm = on
        mori4j.cluster.directory.orphan-grace = 2s
        """).withFallback(ConfigFactory.load());
  }

  @BeforeAll
  void startCluster() throws Exception {
    arena = Arena.ofShared();
    for (int i = 0; i < N; i++) {
      ActorSystem<Void> sys = ActorSystem.create(Behaviors.empty(), "mori4j-directory-test", config());
      systems.add(sys);
      IoEngine e = IoEngine.create(sys, "dir-" + run + "-" + i, IoEngineConfig.loopback());
      engines.add(e);
      e.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      members.add(ClusterEngine.start(e));
      dirs.add(DescriptorDirectory.start(e));
    }
    var seed = Cluster.get(systems.get(0)).selfMember().address();
    for (ActorSystem<Void> sys : systems) Cluster.get(sys).manager().tell(Join.create(seed));
    long start = System.nanoTime();
    for (int i = 0; i < N; i++) {
      Set<String> others = new HashSet<>();
      for (int j = 0; j < N; j++) if (j != i) others.add(engines.get(j).key());
      long deadline = System.nanoTime() + DEADLINE.toNanos();
      Set<String> got = Set.of();
      while (!got.equals(others)) {
        assertTrue(System.nanoTime() < deadline, "engine " + i + " registered " + got + ", expected " + others + " within " + DEADLINE);
        Thread.sleep(100);
        got = AskPattern.<ClusterEngine.Command, Set<String>>ask(members.get(i), ClusterEngine.GetRegisteredEngines::new,
            Duration.ofSeconds(5), systems.get(i).scheduler()).toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
    }
    System.out.printf("three members up, engines registered %d ms after the joins%n", (System.nanoTime() - start) / 1_000_000);
  }

  @AfterAll
  void stopCluster() throws Exception {
    for (IoEngine e : engines) {
      try {
        e.close();
      } catch (RuntimeException ignored) {
        // member 2's engine went with its system
      }
    }
    for (ActorSystem<Void> sys : systems) sys.terminate();
    for (ActorSystem<Void> sys : systems) sys.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    if (arena != null) arena.close();
  }

  private String name(String suffix) {
    return "kv/" + run + "/" + suffix;
  }

  @Test
  @Order(1)
  void aPublishedRegionIsLookedUpAndReadByteExactOnTheOtherMembers() throws Exception {
    MemorySegment src = arena.allocate(SIZE, 8);
    fill(src, 11);
    MemoryDesc desc = engines.get(0).registerMemory(src);
    String name = name("layer0/block0");
    long t0 = System.nanoTime();
    await(dirs.get(0).publish(name, desc));
    long published = System.nanoTime();
    for (int i = 1; i < N; i++) {
      MemoryDesc found = await(dirs.get(i).lookup(name));
      assertEquals(desc, found, "member " + i + " looked up " + name);
      MemorySegment dst = arena.allocate(SIZE, 8);
      MemoryDesc local = engines.get(i).registerMemory(dst);
      TransferStatus s = engines.get(i).read(local, 0, found, 0, SIZE, engines.get(i).allocateTransferUid());
      assertTrue(s.await(Duration.ofSeconds(10)), "read by member " + i + " still in progress after 10 s");
      assertTrue(s.succeeded(), "read by member " + i + ": " + s.code() + " " + s.message());
      assertEquals(-1L, src.mismatch(dst), "bytes read by member " + i);
      engines.get(i).deregisterMemory(local);
    }
    System.out.printf("publish took %d ms; lookups + 1 MiB reads on two members %d ms%n", (published - t0) / 1_000_000,
        (System.nanoTime() - published) / 1_000_000);
    // the owner's own replica has it too; listings show a member's view, which follows its replica shortly
    assertEquals(desc, await(dirs.get(0).lookup(name, Duration.ZERO)));
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (!await(dirs.get(1).entries(name("layer0/"))).equals(Map.of(name, desc))) {
      assertTrue(System.nanoTime() < deadline, "member 1's listing of layer0/ lacks " + name + " after " + DEADLINE);
      Thread.sleep(50);
    }
    assertEquals(Map.of(), await(dirs.get(1).entries(name("layer1/"))));
  }

  @Test
  @Order(2)
  void aLookupWaitsForANameThatIsPublishedLater() throws Exception {
    String name = name("late");
    CompletableFuture<MemoryDesc> waiting = dirs.get(2).lookup(name, Duration.ofSeconds(30)).toCompletableFuture();
    MemoryDesc desc = engines.get(1).registerMemory(arena.allocate(4096, 8));
    assertFalse(waiting.isDone(), "the lookup of a name nobody published yet ended at once: " + waiting);
    await(dirs.get(1).publish(name, desc));
    assertEquals(desc, waiting.get(DEADLINE.toSeconds(), TimeUnit.SECONDS));
  }

  @Test
  @Order(3)
  void subscribersSeePublishAndUnpublishUnderTheirPrefixOnly() throws Exception {
    String prefix = name("sub/");
    BlockingQueue<DirectoryEvent> viaListener = new LinkedBlockingQueue<>();
    BlockingQueue<DirectoryEvent> viaActor = new LinkedBlockingQueue<>();
    try (DescriptorDirectory.Subscription sub = dirs.get(2).subscribe(prefix, viaListener::add)) {
      ActorRef<DirectoryEvent> probe = systems.get(1).systemActorOf(Behaviors.receive(DirectoryEvent.class)
          .onMessage(DirectoryEvent.class, e -> {
            viaActor.add(e);
            return Behaviors.same();
          }).build(), "directory-probe-" + run, Props.empty());
      dirs.get(1).subscribe(prefix, probe);
      // a subscription is a tell; a listing through the same actor returns only after it was handled
      await(dirs.get(1).entries(prefix));
      await(dirs.get(2).entries(prefix));

      MemoryDesc a = engines.get(0).registerMemory(arena.allocate(8192, 8));
      MemoryDesc b = engines.get(0).registerMemory(arena.allocate(8192, 8));
      String owner0 = Cluster.get(systems.get(0)).selfMember().address().toString();
      await(dirs.get(0).publish(name("elsewhere/b"), b));
      await(dirs.get(0).publish(prefix + "a", a));
      for (BlockingQueue<DirectoryEvent> q : List.of(viaListener, viaActor))
        assertEquals(new DirectoryEvent.Published(prefix + "a", a, owner0), next(q), "publish event");

      // a late subscriber is told what is already there
      BlockingQueue<DirectoryEvent> late = new LinkedBlockingQueue<>();
      try (DescriptorDirectory.Subscription lateSub = dirs.get(1).subscribe(prefix, late::add)) {
        assertEquals(new DirectoryEvent.Published(prefix + "a", a, owner0), next(late), "snapshot for a late subscriber");

        await(dirs.get(0).unpublish(prefix + "a"));
        for (BlockingQueue<DirectoryEvent> q : List.of(viaListener, viaActor, late))
          assertEquals(new DirectoryEvent.Unpublished(prefix + "a", a, false), next(q), "unpublish event");
      }
      // events arrive in order, so anything about the other prefix would have come before the unpublish
      for (BlockingQueue<DirectoryEvent> q : List.of(viaListener, viaActor)) assertTrue(q.isEmpty(), "unexpected events: " + q);
      assertFailsWith(StatusCode.ERR_NOT_FOUND, prefix + "a", dirs.get(2).lookup(prefix + "a", Duration.ZERO));
      dirs.get(1).unsubscribe(probe);
    }
  }

  @Test
  @Order(4)
  void badNamesDuplicatesForeignMemoryAndAbsentNamesFailClearly() throws Exception {
    DescriptorDirectory d0 = dirs.get(0);
    MemoryDesc mine = engines.get(0).registerMemory(arena.allocate(4096, 8));
    MemoryDesc other = engines.get(0).registerMemory(arena.allocate(4096, 8));

    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "name must not be empty", d0.publish("", mine));
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "name must not be null", d0.publish(null, mine));
    String tooLong = "n".repeat(d0.settings().maxNameLength() + 1);
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "is 513 characters long, more than mori4j.cluster.directory.max-name-length = 512",
        d0.publish(tooLong, mine));
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "name 'bad\\u000aname' has a control character U+000A at index 3", d0.publish("bad\nname", mine));
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "name must not be empty", d0.lookup(""));
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "name must not be empty", d0.unpublish(""));
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "timeout must be zero or positive", d0.lookup(name("x"), Duration.ofSeconds(-1)));
    IoEngineException sub = assertThrows(IoEngineException.class, () -> d0.subscribe("p\u0001", e -> {}));
    assertTrue(sub.getMessage().contains("prefix 'p\\u0001' has a control character U+0001"), sub.getMessage());
    // the actor checks names too, for applications that use its protocol directly
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "name must not be empty", AskPattern.<DescriptorDirectory.Command, Done>askWithStatus(
        d0.actorRef(), r -> new DescriptorDirectory.Publish("", mine, r), Duration.ofSeconds(10), systems.get(0).scheduler()));
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "desc must not be null", d0.publish(name("nodesc"), null));

    // only the engine's own registered memory: another engine's region, or a forged descriptor
    MemoryDesc foreign = engines.get(1).registerMemory(arena.allocate(4096, 8));
    assertFailsWith(StatusCode.ERR_NOT_FOUND, "only memory registered with this engine can be published", d0.publish(name("foreign"), foreign));
    MemoryDesc forged = new MemoryDesc(mine.engineKey(), mine.id(), mine.deviceId(), mine.address(), mine.size(), mine.location(),
        mine.accessKey() + 1, Map.of());
    assertFailsWith(StatusCode.ERR_NOT_FOUND, "only memory registered with this engine can be published", d0.publish(name("forged"), forged));

    // duplicates: the same descriptor again is fine, another one is refused here and on another member
    String dup = name("dup");
    await(d0.publish(dup, mine));
    await(d0.publish(dup, mine));
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "name '" + dup + "' is already published by engine '" + engines.get(0).key() + "'",
        d0.publish(dup, other));
    assertEquals(mine, await(dirs.get(1).lookup(dup)));
    MemoryDesc ofOne = engines.get(1).registerMemory(arena.allocate(4096, 8));
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "name '" + dup + "' is already published by engine '" + engines.get(0).key() + "'",
        dirs.get(1).publish(dup, ofOne));
    assertFailsWith(StatusCode.ERR_INVALID_ARGS, "only its owner can unpublish it", dirs.get(1).unpublish(dup));
    assertFailsWith(StatusCode.ERR_NOT_FOUND, "no memory is published under name '" + name("never") + "'", d0.unpublish(name("never")));
    // a directory publish also made the engine answer the name; the unpublish stops that too
    assertEquals(java.util.Optional.of(mine), engines.get(2).lookupMemory(engines.get(0).engineDesc(), dup));
    await(d0.unpublish(dup));
    long until = System.nanoTime() + 10_000_000_000L;
    while (engines.get(2).lookupMemory(engines.get(0).engineDesc(), dup).isPresent() && System.nanoTime() < until) Thread.sleep(20);
    assertEquals(java.util.Optional.empty(), engines.get(2).lookupMemory(engines.get(0).engineDesc(), dup), "the engine still answers the name");
    await(dirs.get(1).publish(dup, ofOne)); // free again

    // an absent name: at once with a zero timeout, after waiting otherwise
    assertFailsWith(StatusCode.ERR_NOT_FOUND, "no memory is published under name '" + name("absent") + "' in the cluster directory",
        dirs.get(2).lookup(name("absent"), Duration.ZERO));
    long t0 = System.nanoTime();
    assertFailsWith(StatusCode.ERR_NOT_FOUND, "no memory is published under name '" + name("absent") + "' in the cluster directory (waited 1000 ms",
        dirs.get(2).lookup(name("absent"), Duration.ofSeconds(1)));
    long waited = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(waited >= 1000, "the lookup gave up after " + waited + " ms, before its 1 s timeout");
  }

  @Test
  @Order(5)
  void aMalformedEntryInTheReplicatedMapIsRefusedByEveryReader() throws Exception {
    MemoryDesc good = engines.get(1).registerMemory(arena.allocate(4096, 8));
    byte[] broken = good.toBytes();
    broken[broken.length / 2] ^= (byte) 0xff;
    broken = java.util.Arrays.copyOf(broken, broken.length - 3); // truncated: never a valid descriptor
    var owner1 = Cluster.get(systems.get(1)).selfMember().uniqueAddress();
    String badDesc = name("bad/desc"), badOwner = name("bad/owner");
    BlockingQueue<DirectoryEvent> events = new LinkedBlockingQueue<>();
    try (DescriptorDirectory.Subscription sub = dirs.get(0).subscribe(name("bad/"), events::add)) {
      writeRaw(1, badDesc, new DirectoryEntry(broken, owner1.address().toString(), owner1.longUid()));
      writeRaw(1, badOwner, new DirectoryEntry(good.toBytes(), "not an address", 7));
      assertFailsWith(StatusCode.ERR_INVALID_ARGS, "malformed descriptor", dirs.get(0).lookup(badDesc));
      assertFailsWith(StatusCode.ERR_INVALID_ARGS, "owner 'not an address' is not an actor system address", dirs.get(2).lookup(badOwner));
      // the directory keeps serving, and the refused entries never reached the subscriber
      String fine = name("bad/fine");
      await(dirs.get(1).publish(fine, good));
      assertEquals(new DirectoryEvent.Published(fine, good, owner1.address().toString()), next(events));
      assertTrue(events.isEmpty(), "unexpected events: " + events);
    }
  }

  @Test
  @Order(6)
  void anEntryWhoseOwnerIsNoMemberIsSweptAfterTheGrace() throws Exception {
    MemoryDesc desc = engines.get(1).registerMemory(arena.allocate(4096, 8));
    String name = name("orphan");
    // an owner that never was a member: a previous incarnation at a port nobody uses
    writeRaw(1, name, new DirectoryEntry(desc.toBytes(), "pekko://mori4j-directory-test@127.0.0.1:9", 42));
    long t0 = System.nanoTime();
    for (int i = 0; i < N; i++) awaitGone(i, name, "orphaned entry on member " + i);
    System.out.printf("orphaned entry swept from every replica %d ms after it was written (orphan-grace 2 s)%n",
        (System.nanoTime() - t0) / 1_000_000);
  }

  @Test
  @Order(7)
  void theEntriesOfAMemberThatLeavesDisappearEverywhere() throws Exception {
    List<String> names = List.of(name("node2/block0"), name("node2/block1"));
    MemorySegment src = arena.allocate(SIZE, 8);
    fill(src, 22);
    MemoryDesc desc = engines.get(2).registerMemory(src);
    BlockingQueue<DirectoryEvent> events = new LinkedBlockingQueue<>();
    try (DescriptorDirectory.Subscription sub = dirs.get(0).subscribe(name("node2/"), events::add)) {
      for (String n : names) await(dirs.get(2).publish(n, desc));
      for (int i = 0; i < 2; i++) assertInstanceOf(DirectoryEvent.Published.class, next(events));
      for (int i = 0; i < 2; i++) assertEquals(desc, await(dirs.get(i).lookup(names.get(0))));

      long left = System.nanoTime();
      systems.get(2).terminate();
      systems.get(2).getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      for (int i = 0; i < 2; i++) for (String n : names) awaitGone(i, n, "member 2's entry on member " + i);
      System.out.printf("member 2's entries gone from both survivors' replicas %d ms after its system was told to terminate%n",
          (System.nanoTime() - left) / 1_000_000);
      Set<String> unpublished = new HashSet<>();
      for (int i = 0; i < 2; i++) {
        DirectoryEvent e = next(events);
        assertInstanceOf(DirectoryEvent.Unpublished.class, e, "event after member 2 left");
        unpublished.add(e.name());
      }
      assertEquals(Set.copyOf(names), unpublished);
      for (int i = 0; i < 2; i++)
        for (String n : names) assertFailsWith(StatusCode.ERR_NOT_FOUND, n, dirs.get(i).lookup(n, Duration.ZERO));
    }
    // the survivors' directory keeps working
    MemoryDesc after = engines.get(1).registerMemory(arena.allocate(4096, 8));
    await(dirs.get(1).publish(name("after-leave"), after));
    assertEquals(after, await(dirs.get(0).lookup(name("after-leave"))));
  }

  // ---- helpers ----

  /** Writes a value straight into member {@code i}'s replica, as a buggy or hostile member could. */
  private void writeRaw(int i, String name, DirectoryEntry entry) throws Exception {
    var self = DistributedData.get(systems.get(i)).selfUniqueAddress();
    Replicator.UpdateResponse<LWWMap<String, DirectoryEntry>> r = AskPattern.<Replicator.Command, Replicator.UpdateResponse<LWWMap<String, DirectoryEntry>>>ask(
        DistributedData.get(systems.get(i)).replicator(),
        replyTo -> new Replicator.Update<>(DescriptorDirectory.KEY, LWWMap.create(), new Replicator.WriteAll(Duration.ofSeconds(5)), replyTo,
            m -> m.put(self, name, entry)),
        Duration.ofSeconds(10), systems.get(i).scheduler()).toCompletableFuture().get(15, TimeUnit.SECONDS);
    assertInstanceOf(Replicator.UpdateSuccess.class, r, "raw write of " + name);
  }

  /** Member {@code i}'s replica of the map, read locally. */
  private Map<String, DirectoryEntry> replica(int i) throws Exception {
    Replicator.GetResponse<LWWMap<String, DirectoryEntry>> r = AskPattern.<Replicator.Command, Replicator.GetResponse<LWWMap<String, DirectoryEntry>>>ask(
        DistributedData.get(systems.get(i)).replicator(), replyTo -> new Replicator.Get<>(DescriptorDirectory.KEY, Replicator.readLocal(), replyTo),
        Duration.ofSeconds(10), systems.get(i).scheduler()).toCompletableFuture().get(15, TimeUnit.SECONDS);
    if (r instanceof Replicator.GetSuccess<LWWMap<String, DirectoryEntry>> s) return s.dataValue().getEntries();
    if (r instanceof Replicator.NotFound<?>) return Map.of();
    throw new AssertionError("local read of the directory on member " + i + ": " + r);
  }

  private void awaitGone(int i, String name, String what) throws Exception {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (replica(i).containsKey(name)) {
      assertTrue(System.nanoTime() < deadline, what + " still in the replica after " + DEADLINE);
      Thread.sleep(100);
    }
  }

  private static DirectoryEvent next(BlockingQueue<DirectoryEvent> q) throws InterruptedException {
    DirectoryEvent e = q.poll(DEADLINE.toSeconds(), TimeUnit.SECONDS);
    assertNotNull(e, "no directory event within " + DEADLINE);
    return e;
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    try {
      return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw new AssertionError("directory call failed: " + e.getCause(), e.getCause());
    }
  }

  private static void assertFailsWith(StatusCode code, String messagePart, CompletionStage<?> stage) throws Exception {
    try {
      Object v = stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
      fail("expected " + code + " containing \"" + messagePart + "\", got the value " + v);
    } catch (ExecutionException e) {
      IoEngineException x = assertInstanceOf(IoEngineException.class, e.getCause(), "failure type");
      assertEquals(code, x.code(), x.getMessage());
      assertTrue(x.getMessage().contains(messagePart), "message \"" + x.getMessage() + "\" lacks \"" + messagePart + "\"");
    }
  }

  private static void fill(MemorySegment seg, int seed) {
    java.util.Random r = new java.util.Random(seed);
    for (long o = 0; o < seg.byteSize(); o += 8) seg.set(ValueLayout.JAVA_LONG, o, r.nextLong());
  }
}
