package org.mori4j.transport.rdma.verbs;

import org.mori4j.natives.NativeException;

/**
 * A failed {@code ibv_post_send}/{@code ibv_post_recv}: the errno the verb returned and how many requests of the
 * chain went onto the queue before the one it names as {@code bad_wr} (those will complete; the rest will not).
 */
public final class PostException extends NativeException {
  private final int posted;

  public PostException(String library, String function, int errno, String errnoName, int posted, String message) {
    super(library, function, errno, errnoName, message);
    this.posted = posted;
  }

  /** Requests of the chain that were posted before the failing one. */
  public int posted() {
    return posted;
  }
}
