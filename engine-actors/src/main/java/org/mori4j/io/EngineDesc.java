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
 * peer knows whether GPU peer copies can reach it), and its incarnation: a random non-zero number the engine
 * chose when it started, so that an engine restarted under the same key (and address) is told apart from
 * the process it replaces; 0 means "not stated" (a descriptor built by hand, or one of format 1 or 2). Pass it
 * to the other side out of band with {@link #toBytes()} and {@link #fromBytes(byte[])}.
 */
public record EngineDesc(String key, String nodeId, String host, int port, long pid, String controlPath,
                         Set<BackendType> backends, Map<BackendType, byte[]> backendData, long incarnation) {
  private static final int MAGIC = 0x4d344a45; // "M4JE"
  /** Version 1 has no backend data; an engine without any writes it, so older readers still read it. */
  private static final int VERSION = 1;
  private static final int VERSION_WITH_DATA = 2;
  /** Version 3 adds the incarnation (after the backend mask) and allows zero backend data entries. */
  private static final int VERSION_WITH_INCARNATION = 3;

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

  /** A descriptor without backend data or incarnation. */
  public EngineDesc(String key, String nodeId, String host, int port, long pid, String controlPath, Set<BackendType> backends) {
    this(key, nodeId, host, port, pid, controlPath, backends, null, 0);
  }

  /** A descriptor without an incarnation (0: not stated). */
  public EngineDesc(String key, String nodeId, String host, int port, long pid, String controlPath, Set<BackendType> backends,
                    Map<BackendType, byte[]> backendData) {
    this(key, nodeId, host, port, pid, controlPath, backends, backendData, 0);
  }

  /** What backend {@code type} added to this descriptor, or null; a copy. */
  public byte[] backendData(BackendType type) {
    byte[] b = backendData.get(type);
    return b == null ? null : b.clone();
  }

  /** The versioned binary form. */
  public byte[] toBytes() {
    // the oldest format that holds what this descriptor carries, so that older readers keep reading what they can
    int version = incarnation != 0 ? VERSION_WITH_INCARNATION : backendData.isEmpty() ? VERSION : VERSION_WITH_DATA;
    DescriptorCodec.Writer w = new DescriptorCodec.Writer().header(MAGIC, version)
        .string(key).string(nodeId).string(host).i32(port).i64(pid).string(controlPath);
    int mask = 0;
    for (BackendType t : backends) mask |= 1 << t.ordinal();
    w.i32(mask);
    if (version == VERSION_WITH_INCARNATION) w.i64(incarnation).i8(backendData.size());
    else if (!backendData.isEmpty()) w.i8(backendData.size());
    if (!backendData.isEmpty()) {
      backendData.forEach((k, v) -> w.i8(k.ordinal()).blob(v));
    }
    return w.toBytes();
  }

  /** Parses {@link #toBytes()}'s output; anything else throws {@link IllegalArgumentException}. */
  public static EngineDesc fromBytes(byte[] bytes) {
    return DescriptorCodec.decode("EngineDesc", () -> {
      ByteBuffer in = DescriptorCodec.open(bytes, MAGIC, VERSION, VERSION_WITH_INCARNATION, "EngineDesc");
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
      long incarnation = 0;
      if (version == VERSION_WITH_INCARNATION) {
        DescriptorCodec.need(in, 8, "EngineDesc.incarnation");
        incarnation = in.getLong();
        if (incarnation == 0) throw new IllegalArgumentException("EngineDesc.incarnation: 0 in a format-3 descriptor");
      }
      if (version != VERSION) {
        DescriptorCodec.need(in, 1, "EngineDesc.backendData");
        int n = in.get() & 0xff;
        if ((n == 0 && version == VERSION_WITH_DATA) || n > BackendType.values().length) throw new IllegalArgumentException("EngineDesc.backendData: " + n + " entries");
        for (int i = 0; i < n; i++) {
          DescriptorCodec.need(in, 1, "EngineDesc.backendData");
          int t = in.get() & 0xff;
          if (t >= BackendType.values().length) throw new IllegalArgumentException("EngineDesc.backendData: unknown backend " + t);
          if (data.put(BackendType.values()[t], DescriptorCodec.readBlob(in, "EngineDesc.backendData")) != null)
            throw new IllegalArgumentException("EngineDesc.backendData: backend " + BackendType.values()[t] + " twice");
        }
      }
      DescriptorCodec.expectEnd(in, "EngineDesc");
      return new EngineDesc(key, nodeId, host, port, pid, path, set, data, incarnation);
    });
  }

  /** An incarnation as logs and error messages show it: hexadecimal, or "not stated" for 0. */
  public static String incarnationText(long incarnation) {
    return incarnation == 0 ? "not stated" : "0x" + Long.toHexString(incarnation);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof EngineDesc d)) return false;
    if (!(key.equals(d.key) && nodeId.equals(d.nodeId) && host.equals(d.host) && port == d.port && pid == d.pid
        && controlPath.equals(d.controlPath) && backends.equals(d.backends) && incarnation == d.incarnation && backendData.keySet().equals(d.backendData.keySet()))) return false;
    for (var e : backendData.entrySet()) if (!Arrays.equals(e.getValue(), d.backendData.get(e.getKey()))) return false;
    return true;
  }

  @Override
  public int hashCode() {
    return Objects.hash(key, nodeId, host, port, pid, controlPath, backends, incarnation);
  }

  @Override
  public String toString() {
    return "EngineDesc[key=" + key + ", node=" + nodeId + ", " + host + ":" + port + ", pid=" + pid + ", incarnation=" + incarnationText(incarnation) + ", control=" + controlPath
        + ", backends=" + backends + (backendData.isEmpty() ? "" : ", data of " + backendData.keySet()) + "]";
  }
}
