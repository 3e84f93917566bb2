package org.mori4j.natives.gpu;

import java.lang.foreign.MemorySegment;

/**
 * Host memory the caller owns, page-locked for the GPU by {@link GpuRuntime#registerHost} until
 * {@link #close()}. The caller must keep the segment alive while registered; closing unregisters it and
 * leaves the memory itself to its owner.
 */
public final class HostRegistration extends NativeResource {
  private final String runtime;
  private final MemorySegment segment;
  private final Runnable unregister;

  /** For runtimes: {@code unregister} undoes the registration (once, on close). */
  public HostRegistration(String runtime, MemorySegment segment, Runnable unregister) {
    this.runtime = runtime;
    this.segment = segment;
    this.unregister = unregister;
  }

  public MemorySegment segment() {
    return segment;
  }

  @Override
  protected void release() {
    unregister.run();
  }

  @Override
  protected String describe() {
    return runtime + " host registration of " + segment.byteSize() + " bytes at 0x" + Long.toHexString(segment.address());
  }
}
