package org.mori4j.transport.rdma.ibv;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.mori4j.natives.verbs.LibcFds.POLLERR;
import static org.mori4j.natives.verbs.LibcFds.POLLHUP;
import static org.mori4j.natives.verbs.LibcFds.POLLIN;
import static org.mori4j.natives.verbs.LibcFds.POLLNVAL;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.natives.verbs.LibcFds;

/**
 * Waits on an event descriptor (a completion channel's, made non-blocking by its owner) with a timeout, and
 * can be woken from any thread: {@code ppoll} watches that descriptor and an {@code eventfd} this object
 * owns, which {@link #wakeup()} increments. When the descriptor is readable, events are taken one at a time
 * by the owner's {@code takeEvent} while it stays readable (checked with a zero-timeout {@code ppoll}, which
 * is cheaper than failing a read with {@code EAGAIN}). All scratch memory is allocated once, so a wait
 * allocates nothing. One thread waits; any thread wakes. Kept apart from the verbs channel so that its
 * timing and wake-up logic runs without an RDMA device (on eventfds) in tests.
 */
final class EventWait implements AutoCloseable {
  /** At most this many events per {@link #await}, so one busy channel cannot keep the caller from its CQs. */
  static final int MAX_EVENTS_PER_AWAIT = 64;
  /** How long {@link #close} waits for concurrent wake-ups to leave their downcall. */
  static final long CLOSE_PATIENCE_NANOS = 200_000_000L;

  private final int watchedFd;
  private final int eventFd;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment fds;
  private final MemorySegment timeout;
  private final MemorySegment errno;
  private final MemorySegment drained;
  private final MemorySegment one;
  private final AtomicBoolean closed = new AtomicBoolean();

  EventWait(int watchedFd) {
    this.watchedFd = watchedFd;
    this.eventFd = LibcFds.eventfd(0, LibcFds.EFD_NONBLOCK | LibcFds.EFD_CLOEXEC);
    try {
      fds = arena.allocate(LibcFds.POLLFD, 2);
      timeout = arena.allocate(LibcFds.TIMESPEC);
      errno = Errno.captureState(arena);
      drained = arena.allocate(JAVA_LONG);
      one = arena.allocate(JAVA_LONG);
      one.set(JAVA_LONG, 0, 1L);
    } catch (RuntimeException e) {
      arena.close();
      LibcFds.close(eventFd);
      throw e;
    }
  }

  /**
   * Scratch memory for the waiting thread's {@code takeEvent} calls, from this wait's arena: it lives exactly
   * as long as this object, and {@link #close} fails while a downcall of the waiter still uses it.
   */
  MemorySegment allocate(MemoryLayout layout) {
    return arena.allocate(layout);
  }

  /**
   * Waits up to {@code maxNanos} (0 or less: only looks) for the watched descriptor to become readable or a
   * {@link #wakeup()}; then takes events with {@code takeEvent} (true: took one; false: none was there) and
   * returns how many it took: 0 on timeout or wake-up.
   */
  int await(long maxNanos, BooleanSupplier takeEvent) {
    long start = System.nanoTime();
    long left = Math.max(0, maxNanos);
    while (true) {
      LibcFds.setPollFd(fds, 0, watchedFd, POLLIN);
      LibcFds.setPollFd(fds, 1, eventFd, POLLIN);
      LibcFds.setTimeout(timeout, left);
      int ready = LibcFds.ppoll(fds, 2, timeout, errno);
      if (ready < 0) { // a signal: wait for what is left
        left = Math.max(0, maxNanos) - (System.nanoTime() - start);
        if (left <= 0) return 0;
        continue;
      }
      if (ready == 0) return 0;
      int watched = LibcFds.returnedEvents(fds, 0);
      if ((LibcFds.returnedEvents(fds, 1) & POLLIN) != 0) drainWakeups();
      if ((watched & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
        throw new NativeException(LibcFds.LIBRARY, "ppoll", Errno.EIO, "EIO", "event descriptor " + watchedFd
            + " reports " + describe(watched) + " (closed or broken completion channel)");
      }
      return (watched & POLLIN) == 0 ? 0 : takeAll(takeEvent);
    }
  }

  private int takeAll(BooleanSupplier takeEvent) {
    int taken = 0;
    while (taken < MAX_EVENTS_PER_AWAIT && takeEvent.getAsBoolean()) {
      taken++;
      if (!watchedReadableNow()) break;
    }
    return taken;
  }

  private boolean watchedReadableNow() {
    LibcFds.setPollFd(fds, 0, watchedFd, POLLIN);
    LibcFds.setTimeout(timeout, 0);
    return LibcFds.ppoll(fds, 1, timeout, errno) > 0 && (LibcFds.returnedEvents(fds, 0) & POLLIN) != 0;
  }

  private void drainWakeups() {
    // One read resets the counter however many wake-ups came; -1 means another read got there first.
    LibcFds.read(eventFd, drained, errno);
  }

  /**
   * Makes the current or the next {@link #await} return at once. Any thread; allocates nothing. After
   * {@link #close} it does nothing: no wait is left to end, and a waker racing the close must not fail.
   */
  void wakeup() {
    if (closed.get()) return;
    try {
      // -1 can only mean the counter is saturated, i.e. a wake-up is already pending.
      LibcFds.writeUnchecked(eventFd, one);
    } catch (IllegalStateException e) {
      // The arena closed between the check and the call: the eventfd was never touched (it closes after).
      if (!closed.get()) throw e;
    }
  }

  /**
   * Frees the scratch memory, then the eventfd. The arena closes first, so a late wake-up fails on the closed
   * segment instead of writing to a descriptor number that may already be reused. Closing a shared arena
   * fails while a downcall uses its memory: a concurrent {@link #wakeup} is over in microseconds, so the close
   * retries for up to {@link #CLOSE_PATIENCE_NANOS}; a thread still inside {@link #await} after that makes it
   * fail (IllegalStateException) with nothing freed. Wake the waiter and let it return before closing.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) return;
    long start = System.nanoTime();
    while (true) {
      try {
        arena.close();
        break;
      } catch (IllegalStateException e) {
        if (System.nanoTime() - start > CLOSE_PATIENCE_NANOS) {
          closed.set(false);
          throw new IllegalStateException("the event wait on descriptor " + watchedFd
              + " is in use by another thread (wake it and let await return before closing)", e);
        }
        Thread.yield();
      }
    }
    LibcFds.close(eventFd);
  }

  private static String describe(int events) {
    StringBuilder s = new StringBuilder();
    if ((events & POLLERR) != 0) s.append("POLLERR ");
    if ((events & POLLHUP) != 0) s.append("POLLHUP ");
    if ((events & POLLNVAL) != 0) s.append("POLLNVAL ");
    return s.toString().trim();
  }
}
