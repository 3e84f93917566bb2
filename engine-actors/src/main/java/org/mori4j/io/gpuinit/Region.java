package org.mori4j.io.gpuinit;

import java.lang.foreign.MemorySegment;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;

/**
 * A region as a context's key tables hold it: for its own regions the keys, access bits, the engine descriptor and
 * (host memory) a segment over it; for a peer's region, what the peer's rkey lookup answered. {@code owned}: this
 * context made the engine registration and deregisters it.
 */
record Region(long address, long size, int lkey, int rkey, int access, MemoryDesc desc, MemoryLocationType location, int deviceId,
              MemorySegment host, boolean owned) {

  /** Whether {@code [addr, addr + len)} lies inside this region (len 0 included, overflow refused). */
  boolean covers(long addr, long len) {
    if (len < 0 || addr < address) return false;
    long off = addr - address;
    return off <= size && len <= size - off;
  }

  boolean allows(int bits) {
    return (access & bits) == bits;
  }

  boolean gpu() {
    return location == MemoryLocationType.GPU;
  }

  /** Offset of {@code addr} in the engine registration behind this region. */
  long descOffset(long addr) {
    return addr - desc.address();
  }
}
