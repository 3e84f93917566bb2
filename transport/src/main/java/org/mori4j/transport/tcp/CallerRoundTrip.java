package org.mori4j.transport.tcp;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import org.mori4j.transport.CallerDrive;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The caller-driven round trip of one initiator connection ({@link TcpLatency#callerDrive()}): a small request to an
 * idle connection leaves from the submitting thread (one {@code write}, no hand-off to the I/O thread and no wake-up
 * of its selector), and the caller that then waits reads the response from the socket itself, for at most the drive
 * spin, instead of parking until the I/O thread completes it. A ping-pong then wakes no thread on this side.
 *
 * <p>Why it keeps every promise of the loop path: the connection's state is only touched by its holder
 * ({@link TcpConnection#enter}), the loop around each event and the caller around its write or its drive, both short.
 * A request leaves this way only when the connection has nothing queued, in flight, half-written or read ahead, so it
 * is in order with every op submitted before it; later ops queue behind it on the loop as usual and their responses
 * come after its own. While a caller's response is outstanding the connection's read interest is off, so the loop is
 * not woken by it; whoever will not read it (a future, a listener, a poll of the status, a cancellation, or nobody
 * within {@link #ABANDONED_NANOS}) hands it back: read interest on, the selector woken. The response is read by the
 * same code as on the loop ({@link InitiatorConnection#onReadable()}), so a cancelled READ's data still goes to
 * scratch memory, errors and peer loss are reported the same way, and the op completes exactly once. TLS
 * connections, GPU memory, stripes and payloads that do not ride inline always take the loop.
 */
final class CallerRoundTrip implements CallerDrive {
  /** An op sent from a caller that nobody has come to read for this long is taken back by the loop's timer. */
  static final long ABANDONED_NANOS = 5_000_000L;

  private final InitiatorConnection c;
  private final long spinNanos;
  /**
   * Callers submit bursts to this connection (an op came while a caller-sent one was still out): every request takes
   * the loop, which sends a burst in few packed writes. Why: the burst's first op, sent ahead alone from the caller's
   * thread, made the target, this engine's loop and the waiting caller each wake once more per burst, and on the 2-core
   * VM the 128 x 4 KiB row's p99 went from 0.5-0.8 ms (caller-drive off) to 0.9-1.7 ms (interleaved runs,
   * bench/results/20261125T0045Z-50789c7-tcp-latency-2). Cleared after {@link #LONE_TO_RESUME} ops in a row that were
   * alone on the connection from submit to response (a ping-pong again). Set by submitters; the rest under the hold.
   */
  private volatile boolean bursting;
  static final int LONE_TO_RESUME = 2;
  /** The op the loop took while nothing else was in flight, as long as it stays alone; holder only. */
  private TransferOp lone;
  private int lonesInARow;

  CallerRoundTrip(InitiatorConnection c, long spinNanos) {
    this.c = c;
    this.spinNanos = spinNanos;
    CallerDriveStats.track(this);
  }

  /** The engine this connection reaches. */
  String peerKey() {
    return c.peer.key;
  }

  /**
   * Probe for tests ({@link CallerDriveStats#awaitIdle}): whether a caller-driven send would find the connection idle at
   * this moment (nobody holds it; nothing queued, in flight, half-written or read ahead), or the connection is gone.
   * Looked at under the hold, as {@link #trySend} looks, so the answer is exact for that moment; it changes nothing.
   */
  boolean idleOrGone() {
    if (!c.enter(TcpConnection.CALLER)) return false;
    try {
      return c.dead || c.queued.get() == 0 && c.head == null && c.sending == null && c.reader.stage == 0 && !c.req.ready
          && !c.readBlocked && !c.buffered() && c.reader.resp.position() == 0 && c.callerPending == null;
    } finally {
      c.exit();
    }
  }

  /** Holder (the loop), taking {@code op} for the loop's path: {@code alone} when nothing else is in flight or queued. */
  void taken(TransferOp op, boolean alone) {
    lone = alone ? op : null;
  }

  /** Holder, {@code op}'s response read: {@code alone} when nothing is behind it; counts ping-pong ops while bursting. */
  void completed(TransferOp op, boolean alone) {
    if (!bursting) return;
    if (op == lone && alone) {
      if (++lonesInARow >= LONE_TO_RESUME) {
        bursting = false;
        lonesInARow = 0;
      }
    } else {
      lonesInARow = 0;
    }
    lone = null;
  }

  /** Whether {@code op} may leave from the caller's thread: a frame-only request of host memory, not a stripe. */
  private boolean eligible(TransferOp op) {
    if (op instanceof StripePart || op.local().gpu() || op.blockCount() > c.maxEntries()) return false;
    return op.kind() == TransferOp.READ ? op.totalBytes() <= WireFormat.INLINE_MAX : RequestFrames.frameOnly(op);
  }

  /**
   * Submitting thread: sends {@code op}'s request from here when the connection is idle; true when the op is taken
   * (sent, or its outcome was already decided), false when it must take the loop.
   */
  boolean trySend(TransferOp op) {
    if (c.tls != null || c.dead || c.queued.get() != 0 || !eligible(op) || c.loop.onLoopThread()) return false;
    // a racy look first (checked again under the hold): a connection with ops in flight is not taken even for a moment,
    // since a loop that finds it held parks until it is let go (a burst of submits would park it once per op)
    if (bursting) return false;
    if (c.head != null || c.sending != null) {
      // a second op while the caller's own first one is still out: this caller submits bursts here, where a first op
      // sent ahead alone only wakes the target, the loop and the caller once more each (see #bursting)
      if (c.callerPending != null) bursting = true;
      return false;
    }
    if (!c.enter(TcpConnection.CALLER)) return false;
    boolean wake = false;
    try {
      if (c.dead || c.queued.get() != 0 || c.head != null || c.sending != null || c.reader.stage != 0 || c.req.ready
          || c.readBlocked || c.buffered() || c.reader.resp.position() != 0) return false;
      // cancelled before it was sent: its outcome is final already, and nothing goes on the wire
      if (!op.beginLanding()) return true;
      try {
        op.nextInFlight = null;
        op.laneSeq = c.nextSeq++;
        c.prepare(op); // copies an inline payload from the caller's memory into the frame
      } finally {
        op.endLanding();
      }
      c.head = c.tail = op;
      c.uncounted = op;
      boolean drives = spinNanos > 0;
      if (drives) {
        // before the write: a response that comes back at once must not find read interest on, or the loop would
        // wake for a connection this thread holds (and, until it lets go, find the same ready key again and again)
        c.callerPending = op;
        op.callerDrive = this;
        c.interest(0);
      }
      if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.WRITE_BEGIN, op.uid());
      try {
        while (c.req.frame.hasRemaining() && c.write(c.req.frame) > 0) {
          // a small request on an idle connection fits the socket buffer; a full one leaves the rest to the loop
        }
      } catch (IOException e) {
        c.req.ready = false;
        c.peer.lost(TransportError.PEER_LOST, "write to " + c.peer.key + " failed: " + e);
        return true;
      }
      if (c.req.frame.hasRemaining()) {
        if (drives) {
          c.callerPending = null;
          op.callerDrive = null;
        }
        c.sending = c.req.last = op;
        c.req.packEnd[0] = c.req.frame.limit();
        c.interest(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        wake = true;
        return true;
      }
      c.req.ready = false;
      c.callerSentNanos = System.nanoTime();
      CallerDriveStats.SENT.increment();
      if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.SEND, op.uid());
      return true;
    } finally {
      c.exit();
      if (wake) c.loop.wakeup();
    }
  }

  @Override
  public void drive(TransferOp op, long maxNanos) {
    if (c.callerPending != op) return;
    if (c.queued.get() != 0 || op.nextInFlight != null) {
      // a burst: ops behind it on this connection, which the loop sends and whose flush turns read interest on, so
      // the loop reads this response too; taking the connection only to hand the op back would make the loop wait
      // for this thread and wake its selector once more
      CallerDriveStats.HANDED_OFF.increment();
      if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.HAND_OFF, op.uid());
      return;
    }
    boolean entered = acquire();
    int after = NOTHING;
    TransferOp done = null;
    TransportError doneError = null;
    String doneMessage = null;
    try {
      if (c.callerPending != op) return;
      if (!entered || c.loop.onLoopThread() || c.head != op || op.nextInFlight != null || c.sending != null) {
        // the loop thread itself waits (a listener's await): it must not spin on one connection; and while other
        // ops of the connection are queued or being written, a caller's hold would stall the loop's writes
        after = takeBack();
        CallerDriveStats.HANDED_OFF.increment();
        return;
      }
      long end = System.nanoTime() + Math.min(maxNanos, spinNanos);
      if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.DRIVE_START, op.uid());
      c.callerReading = true;
      boolean queuedBehind = false;
      try {
        while (true) {
          c.onReadable(); // reads what is there; completes the op once its whole response is in
          if (c.callerPending != op || c.dead || !c.peer.alive() || System.nanoTime() - end >= 0) break;
          // an op submitted behind this one waits for the loop, which waits for this hold: let go
          if (queuedBehind = c.queued.get() != 0) break;
          // yield, not a pure spin: on a machine with fewer free cores than spinning threads the target (or this
          // engine's loop) may be runnable on this very core; a pure spin keeps it off for a scheduler slice
          Thread.yield();
        }
      } finally {
        c.callerReading = false;
        done = c.callerDone;
        if (done != null) {
          doneError = c.callerDoneError;
          doneMessage = c.callerDoneMessage;
          c.clearCallerOutcome();
        }
      }
      if (c.callerPending == op && queuedBehind) {
        after = takeBack();
        CallerDriveStats.HANDED_OFF.increment();
        if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.HAND_OFF, op.uid());
      } else if (c.callerPending == op) {
        after = takeBack();
        CallerDriveStats.SPIN_EXPIRED.increment();
        if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.DRIVE_BACK, op.uid());
      } else {
        CallerDriveStats.DRIVEN.increment();
        if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.DRIVE_DONE, op.uid());
        // an idle connection keeps read interest off, so that the loop's selector sleeps through the next caller-driven
        // round trip too (ops the loop sends turn it on); what was read ahead is the loop's to parse
        if (c.head != null || c.buffered()) c.interest(SelectionKey.OP_READ);
        after = c.buffered() ? READ_TASK : NOTHING;
      }
    } finally {
      if (entered) c.exit();
      afterExit(after);
      // published only now: a listener it runs may submit or wait on this connection, which this thread no longer holds
      if (done != null) InitiatorConnection.publish(done, doneError, doneMessage);
      if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.DRIVE_EXIT, op.uid());
    }
  }

  @Override
  public void handOff(TransferOp op) {
    if (c.callerPending != op) return;
    boolean entered = acquire();
    int after = NOTHING;
    try {
      if (c.callerPending == op) {
        after = takeBack();
        CallerDriveStats.HANDED_OFF.increment();
        if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.HAND_OFF, op.uid());
      }
    } finally {
      if (entered) c.exit();
      afterExit(after);
    }
  }

  private static final int NOTHING = 0, WAKE = 1, READ_TASK = 2;

  /**
   * Holder of the connection: the pending op's response becomes the loop's to read. Returns what must happen once
   * the connection is let go: wake the selector (so that it registers the read interest again), or, when bytes were
   * read ahead where the selector cannot see them, a task that reads them.
   */
  int takeBack() {
    TransferOp op = c.callerPending;
    if (op == null) return NOTHING;
    c.callerPending = null;
    op.callerDrive = null;
    c.interest(SelectionKey.OP_READ);
    return c.buffered() ? READ_TASK : WAKE;
  }

  private void afterExit(int after) {
    if (after == WAKE) {
      c.loop.wakeup();
    } else if (after == READ_TASK) {
      try {
        c.loop.execute(() -> {
          c.enterWaiting(TcpConnection.LOOP);
          try {
            if (!c.dead && c.buffered()) c.onReadable();
          } finally {
            c.exit();
          }
        });
      } catch (IllegalStateException closed) {
        // the loop closed and failed the connection, this op included
      }
    }
  }

  /** Takes the connection for this thread; false when the loop thread already holds it (this is that thread). */
  private boolean acquire() {
    if (c.owner() == TcpConnection.LOOP && c.loop.onLoopThread()) return false;
    c.enterWaiting(TcpConnection.CALLER);
    return true;
  }
}
