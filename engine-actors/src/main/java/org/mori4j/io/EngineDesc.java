package org.mori4j.io;

import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import org.mori4j.io.internal.DescriptorCodec;

/**
 * Everything another engine needs to reach this one: its key (unique among the engines that talk to each
 * other), the node it runs on, the host and port its control plane (Pekko remoting) listens on, the full
 * address of its engine actor, its process id and the backends it had when the descriptor was taken.
 * Pass it to the other side out of band with {@link #toBytes()} and {@link #fromBytes(byte[])}.
 */
public record EngineDesc(String key, String nodeId, String host, int port, long pid, String controlPath,
                         Set<BackendType> backends) {
  private static final int MAGIC = 0x4d344a45; // "M4JE"
  private static final int VERSION = 1;

  public EngineDesc {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(nodeId, "nodeId");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(controlPath, "controlPath");
    if (key.isEmpty()) throw new IllegalArgumentException("key must not be empty");
    if (port < 0 || port > 65535) throw new IllegalArgumentException("port out of range: " + port);
    backends = backends == null || backends.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(backends));
  }

  /** The versioned binary form. */
  public byte[] toBytes() {
    DescriptorCodec.Writer w = new DescriptorCodec.Writer().header(MAGIC, VERSION)
        .string(key).string(nodeId).string(host).i32(port).i64(pid).string(controlPath);
    int mask = 0;
    for (BackendType t : backends) mask |= 1 << t.ordinal();
    return w.i32(mask).toBytes();
  }

  /** Parses {@link #toBytes()}'s output; anything else throws {@link IllegalArgumentException}. */
  public static EngineDesc fromBytes(byte[] bytes) {
    return DescriptorCodec.decode("EngineDesc", () -> {
      ByteBuffer in = DescriptorCodec.open(bytes, MAGIC, VERSION, "EngineDesc");
      String key = DescriptorCodec.readString(in, "EngineDesc.key");
      if (key.isEmpty()) throw new IllegalArgumentException("EngineDesc.key: empty");
      String nodeId = DescriptorCodec.readString(in, "EngineDesc.nodeId");
      String host = DescriptorCodec.readString(in, "EngineDesc.host");
      DescriptorCodec.need(in, 12, "EngineDesc");
      int port = in.getInt();
      if (port < 0 || port > 65535) throw new IllegalArgumentException("EngineDesc.port out of range: " + port);
      long pid = in.getLong();
      String path = DescriptorCodec.readString(in, "EngineDesc.controlPath");
      DescriptorCodec.need(in, 4, "EngineDesc");
      int mask = in.getInt();
      if ((mask & ~((1 << BackendType.values().length) - 1)) != 0)
        throw new IllegalArgumentException("EngineDesc.backends: unknown bits 0x" + Integer.toHexString(mask));
      EnumSet<BackendType> set = EnumSet.noneOf(BackendType.class);
      for (BackendType t : BackendType.values()) if ((mask & (1 << t.ordinal())) != 0) set.add(t);
      DescriptorCodec.expectEnd(in, "EngineDesc");
      return new EngineDesc(key, nodeId, host, port, pid, path, set);
    });
  }
}
