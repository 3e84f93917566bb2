package org.mori4j.shmem;

/**
 * A shmem operation failed: a collective call that the PEs did not make alike (different sizes to
 * {@code malloc}, different calls at the same step), a PE that died or disconnected while others waited for
 * it, a wait that ran past {@code mori4j.shmem.timeout}, or a GPU call that failed. The message names the PE
 * concerned and the values involved. After a failure of the group (a lost PE, a timeout) every further
 * collective call of this {@link Shmem} fails at once with the same reason.
 */
public class ShmemException extends RuntimeException {
  public ShmemException(String message) {
    super(message);
  }

  public ShmemException(String message, Throwable cause) {
    super(message, cause);
  }
}
