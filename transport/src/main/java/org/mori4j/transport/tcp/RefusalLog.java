package org.mori4j.transport.tcp;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * The target's log of data connections it closed for cause (a malformed frame, a refused hello, no hello in
 * time, a peer that stopped mid-request or stopped reading a response): one WARN per reason per interval, the
 * next one saying how many were left out since. A hostile or broken peer that opens thousands of bad
 * connections must not be able to flood the log, yet an operator should see each kind of trouble at once.
 * Thread-safe: the backend's I/O loops share one.
 */
final class RefusalLog {
  /** Time between two WARN lines for the same reason. */
  static final long DEFAULT_INTERVAL_NANOS = 10_000_000_000L;

  private final Logger log;
  private final long intervalNanos;
  private final LongSupplier clock;
  private final ConcurrentHashMap<String, Window> windows = new ConcurrentHashMap<>();

  private static final class Window {
    long nextNanos;
    boolean started;
    long suppressed;
  }

  RefusalLog(Logger log) {
    this(log, DEFAULT_INTERVAL_NANOS, System::nanoTime);
  }

  RefusalLog(Logger log, long intervalNanos, LongSupplier clock) {
    if (intervalNanos <= 0) throw new IllegalArgumentException("intervalNanos must be positive: " + intervalNanos);
    this.log = log;
    this.intervalNanos = intervalNanos;
    this.clock = clock;
  }

  /**
   * Records that the connection from {@code from} was closed for {@code reason} (a short fixed phrase: the
   * rate limit's key), with {@code detail} about this instance; logs it unless this reason was logged less than
   * an interval ago. Returns whether a line was written.
   */
  boolean closed(String reason, String from, String detail) {
    Window w = windows.computeIfAbsent(reason, r -> new Window());
    long now = clock.getAsLong();
    long suppressed;
    synchronized (w) {
      if (w.started && now - w.nextNanos < 0) {
        w.suppressed++;
        return false;
      }
      w.started = true;
      w.nextNanos = now + intervalNanos;
      suppressed = w.suppressed;
      w.suppressed = 0;
    }
    if (suppressed > 0) {
      log.warn("TCP target closed a data connection from {}: {} ({}); {} more closed for this reason since the last report",
          from, reason, detail, suppressed);
    } else {
      log.warn("TCP target closed a data connection from {}: {} ({})", from, reason, detail);
    }
    return true;
  }
}
