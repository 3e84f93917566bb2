package org.mori4j.io;

import java.time.Duration;
import java.util.Objects;

/**
 * Per-call options of a transfer, a batch or a session call. Today one: a deadline, the longest the transfer may
 * take from the call; past it the transfer ends with {@code ERR_TIMEOUT} and is cancelled as
 * {@link TransferStatus#cancel()} does. {@link #engineDefault()} leaves the deadline to the engine's
 * {@code mori4j.engine.transfer-deadline} (off unless configured); {@link #noDeadline()} turns it off for the call.
 *
 * @param deadline the deadline, or null for the engine's default
 * @param overrideDefault true when {@code deadline} (null: none) replaces the engine's default
 */
public record TransferOptions(Duration deadline, boolean overrideDefault) {
  private static final TransferOptions DEFAULT = new TransferOptions(null, false);
  private static final TransferOptions NONE = new TransferOptions(null, true);

  public TransferOptions {
    if (deadline != null && (deadline.isNegative() || deadline.isZero()))
      throw new IllegalArgumentException("deadline must be positive: " + deadline);
    if (deadline != null && !overrideDefault) throw new IllegalArgumentException("a given deadline overrides the engine's default");
  }

  /** The engine's default deadline ({@code mori4j.engine.transfer-deadline}). */
  public static TransferOptions engineDefault() {
    return DEFAULT;
  }

  /** No deadline, whatever the engine's default. */
  public static TransferOptions noDeadline() {
    return NONE;
  }

  /** A deadline of {@code d} (positive) from the call. */
  public static TransferOptions deadline(Duration d) {
    Objects.requireNonNull(d, "deadline");
    return new TransferOptions(d, true);
  }
}
