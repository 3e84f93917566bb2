package org.mori4j.natives.gpu;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Base of every owner of one GPU resource (a buffer, a stream, an event, a module, a mapping): it frees the
 * resource exactly once, however often and from however many threads {@link #close()} is called, and after
 * that refuses use with an {@link IllegalStateException} naming the resource rather than handing a freed
 * handle to the driver (which would fail far from the mistake, or corrupt another allocation).
 */
public abstract class NativeResource implements AutoCloseable {
  private final AtomicBoolean closed = new AtomicBoolean();

  /** Frees the native resource; called at most once. */
  protected abstract void release();

  /** What this is, for messages (e.g. {@code "cuda stream on device 1"}). */
  protected abstract String describe();

  public final boolean isClosed() {
    return closed.get();
  }

  /** Throws if {@link #close()} has been called. */
  protected final void checkOpen() {
    if (closed.get()) throw new IllegalStateException(describe() + " is closed");
  }

  @Override
  public final void close() {
    if (closed.compareAndSet(false, true)) release();
  }

  @Override
  public String toString() {
    return describe() + (isClosed() ? " (closed)" : "");
  }
}
