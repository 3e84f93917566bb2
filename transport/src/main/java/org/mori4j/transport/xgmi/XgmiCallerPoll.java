package org.mori4j.transport.xgmi;

import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.transport.CallerDrive;
import org.mori4j.transport.TransferOp;

/**
 * The awaiting caller's side of a single-block XGMI op that its own thread issued ({@link XgmiSettings#callerPollNanos}):
 * instead of waiting for the worker's poll to see the copy's event complete and report it, the thread that awaits the op
 * queries that event itself ({@code cuEventQuery}, without the worker's turn: the slot's event outlives the op) and, once
 * it has completed, takes the worker's turn only to give the slot back and then completes the op on its own thread.
 * Meanwhile the worker's polls leave that slot out ({@link #polling}): on 1x H100 two threads querying the same event
 * made the 4 KiB session p50 27-70 us instead of 13-15 (bench/results/*-xgmi-session-1xh100). They leave it out for at
 * most twice the caller's limit after the issue, and not at all once the caller stopped (its time ran out, a query
 * failed, or the status was handed to a future, listener or poll: {@link Slot#handOff}), so an op nobody awaits still
 * completes, at most that much later. One {@link Slot} per event slot, made once when a caller first issues on it
 * (under the turn), so that handing an op its drive allocates nothing.
 */
final class XgmiCallerPoll {
  private final XgmiWorker worker;
  private final long maxNanos;
  /** Per device, per event slot (under the worker's turn). */
  private Slot[][] slots = new Slot[0][];

  XgmiCallerPoll(XgmiWorker worker, long maxNanos) {
    this.worker = worker;
    this.maxNanos = maxNanos;
  }

  /** A caller issued {@code op} on {@code pool}'s {@code slot} (of {@code device}) and holds the worker's turn: its drive. */
  Slot issued(int device, DevicePool pool, int slot, TransferOp op) {
    Slot d = slot(device, pool, slot);
    d.op = op;
    d.since = System.nanoTime() | 1; // never 0, which means "not polled by a caller"
    return d;
  }

  /**
   * Worker, under its turn: whether the caller of {@code op}, on {@code device}'s {@code slot}, is polling its event now
   * (a later op on the slot that no caller issued is never left out).
   */
  boolean polling(int device, int slot, long now, TransferOp op) {
    if (device >= slots.length) return false;
    Slot[] s = slots[device];
    if (s == null || slot >= s.length || s[slot] == null || s[slot].op != op) return false;
    long since = s[slot].since;
    return since != 0 && now - since < 2 * maxNanos;
  }

  private Slot slot(int device, DevicePool pool, int slot) {
    if (device >= slots.length) slots = java.util.Arrays.copyOf(slots, device + 1);
    Slot[] s = slots[device];
    if (s == null || slot >= s.length) slots[device] = s = s == null ? new Slot[slot + 1] : java.util.Arrays.copyOf(s, Math.max(slot + 1, 2 * s.length));
    Slot d = s[slot];
    if (d == null || d.pool != pool) s[slot] = d = new Slot(pool, slot);
    return d;
  }

  /** One event slot's {@link CallerDrive}: the op on it is the one whose status calls {@link #drive}. */
  final class Slot implements CallerDrive {
    final DevicePool pool;
    final int slot;
    /** When a caller issued the slot's op and may poll its event (0: it does not, or stopped). */
    volatile long since;
    /** The op a caller issued last on the slot (under the turn). */
    TransferOp op;

    Slot(DevicePool pool, int slot) {
      this.pool = pool;
      this.slot = slot;
    }

    /**
     * Queries the slot's event until {@code op} is complete (by this thread or the worker) or {@code min(maxNanos,
     * the backend's caller-poll)} has passed; then the engine's own wait (spin, park) takes over, and the worker, which
     * polls as well, completes it. A query that fails is left to the worker, which reports the failure with its message.
     */
    @Override
    public void drive(TransferOp op, long limitNanos) {
      long limit = Math.min(limitNanos, maxNanos);
      if (limit > 0) {
        long end = System.nanoTime() + limit;
        GpuEvent e = pool.event(slot);
        while (!op.outcomeDecided()) {
          boolean complete;
          try {
            complete = e.isComplete();
          } catch (RuntimeException x) {
            break; // the worker reports the failure with its message
          }
          // a completed event may already belong to the slot's next op (the worker took ours first): the turn tells
          if (complete && worker.completeFromCaller(op, pool, slot)) return;
          if (System.nanoTime() - end >= 0) break;
          Thread.onSpinWait();
        }
      }
      if (!op.outcomeDecided()) handOff(op);
    }

    /**
     * The caller stops (or never starts) polling: the worker's polls take the slot again at once. After the op ended
     * the slot may hold the next op already; then that op is polled by both, which is slower, never wrong.
     */
    @Override
    public void handOff(TransferOp op) {
      if (since == 0) return;
      since = 0;
      worker.pollAgain();
    }
  }
}
