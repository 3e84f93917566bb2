package org.mori4j.io;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import org.mori4j.io.internal.DescriptorCodec;

/**
 * A registered memory region as its owner advertises it: the owning engine's key, the registration id,
 * device, address, size and location, an access key the owner checks on every remote request (so a
 * descriptor with another id, a larger size or a shifted address is refused), and per-backend data
 * (RDMA keys, GPU IPC handles) that backends add, and the owning engine's incarnation
 * ({@link EngineDesc#incarnation()}; 0: not stated), so that a descriptor of an engine that has since been
 * restarted under the same key is refused instead of being served against the new process's memory. Pass it
 * to peers with {@link #toBytes()}.
 */
public record MemoryDesc(String engineKey, long id, int deviceId, long address, long size,
                         MemoryLocationType location, long accessKey, Map<BackendType, byte[]> backendData,
                         long ownerIncarnation) {
  private static final int MAGIC = 0x4d344a4d; // "M4JM"
  private static final int VERSION = 1;
  /** Version 2 adds the owner's incarnation after the access key. */
  private static final int VERSION_WITH_INCARNATION = 2;

  public MemoryDesc {
    Objects.requireNonNull(engineKey, "engineKey");
    Objects.requireNonNull(location, "location");
    if (size <= 0) throw new IllegalArgumentException("size must be positive: " + size);
    EnumMap<BackendType, byte[]> copy = new EnumMap<>(BackendType.class);
    if (backendData != null) backendData.forEach((k, v) -> copy.put(Objects.requireNonNull(k), v.clone()));
    backendData = java.util.Collections.unmodifiableMap(copy);
  }

  /** A descriptor without the owner's incarnation (0: not stated). */
  public MemoryDesc(String engineKey, long id, int deviceId, long address, long size, MemoryLocationType location, long accessKey,
                    Map<BackendType, byte[]> backendData) {
    this(engineKey, id, deviceId, address, size, location, accessKey, backendData, 0);
  }

  /** The per-backend data of {@code type}, or null; a copy. */
  public byte[] backendData(BackendType type) {
    byte[] b = backendData.get(type);
    return b == null ? null : b.clone();
  }

  public byte[] toBytes() {
    DescriptorCodec.Writer w = new DescriptorCodec.Writer().header(MAGIC, ownerIncarnation == 0 ? VERSION : VERSION_WITH_INCARNATION)
        .string(engineKey).i64(id).i32(deviceId).i64(address).i64(size).i8(location.ordinal()).i64(accessKey);
    if (ownerIncarnation != 0) w.i64(ownerIncarnation);
    w.i8(backendData.size());
    backendData.forEach((k, v) -> w.i8(k.ordinal()).blob(v));
    return w.toBytes();
  }

  /** Parses {@link #toBytes()}'s output; anything else throws {@link IllegalArgumentException}. */
  public static MemoryDesc fromBytes(byte[] bytes) {
    return DescriptorCodec.decode("MemoryDesc", () -> {
      ByteBuffer in = DescriptorCodec.open(bytes, MAGIC, VERSION, VERSION_WITH_INCARNATION, "MemoryDesc");
      boolean withIncarnation = DescriptorCodec.version(in) == VERSION_WITH_INCARNATION;
      String key = DescriptorCodec.readString(in, "MemoryDesc.engineKey");
      DescriptorCodec.need(in, 8 + 4 + 8 + 8 + 1 + 8 + 1, "MemoryDesc");
      long id = in.getLong();
      int dev = in.getInt();
      long addr = in.getLong();
      long size = in.getLong();
      if (size <= 0) throw new IllegalArgumentException("MemoryDesc.size must be positive: " + size);
      int loc = in.get() & 0xff;
      if (loc >= MemoryLocationType.values().length) throw new IllegalArgumentException("MemoryDesc.location: unknown " + loc);
      long accessKey = in.getLong();
      long incarnation = 0;
      if (withIncarnation) {
        DescriptorCodec.need(in, 8 + 1, "MemoryDesc.ownerIncarnation");
        incarnation = in.getLong();
        if (incarnation == 0) throw new IllegalArgumentException("MemoryDesc.ownerIncarnation: incarnation 0 (not stated) in a format-2 descriptor");
      }
      int n = in.get() & 0xff;
      if (n > BackendType.values().length) throw new IllegalArgumentException("MemoryDesc.backendData: " + n + " entries");
      EnumMap<BackendType, byte[]> data = new EnumMap<>(BackendType.class);
      for (int i = 0; i < n; i++) {
        DescriptorCodec.need(in, 1, "MemoryDesc.backendData");
        int t = in.get() & 0xff;
        if (t >= BackendType.values().length) throw new IllegalArgumentException("MemoryDesc.backendData: unknown backend " + t);
        if (data.put(BackendType.values()[t], DescriptorCodec.readBlob(in, "MemoryDesc.backendData")) != null)
          throw new IllegalArgumentException("MemoryDesc.backendData: backend " + BackendType.values()[t] + " twice");
      }
      DescriptorCodec.expectEnd(in, "MemoryDesc");
      return new MemoryDesc(key, id, dev, addr, size, MemoryLocationType.values()[loc], accessKey, data, incarnation);
    });
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof MemoryDesc m)) return false;
    if (!(engineKey.equals(m.engineKey) && id == m.id && deviceId == m.deviceId && address == m.address
        && size == m.size && location == m.location && accessKey == m.accessKey && ownerIncarnation == m.ownerIncarnation
        && backendData.keySet().equals(m.backendData.keySet()))) return false;
    for (var e : backendData.entrySet()) if (!Arrays.equals(e.getValue(), m.backendData.get(e.getKey()))) return false;
    return true;
  }

  @Override
  public int hashCode() {
    return Objects.hash(engineKey, id, address, size, accessKey, ownerIncarnation);
  }

  @Override
  public String toString() {
    return "MemoryDesc[engine=" + engineKey + ", id=" + id + ", " + location + (location == MemoryLocationType.GPU ? ":" + deviceId : "")
        + ", address=0x" + Long.toHexString(address) + ", size=" + size + ", backends=" + backendData.keySet()
        + (ownerIncarnation == 0 ? "" : ", incarnation=" + EngineDesc.incarnationText(ownerIncarnation)) + "]";
  }
}
