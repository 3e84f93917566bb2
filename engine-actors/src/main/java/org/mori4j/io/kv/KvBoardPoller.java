package org.mori4j.io.kv;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiving engine's one reader of its {@link KvLandingBoard}: a named daemon thread, owned by the engine's KV
 * endpoint and stopped when it closes. While writes over the board are expected ({@code expecting}) it spins for
 * {@code spin} after the last entry or wake-up (a sender posts an "issued" entry when its copies start, so the
 * "landed" entry that follows finds it spinning), then yields for as long again, then parks {@code park} at a time;
 * with nothing expected it parks until {@link #wake()} (an announcement of board writes arrived), so an idle engine
 * burns no CPU.
 */
final class KvBoardPoller implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(KvBoardPoller.class);

  private final KvLandingBoard board;
  private final KvLandingBoard.Reader reader;
  private final BooleanSupplier expecting;
  private final long spinNanos;
  private final long parkNanos;
  private final Thread thread;
  private volatile boolean running = true;
  private volatile long wokenAt;

  KvBoardPoller(KvLandingBoard board, KvLandingBoard.Reader reader, BooleanSupplier expecting, Duration spin, Duration park, String name) {
    this.board = board;
    this.reader = reader;
    this.expecting = expecting;
    this.spinNanos = spin.toNanos();
    this.parkNanos = Math.max(1_000, park.toNanos());
    this.thread = Thread.ofPlatform().daemon().name(name).unstarted(this::run);
  }

  KvBoardPoller start() {
    thread.start();
    return this;
  }

  /** Board writes are now expected: read at once and spin for a while. */
  void wake() {
    wokenAt = System.nanoTime();
    LockSupport.unpark(thread);
  }

  private void run() {
    long active = System.nanoTime();
    while (running) {
      int n;
      try {
        n = board.drain(reader);
      } catch (RuntimeException e) {
        // a reader that throws must not end the board for every later stream (the sender's message still reports)
        log.warn("landing board {}: an entry's handling failed", board.path, e);
        n = 1;
      }
      long now = System.nanoTime();
      if (n > 0) {
        active = now;
        continue;
      }
      active = Math.max(active, wokenAt);
      if (!expecting.getAsBoolean()) {
        LockSupport.park(this);
        active = System.nanoTime();
      } else if (now - active < spinNanos) {
        Thread.onSpinWait();
      } else if (now - active < 2 * spinNanos) {
        Thread.yield();
      } else {
        LockSupport.parkNanos(this, parkNanos);
      }
    }
  }

  /** Stops the thread and waits (at most a second) for it to end; the board is its owner's to close. */
  @Override
  public void close() {
    running = false;
    LockSupport.unpark(thread);
    if (Thread.currentThread() == thread) return;
    try {
      thread.join(1_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
