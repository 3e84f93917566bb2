package org.mori4j.cluster;

import static org.mori4j.cluster.FuzzFrames.flip;
import static org.mori4j.cluster.FuzzFrames.randomBytes;
import static org.mori4j.cluster.FuzzFrames.roundTrip;
import static org.junit.jupiter.api.Assertions.*;

import com.typesafe.config.ConfigFactory;
import java.io.Serializable;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.SplittableRandom;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.apache.pekko.serialization.Serializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;

/**
 * The messages cluster members exchange, pushed through the serializer a clustered ActorSystem really uses:
 * they are bound to Jackson CBOR (never Java serialization, which stays off), a valid descriptor message
 * round-trips, and malformed frames (random bytes, truncations, byte flips, a descriptor inside a valid frame
 * that is garbage) end in an exception or a descriptor that {@link EngineDesc#fromBytes} refuses with
 * {@code IllegalArgumentException}: never an {@code Error}, a hang or a descriptor that should not exist.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterMessageFuzzTest {
  private static final int ROUNDS = 3000;

  private ActorSystem<Void> system;
  private Serialization serialization;

  @BeforeAll
  void start() {
    system = ActorSystem.create(Behaviors.empty(), "mori4j-cluster-fuzz", ConfigFactory.parseString("""
        pekko.actor.provider = cluster
        pekko.remote.artery.canonical.hostname = "127.0.0.1"
        pekko.remote.artery.canonical.port = 0
        pekko.cluster.jmx.multi-mbeans-in-same-jvm = on
        """).withFallback(ConfigFactory.load()));
    serialization = SerializationExtension.get(Adapter.toClassic(system));
  }

  @AfterAll
  void stop() {
    if (system != null) system.terminate();
  }

  private static byte[] descriptor() {
    return new EngineDesc("engine-a", "node-1", "127.0.0.1", 25520, 4242, "pekko://mori4j@127.0.0.1:25520/system/e",
        Set.of(BackendType.TCP)).toBytes();
  }

  @Test
  void remoteMessagesUseJacksonCborAndJavaSerializationStaysOff() throws Exception {
    Serializer s = serialization.serializerFor(ClusterEngine.EngineDescribed.class);
    assertTrue(s.getClass().getName().contains("JacksonCborSerializer"), "EngineDescribed is serialized by " + s.getClass());
    record Plain(int x) implements Serializable {}
    assertThrows(Exception.class, () -> serialization.serialize(new Plain(1)).get(),
        "an unbound Serializable must not fall back to Java serialization");
  }

  @Test
  void aValidDescriptorMessageRoundTrips() throws Exception {
    byte[] d = descriptor();
    Object back = roundTrip(serialization, new ClusterEngine.EngineDescribed(d));
    ClusterEngine.EngineDescribed m = assertInstanceOf(ClusterEngine.EngineDescribed.class, back);
    assertArrayEquals(d, m.descriptor());
    assertEquals("engine-a", EngineDesc.fromBytes(m.descriptor()).key());
  }

  @Test
  void malformedFramesAreRejectedWithoutErrorsOrHangs() throws Exception {
    byte[] valid = serialization.serialize(new ClusterEngine.EngineDescribed(descriptor())).get();
    Serializer s = serialization.serializerFor(ClusterEngine.EngineDescribed.class);
    String manifest = Serializers.manifestFor(s, new ClusterEngine.EngineDescribed(descriptor()));
    SplittableRandom rnd = new SplittableRandom(4242);
    int refused = 0, decoded = 0;
    for (int i = 0; i < ROUNDS; i++) {
      byte[] frame = switch (i % 4) {
        case 0 -> randomBytes(rnd, rnd.nextInt(0, 512));
        case 1 -> Arrays.copyOf(valid, rnd.nextInt(0, valid.length));
        case 2 -> flip(valid.clone(), rnd, 1 + rnd.nextInt(8));
        default -> {
          // a well-formed frame around a garbage descriptor: the engine's own parser must refuse it
          byte[] junk = flip(descriptor(), rnd, 1 + rnd.nextInt(16));
          yield serialization.serialize(new ClusterEngine.EngineDescribed(junk)).get();
        }
      };
      Outcome o = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> decode(frame, s.identifier(), manifest),
          "frame " + i + " hung the decoder");
      if (o == Outcome.REFUSED) refused++;
      else decoded++;
    }
    assertTrue(refused > ROUNDS / 4, "most malformed frames must be refused; refused " + refused + ", decoded " + decoded);
  }

  private enum Outcome { REFUSED, DECODED }

  private Outcome decode(byte[] frame, int serializerId, String manifest) {
    Object m;
    try {
      m = serialization.deserialize(frame, serializerId, manifest).get();
    } catch (Exception e) {
      return Outcome.REFUSED; // Jackson or the serializer said no: what a remote garbage frame must get
    }
    if (!(m instanceof ClusterEngine.EngineDescribed d)) return Outcome.REFUSED;
    if (d.descriptor() == null) return Outcome.REFUSED;
    try {
      EngineDesc.fromBytes(d.descriptor());
      return Outcome.DECODED; // a flip that left a valid descriptor (e.g. inside the key's text) is legitimate
    } catch (IllegalArgumentException e) {
      return Outcome.REFUSED;
    }
  }
}
