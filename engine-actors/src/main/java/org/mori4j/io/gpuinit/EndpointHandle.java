package org.mori4j.io.gpuinit;

import java.nio.ByteBuffer;
import java.util.Objects;
import org.mori4j.io.internal.DescriptorCodec;

/**
 * What a peer needs to connect to an endpoint: the owning engine's key and incarnation, the address of the
 * owning context's actor (which serves that endpoint's sends, write-with-immediate notices, atomics and rkey
 * lookups) and the endpoint's queue pair number. Pass it out of band with {@link #toBytes()}, as MORI's example
 * exchanges endpoint handles.
 */
public record EndpointHandle(String engineKey, long engineIncarnation, String contextPath, int qpn) {
  private static final int MAGIC = 0x4d344a48; // "M4JH"
  private static final int VERSION = 1;

  public EndpointHandle {
    Objects.requireNonNull(engineKey, "engineKey");
    Objects.requireNonNull(contextPath, "contextPath");
    if (engineKey.isEmpty()) throw new IllegalArgumentException("engineKey must not be empty");
    if (!contextPath.startsWith("pekko")) throw new IllegalArgumentException("contextPath is not an actor address: '" + contextPath + "'");
    if (qpn == 0) throw new IllegalArgumentException("qpn must be non-zero");
  }

  public byte[] toBytes() {
    return new DescriptorCodec.Writer().header(MAGIC, VERSION).string(engineKey).i64(engineIncarnation).string(contextPath).i32(qpn).toBytes();
  }

  /** Parses {@link #toBytes()}'s output; anything else throws {@link IllegalArgumentException}. */
  public static EndpointHandle fromBytes(byte[] bytes) {
    return DescriptorCodec.decode("EndpointHandle", () -> {
      ByteBuffer in = DescriptorCodec.open(bytes, MAGIC, VERSION, VERSION, "EndpointHandle");
      String key = DescriptorCodec.readString(in, "engineKey");
      DescriptorCodec.need(in, 8, "engineIncarnation");
      long inc = in.getLong();
      String path = DescriptorCodec.readString(in, "contextPath");
      DescriptorCodec.need(in, 4, "qpn");
      int qpn = in.getInt();
      DescriptorCodec.expectEnd(in, "EndpointHandle");
      return new EndpointHandle(key, inc, path, qpn);
    });
  }
}
