package org.mori4j.transport.tcp;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * Who may touch a data connection's state now, kept apart from the connection's I/O: nobody ({@link #FREE}), its
 * loop thread ({@link #LOOP}, around each event it handles) or a caller that drives its own round trip
 * ({@link #CALLER}, see {@link CallerRoundTrip}). Both hold it for a bounded time (one event; one write, or one
 * drive spin), so a holder that must run waits for the other. A waiter that has spun briefly sets {@link #WANTED}
 * and parks; the holder's {@link #exit()} unparks it. It must not keep spinning (or re-selecting a ready key): on
 * two cores a holder preempted inside its hold then waits a whole scheduler slice (milliseconds) behind the very
 * thread that waits for it. {@link TcpConnection} extends it, so taking the hold costs no extra indirection.
 */
abstract class ConnectionHold {
  static final int FREE = 0, LOOP = 1, CALLER = 2;
  private static final int WANTED = 4;
  private static final long PARK_NANOS = 50_000L;
  private static final VarHandle OWNER;

  static {
    try {
      OWNER = MethodHandles.lookup().findVarHandle(ConnectionHold.class, "owner", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused")
  private volatile int owner;
  /** The thread parked in {@link #enterWaiting} (the latest one; another waiter wakes at its park's timeout). */
  private volatile Thread waiter;

  /** Takes the connection for {@code who} if nobody holds it. */
  final boolean enter(int who) {
    return OWNER.compareAndSet(this, FREE, who);
  }

  /** Takes it for {@code who}, waiting out the current holder's bounded hold: a short spin, then parked until its exit. */
  final void enterWaiting(int who) {
    for (int spins = 0; ; spins++) {
      int o = owner;
      if (o == FREE) {
        if (OWNER.compareAndSet(this, FREE, who)) return;
        continue;
      }
      if (spins < 64) {
        Thread.onSpinWait();
        continue;
      }
      waiter = Thread.currentThread();
      // the holder's exit sees WANTED and unparks us; an exit before this CAS makes it fail and we look again
      if ((o & WANTED) != 0 || OWNER.compareAndSet(this, o, o | WANTED)) LockSupport.parkNanos(this, PARK_NANOS);
    }
  }

  final void exit() {
    int prev = (int) OWNER.getAndSet(this, FREE);
    if ((prev & WANTED) != 0) {
      Thread w = waiter;
      if (w != null) LockSupport.unpark(w);
    }
  }

  /** The current holder ({@link #FREE}, {@link #LOOP} or {@link #CALLER}). */
  final int owner() {
    return owner & ~WANTED;
  }
}
