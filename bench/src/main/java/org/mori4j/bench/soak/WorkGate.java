package org.mori4j.bench.soak;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Lets the driver hold a node's workers between transfers (for a quiet resource sample) and stop them. A
 * worker calls {@link #enter} before a transfer and {@link #exit} after it; {@link #awaitIdle} waits, for a
 * bounded time, until none is inside one.
 */
final class WorkGate {
  private volatile boolean paused;
  private volatile boolean stopped;
  private final AtomicInteger busy = new AtomicInteger();

  void pause(boolean on) {
    paused = on;
  }

  void stop() {
    stopped = true;
  }

  boolean stopped() {
    return stopped;
  }

  /** Waits while paused; false once stopped. Sleeps in short steps so stop is seen within 50 ms. */
  boolean enter() throws InterruptedException {
    while (paused && !stopped) Thread.sleep(50);
    if (stopped) return false;
    busy.incrementAndGet();
    return true;
  }

  void exit() {
    busy.decrementAndGet();
  }

  /** True when no worker is inside a transfer within {@code millis}. */
  boolean awaitIdle(long millis) throws InterruptedException {
    long end = System.nanoTime() + millis * 1_000_000;
    while (busy.get() > 0) {
      if (System.nanoTime() > end) return false;
      Thread.sleep(20);
    }
    return true;
  }
}
