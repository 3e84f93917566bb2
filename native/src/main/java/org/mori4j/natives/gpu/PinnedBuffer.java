package org.mori4j.natives.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Page-locked host memory from {@link GpuRuntime#allocPinned}, which the GPU's copy engines reach directly,
 * so asynchronous copies to and from it overlap with the CPU. The memory is a {@link MemorySegment} scoped
 * to this owner's own shared {@link Arena}: closing the owner closes the arena, which frees the memory, and
 * any later access through the segment fails cleanly instead of touching freed memory.
 */
public final class PinnedBuffer extends NativeResource {
  private final String runtime;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment segment;

  /** For runtimes: {@code free} releases the memory when the arena closes. */
  public PinnedBuffer(String runtime, MemorySegment raw, long size, Runnable free) {
    this.runtime = runtime;
    this.segment = raw.reinterpret(size, arena, s -> free.run());
  }

  public MemorySegment segment() {
    checkOpen();
    return segment;
  }

  public long address() {
    return segment().address();
  }

  public long size() {
    return segment.byteSize();
  }

  @Override
  protected void release() {
    arena.close();
  }

  @Override
  protected String describe() {
    return runtime + " pinned host buffer of " + segment.byteSize() + " bytes";
  }
}
