package org.mori4j.cluster;

import java.util.SplittableRandom;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;

/** Frames for the fuzz tests: random and damaged bytes, and a message's trip through the registered serializer. */
final class FuzzFrames {
  private FuzzFrames() {}

  /** {@code m} serialized and deserialized by the serializer the ActorSystem binds to its class. */
  static Object roundTrip(Serialization serialization, Object m) throws Exception {
    byte[] bytes = serialization.serialize(m).get();
    Serializer s = serialization.findSerializerFor(m);
    return serialization.deserialize(bytes, s.identifier(), Serializers.manifestFor(s, m)).get();
  }

  static byte[] randomBytes(SplittableRandom rnd, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) b[i] = (byte) rnd.nextInt(256);
    return b;
  }

  /** Overwrites {@code times} random bytes of {@code b} in place and returns it. */
  static byte[] flip(byte[] b, SplittableRandom rnd, int times) {
    if (b.length == 0) return b;
    for (int i = 0; i < times; i++) b[rnd.nextInt(b.length)] = (byte) rnd.nextInt(256);
    return b;
  }
}
