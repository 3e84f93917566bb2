package org.mori4j.io.gpuinit;

import java.nio.ByteBuffer;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.internal.DescriptorCodec;

/**
 * A memory region registered with an {@link RdmaDeviceContext} (MORI's {@code RdmaMemoryRegion}): its address and
 * size, the lkey that the owner's work requests name it by, the rkey that peers' work requests name it by, the
 * {@code IBV_ACCESS_*} bits it was registered with, and the engine registration behind it. Keys are non-zero,
 * distinct and never reused within their context. Send it to peers out of band with {@link #toBytes()}: a peer
 * needs only {@code address} and {@code rkey} to post work requests against it.
 */
public record RdmaMemoryRegion(long address, long size, int lkey, int rkey, int access, MemoryDesc desc) {
  private static final int MAGIC = 0x4d344a52; // "M4JR"
  private static final int VERSION = 1;

  public RdmaMemoryRegion {
    if (size <= 0) throw new IllegalArgumentException("size must be positive: " + size);
    if (lkey == 0 || rkey == 0) throw new IllegalArgumentException("keys must be non-zero: lkey " + lkey + ", rkey " + rkey);
    if (desc == null) throw new IllegalArgumentException("desc must not be null");
  }

  public byte[] toBytes() {
    byte[] d = desc.toBytes();
    return new DescriptorCodec.Writer().header(MAGIC, VERSION).i64(address).i64(size).i32(lkey).i32(rkey).i32(access).blob(d).toBytes();
  }

  /** Parses {@link #toBytes()}'s output; anything else throws {@link IllegalArgumentException}. */
  public static RdmaMemoryRegion fromBytes(byte[] bytes) {
    return DescriptorCodec.decode("RdmaMemoryRegion", () -> {
      ByteBuffer in = DescriptorCodec.open(bytes, MAGIC, VERSION, VERSION, "RdmaMemoryRegion");
      DescriptorCodec.need(in, 28, "region");
      long address = in.getLong(), size = in.getLong();
      int lkey = in.getInt(), rkey = in.getInt(), access = in.getInt();
      MemoryDesc desc = MemoryDesc.fromBytes(DescriptorCodec.readBlob(in, "desc"));
      DescriptorCodec.expectEnd(in, "RdmaMemoryRegion");
      return new RdmaMemoryRegion(address, size, lkey, rkey, access, desc);
    });
  }
}
