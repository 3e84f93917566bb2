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
 * (RDMA keys, GPU IPC handles) that backends add. Pass it to peers with {@link #toBytes()}.
 */
public record MemoryDesc(String engineKey, long id, int deviceId, long address, long size,
                         MemoryLocationType location, long accessKey, Map<BackendType, byte[]> backendData) {
  private static final int MAGIC = 0x4d344a4d; // "M4JM"
  private static final int VERSION = 1;

  public MemoryDesc {
    Objects.requireNonNull(engineKey, "engineKey");
    Objects.requireNonNull(location, "location");
    if (size <= 0) throw new IllegalArgumentException("size must be positive: " + size);
    EnumMap<BackendType, byte[]> copy = new EnumMap<>(BackendType.class);
    if (backendData != null) backendData.forEach((k, v) -> copy.put(Objects.requireNonNull(k), v.clone()));
    backendData = java.util.Collections.unmodifiableMap(copy);
  }

  /** The per-backend data of {@code type}, or null; a copy. */
  public byte[] backendData(BackendType type) {
    byte[] b = backendData.get(type);
    return b == null ? null : b.clone();
  }

  public byte[] toBytes() {
    DescriptorCodec.Writer w = new DescriptorCodec.Writer().header(MAGIC, VERSION)
        .string(engineKey).i64(id).i32(deviceId).i64(address).i64(size).i8(location.ordinal()).i64(accessKey)
        .i8(backendData.size());
    backendData.forEach((k, v) -> w.i8(k.ordinal()).blob(v));
    return w.toBytes();
  }

  /** Parses {@link #toBytes()}'s output; anything else throws {@link IllegalArgumentException}. */
  public static MemoryDesc fromBytes(byte[] bytes) {
    return DescriptorCodec.decode("MemoryDesc", () -> {
      ByteBuffer in = DescriptorCodec.open(bytes, MAGIC, VERSION, "MemoryDesc");
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
      return new MemoryDesc(key, id, dev, addr, size, MemoryLocationType.values()[loc], accessKey, data);
    });
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof MemoryDesc m)) return false;
    if (!(engineKey.equals(m.engineKey) && id == m.id && deviceId == m.deviceId && address == m.address
        && size == m.size && location == m.location && accessKey == m.accessKey
        && backendData.keySet().equals(m.backendData.keySet()))) return false;
    for (var e : backendData.entrySet()) if (!Arrays.equals(e.getValue(), m.backendData.get(e.getKey()))) return false;
    return true;
  }

  @Override
  public int hashCode() {
    return Objects.hash(engineKey, id, address, size, accessKey);
  }

  @Override
  public String toString() {
    return "MemoryDesc[engine=" + engineKey + ", id=" + id + ", " + location + (location == MemoryLocationType.GPU ? ":" + deviceId : "")
        + ", address=0x" + Long.toHexString(address) + ", size=" + size + ", backends=" + backendData.keySet() + "]";
  }
}
