package org.mori4j.natives.gpu;

import java.lang.foreign.MemorySegment;

/**
 * Checks on the host side of a GPU copy, shared by the runtimes: the segment must be native memory (a heap
 * segment's address is an offset into a Java array the GC may move, which the GPU must never be given) and
 * at least as large as the copy, so no copy reads or writes past the memory the caller handed over.
 */
public final class HostMemory {
  private HostMemory() {}

  /** The segment's native address, after checking it is native and holds {@code size} bytes. */
  public static long requireNative(MemorySegment segment, long size) {
    if (!segment.isNative()) throw new IllegalArgumentException("host memory for a GPU copy must be native (off-heap), not " + segment);
    if (size < 0 || size > segment.byteSize()) {
      throw new IllegalArgumentException("copy of " + size + " bytes does not fit host memory of " + segment.byteSize() + " bytes");
    }
    return segment.address();
  }
}
