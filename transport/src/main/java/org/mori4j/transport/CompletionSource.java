package org.mori4j.transport;

/**
 * One source of completions that a poller drains in a duty cycle (Agrona's Agent idea): a TCP I/O loop, an
 * RDMA completion queue. The engine runs each source on a poller actor bound to a dedicated thread; the
 * source itself knows nothing of actors.
 */
public interface CompletionSource {
  /** Does whatever work is ready without blocking; returns how much was done (0 when idle). */
  int doWork();

  /** Blocks until work may be ready, at most {@code maxNanos}; returns early on {@link #wakeup()}. */
  void awaitWork(long maxNanos);

  /** Makes a concurrent or the next {@link #awaitWork} return at once. */
  void wakeup();

  /** True once the source is closed and has failed or finished everything it held. */
  boolean isClosed();

  String name();
}
