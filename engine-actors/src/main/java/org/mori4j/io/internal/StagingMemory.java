package org.mori4j.io.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.HostRegistration;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * The host memory of one GPU staging slot ({@link GpuStaging}), and its only owner: either the runtime's page-locked
 * allocation ({@link GpuRuntime#allocPinned}) or ordinary memory from this object's own arena, page-locked with
 * {@link GpuRuntime#registerHost} ({@code mori4j.tcp.gpu-staging-memory = registered}). Both are reached by the copy
 * engines directly, so asynchronous copies overlap; they may differ in how fast the CPU's socket calls read and write
 * them, which is why both exist (bench {@code StagingSocketProbe}). {@link #close()} unregisters before freeing; the
 * caller closes only after the copies on the memory finished.
 */
final class StagingMemory implements AutoCloseable {
  private final PinnedBuffer pinned;
  private final Arena arena;
  private final HostRegistration registration;
  private final MemorySegment segment;

  private StagingMemory(PinnedBuffer pinned, Arena arena, HostRegistration registration, MemorySegment segment) {
    this.pinned = pinned;
    this.arena = arena;
    this.registration = registration;
    this.segment = segment;
  }

  /** {@code bytes} of staging memory; blocking (page-locking waits for the device), so never on the data path. */
  static StagingMemory allocate(GpuRuntime runtime, long bytes, boolean registered) {
    if (!registered) {
      PinnedBuffer p = runtime.allocPinned(bytes);
      return new StagingMemory(p, null, null, p.segment());
    }
    Arena a = Arena.ofShared();
    try {
      MemorySegment s = a.allocate(bytes, 4096);
      return new StagingMemory(null, a, runtime.registerHost(s), s);
    } catch (RuntimeException | Error e) {
      a.close();
      throw e;
    }
  }

  MemorySegment segment() {
    return segment;
  }

  @Override
  public void close() {
    if (pinned != null) {
      pinned.close();
      return;
    }
    try {
      registration.close();
    } finally {
      arena.close();
    }
  }
}
