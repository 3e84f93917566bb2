package org.mori4j.transport.rdma.verbs;

/**
 * A completion channel ({@code struct ibv_comp_channel}): a completion queue armed with
 * {@link CompletionQueue#requestNotify} raises one event here on its next completion. The EVENT poll mode sleeps
 * in {@link #await} instead of spinning.
 */
public interface CompletionChannel extends AutoCloseable {
  /**
   * Waits at most {@code maxNanos} for an event, returning early on {@link #wakeup()}. Returns the number of
   * events taken and acknowledged (0 on timeout or wake-up); the queues that raised them must be armed again.
   */
  int await(long maxNanos);

  /** Makes a concurrent or the next {@link #await} return at once. Any thread. */
  void wakeup();

  @Override
  void close();
}
