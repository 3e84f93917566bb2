package org.mori4j.io;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.mori4j.io.internal.DescriptorCodec;

/**
 * Everything another engine needs to reach this one: its key (unique among the engines that talk to each
 * other), the node it runs on, the host and port its control plane (Pekko remoting) listens on, the full
 * address of its engine actor, its process id, the backends it had when the descriptor was taken, and what
 * those backends add (the XGMI backend: the host, PID namespace and process the engine runs in, so that a
 * peer knows whether GPU peer copies can reach it). Pass it to the other side out of band with
 * {@link #toBytes()} and {@link #fromBytes(byte[])}.
 */
public record EngineDesc(String key, String nodeId, String host, int port, long pid, String controlPath,
                         Set<BackendType> backends, Map<BackendType, byte[]> backendData) {
  private static final int MAGIC = 0x4d344a45; // "M4JE"
  /** Version 1 has no backend data; an engine without any writes it, so older readers still read it. */
  private static final int VERSION = 1;
  private static final int VERSION_WITH_DATA = 2;

  public EngineDesc {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(nodeId, "nodeId");
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(controlPath, "controlPath");
    if (key.isEmpty()) throw new IllegalArgumentException("key must not be empty");
    if (port < 0 || port > 65535) throw new IllegalArgumentException("port out of range: " + port);
    backends = backends == null || backends.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(backends));
    EnumMap<BackendType, byte[]> copy = new EnumMap<>(BackendType.class);
    if (backendData != null) backendData.forEach((k, v) -> copy.put(Objects.requireNonNull(k), v.clone()));
    backendData = Collections.unmodifiableMap(copy);
  }

  /** A descriptor without backend data. */
  public EngineDesc(String key, String nodeId, String host, int port, long pid, String controlPath, Set<BackendType> backends) {
    this(key, nodeId, host, port, pid, controlPath, backends, null);
  }

  /** What backend {@code type} added to this descriptor, or null; a copy. */
  public byte[] backendData(BackendType type) {
    byte[] b = backendData.get(type);
    return b == null ? null : b.clone();
  }

  /** The versioned binary form. */
  public byte[] toBytes() {
    DescriptorCodec.Writer w = new DescriptorCodec.Writer().header(MAGIC, backendData.isEmpty() ? VERSION : VERSION_WITH_DATA)
        .string(key).string(nodeId).string(host).i32(port).i64(pid).string(controlPath);
    int mask = 0;
    for (BackendType t : backends) mask |= 1 << t.ordinal();
    w.i32(mask);
    if (!backendData.isEmpty()) {
      w.i8(backendData.size());
      backendData.forEach((k, v) -> w.i8(k.ordinal()).blob(v));
    }
    return w.toBytes();
  }

  /** Parses {@link #toBytes()}'s output; anything else throws {@link IllegalArgumentException}. */
  public static EngineDesc fromBytes(byte[] bytes) {
    return DescriptorCodec.decode("EngineDesc", () -> {
      ByteBuffer in = DescriptorCodec.open(bytes, MAGIC, VERSION, VERSION_WITH_DATA, "EngineDesc");
      int version = DescriptorCodec.version(in);
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
      EnumMap<BackendType, byte[]> data = new EnumMap<>(BackendType.class);
      if (version == VERSION_WITH_DATA) {
        DescriptorCodec.need(in, 1, "EngineDesc.backendData");
        int n = in.get() & 0xff;
        if (n == 0 || n > BackendType.values().length) throw new IllegalArgumentException("EngineDesc.backendData: " + n + " entries");
        for (int i = 0; i < n; i++) {
          DescriptorCodec.need(in, 1, "EngineDesc.backendData");
          int t = in.get() & 0xff;
          if (t >= BackendType.values().length) throw new IllegalArgumentException("EngineDesc.backendData: unknown backend " + t);
          if (data.put(BackendType.values()[t], DescriptorCodec.readBlob(in, "EngineDesc.backendData")) != null)
            throw new IllegalArgumentException("EngineDesc.backendData: backend " + BackendType.values()[t] + " twice");
        }
      }
      DescriptorCodec.expectEnd(in, "EngineDesc");
      return new EngineDesc(key, nodeId, host, port, pid, path, set, data);
    });
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof EngineDesc d)) return false;
    if (!(key.equals(d.key) && nodeId.equals(d.nodeId) && host.equals(d.host) && port == d.port && pid == d.pid
        && controlPath.equals(d.controlPath) && backends.equals(d.backends) && backendData.keySet().equals(d.backendData.keySet()))) return false;
    for (var e : backendData.entrySet()) if (!Arrays.equals(e.getValue(), d.backendData.get(e.getKey()))) return false;
    return true;
  }

  @Override
  public int hashCode() {
    return Objects.hash(key, nodeId, host, port, pid, controlPath, backends);
  }

  @Override
  public String toString() {
    return "EngineDesc[key=" + key + ", node=" + nodeId + ", " + host + ":" + port + ", pid=" + pid + ", control=" + controlPath
        + ", backends=" + backends + (backendData.isEmpty() ? "" : ", data of " + backendData.keySet()) + "]";
  }
}
