package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;

import java.io.NotSerializableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.SerializerWithStringManifest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mori4j.io.internal.ControlMessageSerializer;
import org.mori4j.io.internal.EngineMessages;
import org.mori4j.io.internal.XgmiMessages;

/**
 * The serializer of the messages engines exchange over remoting, taken from a real engine's ActorSystem:
 * valid messages round-trip; malformed frames (truncated, mutated, random, unknown manifest) are refused
 * with NotSerializableException and nothing else.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ControlMessageFuzzTest {
  private IoEngine engine;
  private SerializerWithStringManifest serializer;
  private ActorRef<Object> ref;

  @BeforeAll
  void start() throws Exception {
    engine = IoEngine.create("serializer-fuzz-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
    Serialization ser = SerializationExtension.get(Adapter.toClassic(engine.actorSystem()));
    serializer = (SerializerWithStringManifest) ser.serializerFor(EngineDesc.class);
    assertInstanceOf(ControlMessageSerializer.class, serializer, "reference.conf binds descriptors to mori4j's serializer");
    assertSame(serializer, ser.serializerFor(IoEngineProtocol.GetEngineDesc.class));
    ref = ActorRefResolver.get(engine.actorSystem()).resolveActorRef(engine.engineDesc().controlPath());
  }

  @AfterAll
  void stop() {
    if (engine != null) engine.close();
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private <T> ActorRef<T> ref() {
    return (ActorRef) ref;
  }

  private List<Object> samples() {
    MemoryDesc m = new MemoryDesc("engine-x", 7, -1, 0x10000, 4096, MemoryLocationType.CPU, 99, null);
    return List.of(
        engine.engineDesc(),
        new EngineDesc("e", "n", "127.0.0.1", 1, 2, "pekko://mori4j@127.0.0.1:1/user", Set.of(BackendType.TCP)),
        m,
        new IoEngineProtocol.GetEngineDesc(ref()),
        new IoEngineProtocol.LookupMemory("buf", ref()),
        new IoEngineProtocol.MemoryLookup("buf", List.of(m)),
        new IoEngineProtocol.MemoryLookup("none", List.of()),
        new EngineMessages.BackendHandshake("engine-y", BackendType.TCP, new byte[] {1, 2, 3}, ref()),
        new EngineMessages.BackendHandshake("engine-z", BackendType.RDMA, new byte[] {4}, ref(), 0x5eed_0001L, -7),
        new MemoryDesc("engine-x", 8, -1, 0x20000, 4096, MemoryLocationType.CPU, 98, null, 0x77L),
        new EngineMessages.HandshakeReply(new byte[] {9, 8, 7, 6}, null),
        new EngineMessages.HandshakeReply(new byte[0], "refused: no TCP backend"),
        new XgmiMessages.Confirm("engine-y", 7, -99, BackendType.RDMA, ref(), ref()),
        new XgmiMessages.Confirm("engine-y", 8, 3, BackendType.XGMI, ref(), ref(), 0x1234_5678L),
        new XgmiMessages.ConfirmReply(0x7f00_0000_0000L, 1L << 30, new byte[94], 0, ""),
        new XgmiMessages.ConfirmReply(0, 0, new byte[0], 2, "memory id 7 is not registered"),
        new XgmiMessages.Revoke("engine-x", 7, ref()),
        new XgmiMessages.Revoked("engine-y", 7),
        new XgmiMessages.ImporterClosed("engine-y"));
  }

  /** Field-wise equality for the records that hold arrays. */
  private static void assertSameMessage(Object expected, Object actual) {
    switch (expected) {
      case EngineMessages.BackendHandshake h when actual instanceof EngineMessages.BackendHandshake a -> {
        assertEquals(h.fromKey(), a.fromKey());
        assertEquals(h.type(), a.type());
        assertArrayEquals(h.request(), a.request());
        assertEquals(h.replyTo().path(), a.replyTo().path());
        assertEquals(List.of(h.fromIncarnation(), h.toIncarnation()), List.of(a.fromIncarnation(), a.toIncarnation()));
      }
      case EngineMessages.HandshakeReply h when actual instanceof EngineMessages.HandshakeReply a -> {
        assertArrayEquals(h.data(), a.data());
        assertEquals(h.error(), a.error());
      }
      case IoEngineProtocol.GetEngineDesc g when actual instanceof IoEngineProtocol.GetEngineDesc a ->
          assertEquals(g.replyTo().path(), a.replyTo().path());
      case IoEngineProtocol.LookupMemory l when actual instanceof IoEngineProtocol.LookupMemory a -> {
        assertEquals(l.name(), a.name());
        assertEquals(l.replyTo().path(), a.replyTo().path());
      }
      case XgmiMessages.Confirm c when actual instanceof XgmiMessages.Confirm a -> {
        assertEquals(List.of(c.fromKey(), c.regionId(), c.accessKey(), c.from().path(), c.replyTo().path(), c.ownerIncarnation()),
            List.of(a.fromKey(), a.regionId(), a.accessKey(), a.from().path(), a.replyTo().path(), a.ownerIncarnation()));
      }
      case XgmiMessages.ConfirmReply c when actual instanceof XgmiMessages.ConfirmReply a -> {
        assertEquals(List.of(c.address(), c.size(), c.error(), c.reason()), List.of(a.address(), a.size(), a.error(), a.reason()));
        assertArrayEquals(c.data(), a.data());
      }
      case XgmiMessages.Revoke r when actual instanceof XgmiMessages.Revoke a -> {
        assertEquals(List.of(r.ownerKey(), r.regionId(), r.replyTo().path()), List.of(a.ownerKey(), a.regionId(), a.replyTo().path()));
      }
      default -> assertEquals(expected, actual);
    }
  }

  /** NotSerializableException or a well-formed message; anything else fails the test. */
  private int tryDecode(byte[] b, String manifest, String what) {
    Object o;
    try {
      o = serializer.fromBinary(b, manifest);
    } catch (NotSerializableException expected) {
      return 0;
    } catch (Throwable t) {
      throw new AssertionError(what + ": " + t + " instead of NotSerializableException", t);
    }
    assertNotNull(o, what);
    assertEquals(manifest, serializer.manifest(o), what + ": decoded into another message type");
    return 1;
  }

  @Test
  void everyControlMessageRoundTrips() throws Exception {
    for (Object m : samples()) {
      byte[] b = serializer.toBinary(m);
      Object back = serializer.fromBinary(b, serializer.manifest(m));
      assertSameMessage(m, back);
    }
  }

  @Test
  void truncatedFramesAreRefused() {
    assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
      for (Object m : samples()) {
        byte[] b = serializer.toBinary(m);
        String man = serializer.manifest(m);
        for (int n = 0; n < b.length; n++) {
          byte[] t = java.util.Arrays.copyOf(b, n);
          assertThrows(NotSerializableException.class, () -> serializer.fromBinary(t, man), man + " cut to " + n + " of " + b.length);
        }
      }
    });
  }

  @Test
  void mutatedFramesAreRefusedOrStillWellFormed() {
    assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
      int[] masks = {0x01, 0x20, 0x80, 0xff};
      for (Object m : samples()) {
        byte[] b = serializer.toBinary(m);
        String man = serializer.manifest(m);
        for (int i = 0; i < b.length; i++) {
          for (int mask : masks) {
            byte[] c = b.clone();
            c[i] ^= (byte) mask;
            tryDecode(c, man, man + " byte " + i + " ^ " + mask);
          }
          for (int len : new int[] {Integer.MAX_VALUE, -1, 1 << 20}) {
            if (i + 4 > b.length) continue;
            byte[] c = b.clone();
            java.nio.ByteBuffer.wrap(c).putInt(i, len);
            tryDecode(c, man, man + " int at " + i + " = " + len);
          }
        }
        byte[] longer = java.util.Arrays.copyOf(b, b.length + 1);
        assertThrows(NotSerializableException.class, () -> serializer.fromBinary(longer, man), man + " with a trailing byte");
      }
    });
  }

  @Test
  void randomFramesAreRefused() {
    assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
      SplittableRandom r = new SplittableRandom(7);
      List<String> manifests = new ArrayList<>();
      for (Object m : samples()) if (!manifests.contains(serializer.manifest(m))) manifests.add(serializer.manifest(m));
      for (int i = 0; i < 20_000; i++) {
        byte[] b = new byte[r.nextInt(200)];
        r.nextBytes(b);
        for (String man : manifests) tryDecode(b, man, man + " random " + i);
      }
    });
  }

  @Test
  void unknownManifestIsRefused() {
    byte[] b = serializer.toBinary(new EngineMessages.HandshakeReply(new byte[0], null));
    for (String man : new String[] {"", "X", "EE", "java.lang.String", "h "})
      assertThrows(NotSerializableException.class, () -> serializer.fromBinary(b, man), "manifest '" + man + "'");
  }

  @Test
  void oversizedFrameIsRefused() {
    byte[] huge = new byte[(2 << 20)];
    for (String man : new String[] {"E", "M", "G", "L", "R", "H", "h"})
      assertThrows(NotSerializableException.class, () -> serializer.fromBinary(huge, man), man);
  }

  @Test
  void replyAddressThatIsNotAnActorPathIsRefused() throws Exception {
    // a GetEngineDesc whose reply-to is some other string must not be resolved
    byte[] b = serializer.toBinary(new IoEngineProtocol.GetEngineDesc(ref()));
    String good = new String(b, 4, b.length - 4, java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(good.startsWith("pekko"), good);
    for (String bad : new String[] {"http://example.org/", "", "/user/x", "file:///etc/passwd"}) {
      byte[] s = bad.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      byte[] frame = java.nio.ByteBuffer.allocate(4 + s.length).putInt(s.length).put(s).array();
      assertThrows(NotSerializableException.class, () -> serializer.fromBinary(frame, "G"), bad);
    }
  }
}
