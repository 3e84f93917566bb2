package org.mori4j.natives.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One native object (a verbs context, PD, MR, CQ, QP, a CM id, ...) owned by one Java object. The handle
 * segment and every scratch buffer the owner allocates live in the owner's shared arena, so after
 * {@link #close()} any use fails with {@link IllegalStateException} instead of touching freed memory.
 */
public abstract class NativeResource implements AutoCloseable {
  private final Arena arena = Arena.ofShared();
  private final String what;
  private final MemorySegment handle;

  /** Takes ownership of {@code raw}, a pointer to a native object of {@code size} bytes. */
  protected NativeResource(String what, MemorySegment raw, long size) {
    this.what = what;
    this.handle = raw.reinterpret(size, arena, null);
  }

  /** The native pointer (e.g. {@code struct ibv_qp *}); unusable once closed. */
  public final MemorySegment handle() {
    ensureOpen();
    return handle;
  }

  public final boolean isOpen() {
    return arena.scope().isAlive();
  }

  /** The owner's arena, for buffers that must live exactly as long as the native object. */
  protected final Arena arena() {
    ensureOpen();
    return arena;
  }

  protected final void ensureOpen() {
    if (!isOpen()) throw new IllegalStateException(what + " is closed");
  }

  /**
   * Releases the native object; a second call does nothing. The arena closes first: closing a shared
   * arena fails while another thread is inside a downcall that uses its segments, so a close that races
   * with a post or poll fails loudly instead of freeing the object under it.
   */
  @Override
  public final synchronized void close() {
    if (!isOpen()) return;
    long address = handle.address();
    long size = handle.byteSize();
    arena.close();
    release(MemorySegment.ofAddress(address).reinterpret(size));
  }

  /** Frees the native object ({@code ibv_dealloc_pd}, ...); throws a {@code NativeException} on failure. */
  protected abstract void release(MemorySegment handle);

  @Override
  public String toString() {
    return what + (isOpen() ? "@0x" + Long.toHexString(handle.address()) : " (closed)");
  }
}
