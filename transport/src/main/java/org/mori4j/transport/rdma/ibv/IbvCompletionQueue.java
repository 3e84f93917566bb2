package org.mori4j.transport.rdma.ibv;

import java.lang.foreign.Arena;
import java.util.concurrent.atomic.AtomicBoolean;
import org.mori4j.natives.verbs.VerbsCompletionQueue;
import org.mori4j.natives.verbs.WorkCompletions;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.Completions;

/**
 * A completion queue ({@code ibv_cq}, owned). {@link #poll} calls the provider's {@code poll_cq} into one
 * native {@code ibv_wc} array allocated with the queue and copies each completion into the caller's
 * {@link Completions}, repeating while the native array comes back full, so any {@code Completions} size
 * works and nothing is allocated per call. An overrun or a provider error makes {@code poll_cq} return a
 * negative value, which the binding throws as a {@code NativeException}.
 */
final class IbvCompletionQueue implements CompletionQueue {
  /** Native {@code ibv_wc} entries fetched per {@code poll_cq} call. */
  static final int NATIVE_BATCH = 64;

  private final VerbsCompletionQueue cq;
  private final Arena arena = Arena.ofShared();
  private final WorkCompletions scratch;
  private final AtomicBoolean closed = new AtomicBoolean();

  IbvCompletionQueue(VerbsCompletionQueue cq) {
    this.cq = cq;
    this.scratch = new WorkCompletions(arena, Math.max(1, Math.min(NATIVE_BATCH, cq.capacity())));
  }

  VerbsCompletionQueue verbs() {
    return cq;
  }

  @Override
  public int capacity() {
    return cq.capacity();
  }

  @Override
  public int poll(Completions into) {
    int total = 0;
    int room = into.capacity();
    while (total < room) {
      int want = Math.min(room - total, scratch.capacity());
      int n = cq.poll(scratch, want);
      copy(scratch, n, into, total);
      total += n;
      if (n < want) break; // the queue is empty
    }
    return total;
  }

  /**
   * Copies completions {@code 0..count-1} of {@code from} into {@code into} from index {@code at}. For a
   * failed completion the C API defines only {@code wr_id}, {@code status}, {@code qp_num} and
   * {@code vendor_err}: the byte length, immediate and flags are copied as 0 so nothing reads a stale value
   * as meaningful (the opcode is copied as the provider wrote it and is undefined). The immediate is copied
   * only when {@code IBV_WC_WITH_IMM} is set, in host order as the sender gave it.
   */
  static void copy(WorkCompletions from, int count, Completions into, int at) {
    for (int i = 0; i < count; i++) {
      if (from.succeeded(i)) {
        into.set(at + i, from.wrId(i), from.status(i), from.opcode(i), from.byteLength(i),
            from.hasImmediate(i) ? from.immediate(i) : 0, from.qpNumber(i), from.flags(i), from.vendorError(i));
      } else {
        into.set(at + i, from.wrId(i), from.status(i), from.opcode(i), 0, 0, from.qpNumber(i), 0,
            from.vendorError(i));
      }
    }
  }

  @Override
  public void requestNotify(boolean solicitedOnly) {
    cq.requestNotify(solicitedOnly);
  }

  /**
   * Frees the native array, then destroys the queue ({@code ibv_destroy_cq}, which fails with EBUSY while a
   * queue pair still completes on it). The array goes first: that fails while a poll is in flight on
   * another thread, before anything is destroyed.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) return;
    try {
      arena.close();
    } catch (IllegalStateException e) {
      closed.set(false);
      throw new IllegalStateException("completion queue " + cq + " is being polled by another thread", e);
    }
    cq.close();
  }

  @Override
  public String toString() {
    return "ibverbs " + cq;
  }
}
