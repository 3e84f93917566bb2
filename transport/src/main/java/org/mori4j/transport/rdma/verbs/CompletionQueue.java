package org.mori4j.transport.rdma.verbs;

/**
 * A completion queue ({@code struct ibv_cq}). Poll from one thread. When more completions arrive than it
 * holds, the queue overruns as on a NIC: it goes to error, every queue pair that completes on it moves to
 * ERR, and {@link #poll} throws from then on.
 */
public interface CompletionQueue extends AutoCloseable {
  /** Entries the queue holds (at least what was asked). */
  int capacity();

  /** Moves up to {@code into.capacity()} completions into {@code into}; returns how many (0: none). */
  int poll(Completions into);

  /** Arms the queue: its next completion raises one event on its channel. */
  void requestNotify(boolean solicitedOnly);

  @Override
  void close();
}
