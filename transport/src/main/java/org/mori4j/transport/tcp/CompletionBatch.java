package org.mori4j.transport.tcp;

import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The successes one read of an initiator connection found, published together when that read is parsed instead of
 * one by one as each response is parsed. Why: a caller that awaits a burst's statuses in order parks on the next one
 * that is not final; publishing each success at once unparks it for that op alone, and on a machine with few cores the
 * woken caller and the I/O thread then alternate op by op (a futex wake per op, 5-6 us each on the 2-core VM, where
 * the loop otherwise completes an op in 0.05 us). Published after the read, the caller wakes once and finds the rest
 * final. The delay this adds to any op is the parsing of the responses that arrived with it (no system call).
 * A failure flushes the successes before it, so outcomes are still published in response order. Loop or driving
 * caller thread, under the connection's hold; one per connection.
 */
final class CompletionBatch {
  private TransferOp[] ops = new TransferOp[16];
  /** Kept successes are ops[next..count). */
  private int next, count;
  private boolean publishing;

  /** Keeps {@code op}'s success for {@link #publish()}. */
  void succeeded(TransferOp op) {
    if (count == ops.length) ops = java.util.Arrays.copyOf(ops, count * 2);
    ops[count++] = op;
  }

  /** Publishes the kept successes, then {@code op}'s failure. */
  void failed(TransferOp op, TransportError error, String message) {
    publish();
    op.transferFailed(error, message);
  }

  /**
   * Publishes every kept success, oldest first. A listener it runs may complete more ops on this thread: they join
   * this pass. If a listener throws, the ops after it stay kept for the next call (the caller's finally).
   */
  void publish() {
    if (publishing) return;
    publishing = true;
    try {
      while (next < count) {
        TransferOp op = ops[next];
        ops[next++] = null;
        op.transferSucceeded();
      }
      next = count = 0;
    } finally {
      publishing = false;
    }
  }
}
