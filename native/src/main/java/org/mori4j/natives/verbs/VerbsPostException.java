package org.mori4j.natives.verbs;

import org.mori4j.natives.NativeException;

/**
 * A failed {@code ibv_post_send} or {@code ibv_post_recv}: the errno the provider returned, and where in the
 * posted chain its {@code bad_wr} points. The requests before that one went onto the queue and will
 * complete; it and those after it did not. {@link #failedIndex()} is -1 when {@code bad_wr} named no request
 * of the chain (no provider does that on purpose; then how many were posted is unknown).
 */
public final class VerbsPostException extends NativeException {
  private final int failedIndex;
  private final int count;

  public VerbsPostException(String function, int errno, String errnoName, int failedIndex, int count, String message) {
    super(IbVerbs.LIBRARY, function, errno, errnoName, message);
    this.failedIndex = failedIndex;
    this.count = count;
  }

  /** The index of {@code bad_wr} in the chain (0-based), or -1 when it was not one of the chain's requests. */
  public int failedIndex() {
    return failedIndex;
  }

  /** How many requests the chain had. */
  public int count() {
    return count;
  }
}
