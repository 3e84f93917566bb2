package org.mori4j.cluster;

import static org.mori4j.cluster.FuzzFrames.flip;
import static org.mori4j.cluster.FuzzFrames.randomBytes;
import static org.mori4j.cluster.FuzzFrames.roundTrip;
import static org.junit.jupiter.api.Assertions.*;

import com.typesafe.config.ConfigFactory;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;

/**
 * What the descriptor directory sends between members, pushed through the serializers a clustered ActorSystem
 * really uses (issue 5, acceptance 3): a {@link DirectoryEntry} is bound to Jackson CBOR, the map that holds
 * the entries (and its deltas) to Pekko's Distributed Data serializer, Java serialization is off. Random,
 * truncated and byte-flipped frames of each, and well-formed frames around garbage descriptors and owners, end
 * in an exception or in an entry that {@link DirectoryEntry#check} refuses with
 * {@code IllegalArgumentException}: never an {@code Error}, another exception type, or a hang. Finally, decoded
 * garbage is written into a live single-member directory's replica: every lookup of it answers with a clear
 * error (or the descriptor, where a flip happened to leave it valid) and the directory keeps serving.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DirectoryMessageFuzzTest {
  private static final int ROUNDS = 2000;

  private ActorSystem<Void> system;
  private Serialization serialization;
  private DirectorySettings settings;
  private final UniqueAddress owner = new UniqueAddress(
      org.apache.pekko.actor.AddressFromURIString.parse("pekko://mori4j@127.0.0.1:25520"), 4242L);

  @BeforeAll
  void start() {
    system = ActorSystem.create(Behaviors.empty(), "mori4j-directory-fuzz", ConfigFactory.parseString("""
        pekko.actor.provider = cluster
        pekko.remote.artery.canonical.hostname = "127.0.0.1"
        pekko.remote.artery.canonical.port = 0
        pekko.cluster.jmx.multi-mbeans-in-same-jvm = on
        """).withFallback(ConfigFactory.load()));
    serialization = SerializationExtension.get(Adapter.toClassic(system));
    settings = DirectorySettings.fromConfig(system.settings().config());
  }

  @AfterAll
  void stop() throws Exception {
    if (system != null) {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static MemoryDesc desc(long id) {
    return new MemoryDesc("engine-a", id, 0, 0x7f00_0000_1000L + id * 4096, 1 << 20, MemoryLocationType.CPU, 0x5eed_0000L + id,
        Map.of(BackendType.TCP, new byte[] {1, 2, 3}));
  }

  private LWWMap<String, DirectoryEntry> map(int n) {
    SelfUniqueAddress self = new SelfUniqueAddress(owner);
    LWWMap<String, DirectoryEntry> m = LWWMap.create();
    for (int i = 0; i < n; i++) m = m.put(self, "kv/block-" + i, DirectoryEntry.of(desc(i), owner));
    return m;
  }

  @Test
  void entriesUseJacksonCborTheMapUsesTheDdataSerializerAndJavaSerializationIsOff() throws Exception {
    assertFalse(system.settings().config().getBoolean("pekko.actor.allow-java-serialization"), "Java serialization must stay off");
    Serializer entry = serialization.serializerFor(DirectoryEntry.class);
    assertTrue(entry.getClass().getName().contains("JacksonCborSerializer"), "DirectoryEntry is serialized by " + entry.getClass());
    Serializer m = serialization.findSerializerFor(map(1));
    assertTrue(m.getClass().getName().endsWith("ReplicatedDataSerializer"), "the directory's map is serialized by " + m.getClass());
  }

  @Test
  void validEntriesAndMapsRoundTrip() throws Exception {
    DirectoryEntry e = DirectoryEntry.of(desc(7), owner);
    DirectoryEntry back = assertInstanceOf(DirectoryEntry.class, roundTrip(serialization, e));
    assertEquals(e, back);
    DirectoryEntry.Checked c = back.check("kv/block-7", settings);
    assertEquals(desc(7), c.desc());
    assertEquals(owner, c.owner());

    LWWMap<String, DirectoryEntry> m = map(3);
    @SuppressWarnings("unchecked")
    LWWMap<String, DirectoryEntry> mBack = assertInstanceOf(LWWMap.class, roundTrip(serialization, m));
    assertEquals(m.getEntries(), mBack.getEntries());
    Object delta = m.delta().get();
    assertNotNull(roundTrip(serialization, delta), "the map's delta round-trips");
  }

  @Test
  void malformedEntryFramesAreRefusedWithoutErrorsOrHangs() throws Exception {
    DirectoryEntry valid = DirectoryEntry.of(desc(1), owner);
    SplittableRandom rnd = new SplittableRandom(5151);
    int[] counts = fuzz(valid, rnd, () -> {
      // a well-formed frame around a garbage value: the directory's own checks must refuse it
      int k = rnd.nextInt(4);
      byte[] d = desc(1).toBytes();
      return switch (k) {
        case 0 -> new DirectoryEntry(flip(d, rnd, 1 + rnd.nextInt(12)), owner.address().toString(), 4242L);
        case 1 -> new DirectoryEntry(Arrays.copyOf(d, rnd.nextInt(d.length)), owner.address().toString(), 4242L);
        case 2 -> new DirectoryEntry(d, new String(randomBytes(rnd, rnd.nextInt(40)), java.nio.charset.StandardCharsets.ISO_8859_1), rnd.nextLong());
        default -> new DirectoryEntry(rnd.nextBoolean() ? null : randomBytes(rnd, rnd.nextInt(64)), rnd.nextBoolean() ? null : "", 0);
      };
    });
    System.out.printf("DirectoryEntry frames: %d refused, %d decoded to a valid entry%n", counts[0], counts[1]);
    assertTrue(counts[0] > ROUNDS / 2, "most malformed entry frames must be refused: " + Arrays.toString(counts));
  }

  @Test
  void anOwnerThatCouldNotBeSerializedAgainIsRefusedWhileDecoding() throws Exception {
    // found by the live-directory fuzzing below: CBOR text holding the UTF-8-style bytes of a lone surrogate
    // (ED BF BF = U+DFFF) decodes into a String that Jackson then cannot write, which made the Replicator fail
    // on its next digest of the map; it must be refused as the frame is decoded
    DirectoryEntry valid = DirectoryEntry.of(desc(1), owner);
    byte[] frame = serialization.serialize(valid).get();
    byte[] host = "127.0.0.1".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    int at = indexOf(frame, host);
    assertTrue(at > 0, "owner address not found in the frame");
    frame[at] = (byte) 0xed;
    frame[at + 1] = (byte) 0xbf;
    frame[at + 2] = (byte) 0xbf;
    Serializer s = serialization.serializerFor(DirectoryEntry.class);
    byte[] bad = frame;
    assertThrows(Exception.class, () -> serialization.deserialize(bad, s.identifier(), Serializers.manifestFor(s, valid)).get(),
        "an entry whose owner holds a lone surrogate must not decode");
    assertThrows(IllegalArgumentException.class, () -> new DirectoryEntry(desc(1).toBytes(), "pekko://a@\udfff:1", 1));
  }

  private static int indexOf(byte[] hay, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= hay.length; i++) {
      for (int j = 0; j < needle.length; j++) if (hay[i + j] != needle[j]) continue outer;
      return i;
    }
    return -1;
  }

  @Test
  void malformedMapAndDeltaFramesAreRefusedWithoutErrorsOrHangs() throws Exception {
    SplittableRandom rnd = new SplittableRandom(6262);
    int[] full = fuzz(map(4), rnd, null);
    int[] delta = fuzz(map(2).delta().get(), rnd, null);
    System.out.printf("LWWMap frames: %d refused, %d decoded with only valid entries; delta frames: %d refused, %d decoded%n",
        full[0], full[1], delta[0], delta[1]);
    assertTrue(full[0] > ROUNDS / 4, "malformed map frames must mostly be refused: " + Arrays.toString(full));
    assertTrue(delta[0] > ROUNDS / 4, "malformed delta frames must mostly be refused: " + Arrays.toString(delta));
  }

  @Test
  void garbageInTheReplicatedMapNeitherCrashesNorHangsALiveDirectory() throws Exception {
    Cluster cluster = Cluster.get(system);
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    try (Arena arena = Arena.ofShared(); IoEngine engine = IoEngine.create(system, "fuzz-" + Long.toHexString(System.nanoTime()), IoEngineConfig.loopback())) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      DescriptorDirectory dir = DescriptorDirectory.start(engine);
      SelfUniqueAddress self = DistributedData.get(system).selfUniqueAddress();
      byte[] valid = serialization.serialize(DirectoryEntry.of(desc(1), self.uniqueAddress())).get();
      Serializer s = serialization.serializerFor(DirectoryEntry.class);
      String manifest = Serializers.manifestFor(s, DirectoryEntry.of(desc(1), owner));
      // an anchor that must survive: a Replicator that failed and restarted would have lost it
      MemoryDesc anchor = engine.registerMemory(arena.allocate(4096, 8));
      dir.publish("fuzz/anchor", anchor).toCompletableFuture().get(30, TimeUnit.SECONDS);
      SplittableRandom rnd = new SplittableRandom(7373);
      int written = 0;
      for (int i = 0; i < 300; i++) {
        byte[] frame = flip(valid.clone(), rnd, 1 + rnd.nextInt(6));
        Object decoded;
        try {
          decoded = serialization.deserialize(frame, s.identifier(), manifest).get();
        } catch (Exception refused) {
          continue;
        }
        if (!(decoded instanceof DirectoryEntry e)) continue;
        String name = "fuzz/" + i;
        var r = AskPattern.<Replicator.Command, Replicator.UpdateResponse<LWWMap<String, DirectoryEntry>>>ask(DistributedData.get(system).replicator(),
            replyTo -> new Replicator.Update<>(DescriptorDirectory.KEY, LWWMap.create(), Replicator.writeLocal(), replyTo, m -> m.put(self, name, e)),
            Duration.ofSeconds(10), system.scheduler()).toCompletableFuture().get(15, TimeUnit.SECONDS);
        assertInstanceOf(Replicator.UpdateSuccess.class, r);
        written++;
        try {
          dir.lookup(name, Duration.ofMillis(200)).toCompletableFuture().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException failed) {
          IoEngineException x = assertInstanceOf(IoEngineException.class, failed.getCause());
          assertTrue(x.code() == StatusCode.ERR_INVALID_ARGS || x.code() == StatusCode.ERR_NOT_FOUND, x.toString());
          assertTrue(x.getMessage().contains(name), x.getMessage());
        }
      }
      assertTrue(written > 50, "too few fuzzed entries decoded to exercise the directory: " + written);
      // still serving
      MemoryDesc mine = engine.registerMemory(arena.allocate(4096, 8));
      dir.publish("fuzz/valid", mine).toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(mine, dir.lookup("fuzz/valid").toCompletableFuture().get(30, TimeUnit.SECONDS));
      var local = AskPattern.<Replicator.Command, Replicator.GetResponse<LWWMap<String, DirectoryEntry>>>ask(DistributedData.get(system).replicator(),
          replyTo -> new Replicator.Get<>(DescriptorDirectory.KEY, Replicator.readLocal(), replyTo), Duration.ofSeconds(10), system.scheduler())
          .toCompletableFuture().get(15, TimeUnit.SECONDS);
      var got = assertInstanceOf(Replicator.GetSuccess.class, local, "the replica after the fuzzing");
      assertTrue(((LWWMap<?, ?>) got.dataValue()).getEntries().containsKey("fuzz/anchor"), "the Replicator lost its data (it failed and restarted)");
      System.out.printf("%d fuzzed entries written into a live directory's replica; it kept answering%n", written);
    }
  }

  /**
   * {@link #ROUNDS} frames derived from {@code valid}'s serialized form (random, truncated, flipped, and, when
   * {@code garbage} is given, well-formed frames of garbage values), each decoded with a time limit; returns
   * {refused, decoded}. Decoded directory entries (alone or inside a map) must pass or fail {@link DirectoryEntry#check}
   * with {@code IllegalArgumentException} only.
   */
  private int[] fuzz(Object valid, SplittableRandom rnd, Supplier<DirectoryEntry> garbage) throws Exception {
    Serializer s = serialization.findSerializerFor(valid);
    String manifest = Serializers.manifestFor(s, valid);
    byte[] bytes = serialization.serialize(valid).get();
    int[] counts = new int[2];
    int kinds = garbage == null ? 3 : 4;
    for (int i = 0; i < ROUNDS; i++) {
      byte[] frame = switch (i % kinds) {
        case 0 -> randomBytes(rnd, rnd.nextInt(0, 512));
        case 1 -> Arrays.copyOf(bytes, rnd.nextInt(0, bytes.length));
        case 2 -> flip(bytes.clone(), rnd, 1 + rnd.nextInt(8));
        default -> serialization.serialize(garbage.get()).get();
      };
      int n = i;
      boolean ok = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> decodesToValid(frame, s.identifier(), manifest),
          "frame " + n + " hung the decoder");
      counts[ok ? 1 : 0]++;
    }
    return counts;
  }

  private boolean decodesToValid(byte[] frame, int serializerId, String manifest) {
    Object m;
    try {
      m = serialization.deserialize(frame, serializerId, manifest).get();
    } catch (Exception e) {
      return false; // the serializer said no: what a garbage frame from another member must get
    }
    if (m instanceof DirectoryEntry e) return checks(e, "kv/x");
    if (m instanceof LWWMap<?, ?> map) {
      boolean all = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) map.getEntries()).entrySet()) {
        if (!(e.getKey() instanceof String name) || !(e.getValue() instanceof DirectoryEntry d)) return false;
        all &= checks(d, name);
      }
      return all;
    }
    return m != null; // a delta: decoded (its entries are checked once merged into a map, as above)
  }

  private boolean checks(DirectoryEntry e, String name) {
    try {
      e.check(name, settings);
      return true; // a flip inside, say, the address's digits can leave a valid entry
    } catch (IllegalArgumentException refused) {
      return false;
    }
  }
}
