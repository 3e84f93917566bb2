package org.mori4j.transport.tcp;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the caller-driven path ({@link CallerRoundTrip}) of every TCP backend in this JVM, and an optional
 * event trace for diagnosing its latency. The counters say which way each small request went (sent from the caller,
 * completed by its caller's read, handed back after the drive spin, handed off by a poll or a future, taken back by
 * the loop's timer), so that tests can prove the fast path was taken and a bench can report how often it paid off.
 *
 * <p>The trace is off unless the system property {@code mori4j.tcp.trace} names a file prefix: then every step of
 * a caller-driven round trip and every event handled by an I/O loop is stamped ({@code System.nanoTime()}, which
 * on Linux is the machine-wide monotonic clock, so the traces of two processes line up) into a fixed ring, written
 * to {@code PREFIX.PID.trace} when the JVM exits. A constant that is false costs nothing on the hot path.
 */
public final class CallerDriveStats {
  private CallerDriveStats() {}

  static final LongAdder SENT = new LongAdder();
  static final LongAdder DRIVEN = new LongAdder();
  static final LongAdder SPIN_EXPIRED = new LongAdder();
  static final LongAdder HANDED_OFF = new LongAdder();
  static final LongAdder ABANDONED = new LongAdder();

  /** Requests written by the submitting thread (the caller-driven path was taken). */
  public static long sent() {
    return SENT.sum();
  }

  /** Caller-driven ops whose waiting caller read the response itself and completed them. */
  public static long driven() {
    return DRIVEN.sum();
  }

  /** Caller-driven ops whose response had not come when the caller's drive spin ended; the I/O loop finished them. */
  public static long spinExpired() {
    return SPIN_EXPIRED.sum();
  }

  /** Caller-driven ops handed to the I/O loop by a future, a listener, a poll of the status or a cancellation. */
  public static long handedOff() {
    return HANDED_OFF.sum();
  }

  /** Caller-driven ops nobody came for, taken back by the loop's timer. */
  public static long abandoned() {
    return ABANDONED.sum();
  }

  // ---- trace (diagnosis only) ----
  static final boolean TRACE = System.getProperty("mori4j.tcp.trace") != null;
  static final int SEND = 1, DRIVE_START = 2, DRIVE_DONE = 3, DRIVE_BACK = 4, HAND_OFF = 5, TIMER_BACK = 6,
      COMPLETE = 7, LOOP_SUBMIT = 8, HANDLE_INIT = 9, HANDLE_TARGET = 10, HANDLE_END = 11, SELECT_WAKE = 12,
      SELECT_SLEEP = 13, TAKE_BACK_WAKE = 14, DEFER = 15, HANDLE_SKIPPED = 16;
  private static final int CAP = 1 << 21;
  private static final long[] RING = TRACE ? new long[CAP * 3] : null;
  private static final AtomicLong NEXT = new AtomicLong();

  static {
    if (TRACE) {
      Runtime.getRuntime().addShutdownHook(new Thread(CallerDriveStats::dump, "tcp-trace-dump"));
    }
  }

  /** Stamps one event: {@code what}, the thread's id and {@code arg} (an op's uid or a connection's hash). */
  static void trace(int what, long arg) {
    long i = NEXT.getAndIncrement() % CAP;
    int at = (int) i * 3;
    RING[at] = System.nanoTime();
    RING[at + 1] = ((long) what << 48) | (Thread.currentThread().threadId() & 0xffff_ffffL);
    RING[at + 2] = arg;
  }

  private static void dump() {
    Path file = Path.of(System.getProperty("mori4j.tcp.trace") + "." + ProcessHandle.current().pid() + ".trace");
    long n = Math.min(NEXT.get(), CAP);
    try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file))) {
      for (int i = 0; i < n; i++) {
        long h = RING[i * 3 + 1];
        w.println(RING[i * 3] + " " + (h >>> 48) + " " + (h & 0xffff_ffffL) + " " + RING[i * 3 + 2]);
      }
    } catch (IOException e) {
      System.err.println("tcp trace: " + e);
    }
  }
}
