package org.mori4j.transport;

/**
 * One source of completions that a poller drains in a duty cycle (Agrona's Agent idea): a TCP I/O loop, an
 * RDMA completion queue. The engine runs each source on a poller actor bound to a dedicated thread; the
 * source itself knows nothing of actors.
 */
public interface CompletionSource {
  /** Does whatever work is ready without blocking; returns how much was done (0 when idle). */
  int doWork();

  /**
   * Blocks until work may be ready, at most {@code maxNanos}; returns early on {@link #wakeup()}. May do the
   * work that woke it; returns how much it did.
   */
  int awaitWork(long maxNanos);

  /** Makes a concurrent or the next {@link #awaitWork} return at once. */
  void wakeup();

  /**
   * Requests of this process that are waiting for their completion in this source. Read by the thread
   * that runs {@link #doWork()} only. A poller spins (instead of sleeping) only while this is non-zero or
   * was so a moment ago: the target side of a connection never spins, which matters on small machines
   * where a spinning thread takes the core the peer needs.
   */
  default int inFlight() {
    return 0;
  }

  /** True once the source is closed and has failed or finished everything it held. */
  boolean isClosed();

  String name();
}
