package org.mori4j.io.kv;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.internal.DescriptorCodec;

/**
 * A KV cache as its owner advertises it: its name, the owning engine, the {@link KvCacheLayout}, one registered
 * {@link MemoryDesc} per buffer (buffer {@code i} of the layout is {@code buffers().get(i)}), and the address of
 * the owner's KV endpoint, which takes "layers landed" news for the cache. Pass it to peers with {@link #toBytes()}
 * or through the cluster's directory.
 */
public record KvCacheDesc(String name, String engineKey, KvCacheLayout layout, List<MemoryDesc> buffers, String endpoint) {
  private static final int MAGIC = 0x4d344b43; // "M4KC"
  // 2: the layout carries tensorBuffers; 3: the endpoint's notices carry migration ids (KvMessageSerializer's KL2/KS2/KA2),
  // which a build reading 2 cannot read: the version keeps such builds from pairing up
  private static final int VERSION = 3;

  public KvCacheDesc {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(engineKey, "engineKey");
    Objects.requireNonNull(layout, "layout");
    Objects.requireNonNull(endpoint, "endpoint");
    buffers = List.copyOf(buffers);
    if (buffers.size() != layout.buffers())
      throw new IllegalArgumentException("KvCacheDesc '" + name + "': " + buffers.size() + " buffers for a layout of " + layout.buffers());
    for (int i = 0; i < buffers.size(); i++) {
      MemoryDesc m = buffers.get(i);
      if (!m.engineKey().equals(engineKey))
        throw new IllegalArgumentException("KvCacheDesc '" + name + "': buffer " + i + " belongs to engine '" + m.engineKey() + "', not '" + engineKey + "'");
      if (m.size() < layout.bufferBytes())
        throw new IllegalArgumentException("KvCacheDesc '" + name + "': buffer " + i + " has " + m.size() + " bytes, the layout needs " + layout.bufferBytes());
    }
  }

  public byte[] toBytes() {
    DescriptorCodec.Writer w = new DescriptorCodec.Writer().header(MAGIC, VERSION).string(name).string(engineKey).string(endpoint);
    layout.write(w);
    w.i32(buffers.size());
    for (MemoryDesc m : buffers) w.blob(m.toBytes());
    return w.toBytes();
  }

  /** Parses {@link #toBytes()}'s output; anything else throws {@link IllegalArgumentException}. */
  public static KvCacheDesc fromBytes(byte[] bytes) {
    return DescriptorCodec.decode("KvCacheDesc", () -> {
      int older = bytes != null && bytes.length >= 6 && ByteBuffer.wrap(bytes).getInt() == MAGIC ? ByteBuffer.wrap(bytes).getShort(4) & 0xffff : VERSION;
      if (older < VERSION)
        throw new IllegalArgumentException("KvCacheDesc: version " + older + " comes from an older mori4j, whose KV notices carry no migration id;"
            + " this build reads version " + VERSION + ": run the same mori4j build on both engines");
      ByteBuffer in = DescriptorCodec.open(bytes, MAGIC, VERSION, "KvCacheDesc");
      String name = DescriptorCodec.readString(in, "KvCacheDesc.name");
      String key = DescriptorCodec.readString(in, "KvCacheDesc.engineKey");
      String endpoint = DescriptorCodec.readString(in, "KvCacheDesc.endpoint");
      KvCacheLayout layout = KvCacheLayout.read(in);
      DescriptorCodec.need(in, 4, "KvCacheDesc.buffers");
      int n = in.getInt();
      if (n != layout.buffers()) throw new IllegalArgumentException("KvCacheDesc.buffers: " + n + " for a layout of " + layout.buffers());
      List<MemoryDesc> bufs = new ArrayList<>(n);
      for (int i = 0; i < n; i++) bufs.add(MemoryDesc.fromBytes(DescriptorCodec.readBlob(in, "KvCacheDesc.buffer")));
      DescriptorCodec.expectEnd(in, "KvCacheDesc");
      return new KvCacheDesc(name, key, layout, bufs, endpoint);
    });
  }
}
