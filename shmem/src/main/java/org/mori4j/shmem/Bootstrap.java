package org.mori4j.shmem;

/**
 * The host-side exchange of a PE group: every collective host call of {@link Shmem} (init, malloc, free,
 * register, barrier, finalize) is one {@link #allGather}, in the same order on every PE. Two implementations:
 * {@link TcpBootstrap} (the unique-id path: every PE connected to rank 0) and {@link ClusterBootstrap}
 * (Pekko Cluster members). Either way a PE that dies or disconnects fails every waiting and later call of the
 * others with a {@link ShmemException} naming that PE, and no call waits longer than the configured timeout.
 *
 * <p>Threads: one collective call at a time per PE ({@link Shmem} serialises them); {@link #close()} may be
 * called from any thread and makes a waiting call fail.
 */
interface Bootstrap extends AutoCloseable {
  int rank();

  int size();

  /**
   * Each PE's {@code mine}, indexed by rank, once every PE has contributed to this step. {@code last} marks
   * the final step (finalize): once it completes, peers closing their end is expected rather than a failure.
   *
   * @throws ShmemException when a PE is lost, the group failed earlier, or the timeout passed (then the
   *     group is failed too: the PEs no longer agree on which step they are at)
   */
  byte[][] allGather(byte[] mine, boolean last);

  /** Why the group failed, or null while it is healthy. */
  String failure();

  /** Leaves the group (not collective): waiting calls fail, the others see this PE go. */
  @Override
  void close();
}
