package org.mori4j.transport.xgmi;

import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.transport.CallerDrive;
import org.mori4j.transport.TransferOp;

/**
 * The awaiting caller's side of a single-block XGMI op that its own thread issued ({@link XgmiSettings#callerPollNanos}):
 * instead of waiting for the worker's poll to see the copy's event complete and report it, the thread that awaits the op
 * queries that event itself ({@code cuEventQuery}, without the worker's turn: the slot's event outlives the op) and, once
 * it has completed, takes the worker's turn only to give the slot back and then completes the op on its own thread. The
 * worker keeps polling the same event meanwhile, so whichever sees it first completes the op, and an op whose status is
 * never awaited still completes as before; this class only takes the worker's report and wake-up off a waiting caller's
 * path. One {@link Slot} per event slot, made once when a caller first issues on it (under the turn), so that handing an
 * op its drive allocates nothing.
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

  /** The drive of {@code pool}'s {@code slot} (of {@code device}); the caller holds the worker's turn. */
  Slot drive(int device, DevicePool pool, int slot) {
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
      if (limit <= 0) return;
      long end = System.nanoTime() + limit;
      GpuEvent e = pool.event(slot);
      while (!op.outcomeDecided()) {
        boolean complete;
        try {
          complete = e.isComplete();
        } catch (RuntimeException x) {
          return;
        }
        // a completed event may already belong to the slot's next op (the worker took ours first): the turn tells
        if (complete && worker.completeFromCaller(op, pool, slot)) return;
        if (System.nanoTime() - end >= 0) return;
        Thread.onSpinWait();
      }
    }

    /** Nothing to hand back: the worker polls the op's event whether or not its caller does. */
    @Override
    public void handOff(TransferOp op) {}
  }
}
