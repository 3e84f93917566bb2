package org.mori4j.transport.tcp;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the caller-driven path ({@link CallerRoundTrip}) and of the targets' serve spin of every TCP backend in
 * this JVM, and an optional
 * event trace for diagnosing its latency. The counters say which way each small request went (sent from the caller,
 * completed by its caller's read, handed back after the drive spin, handed off by a poll or a future, taken back by
 * the loop's timer), so that tests can prove the fast path was taken and a bench can report how often it paid off.
 * {@link #awaitIdle} lets a test wait until the connections to a peer are idle as a caller-driven send needs them,
 * instead of assuming they are once the previous transfer completed (the I/O loop may still hold one for a moment).
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
  static final LongAdder SERVED_POLLING = new LongAdder();

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

  /**
   * Events a target's I/O loop handled while it polled after serving ({@code serve-spin}), i.e. requests (or parts of
   * them) answered without the wake-up of a sleeping {@code select}.
   */
  public static long servedPolling() {
    return SERVED_POLLING.sum();
  }

  /** Every caller-drive connection of this JVM (weakly: a closed backend's go with it). */
  private static final Set<CallerRoundTrip> TRIPS = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

  static void track(CallerRoundTrip t) {
    TRIPS.add(t);
  }

  /**
   * Test probe: waits until every open caller-drive connection of this JVM to engine {@code peerKey} is idle, as a
   * caller-driven send requires (nobody holds it; nothing queued, in flight, half-written or read ahead), for at most
   * {@code timeout}. Returns whether they all were (false also when there is no such connection). It only looks:
   * the caller-driven path is the same whether or not anybody calls it. The I/O loop's periodic timer still holds
   * every connection for a moment every 50 ms, so a submit right after may, rarely, still find one held.
   */
  public static boolean awaitIdle(String peerKey, Duration timeout) {
    long end = System.nanoTime() + timeout.toNanos();
    while (true) {
      List<CallerRoundTrip> mine = new ArrayList<>();
      synchronized (TRIPS) {
        for (CallerRoundTrip t : TRIPS) if (t.peerKey().equals(peerKey)) mine.add(t);
      }
      boolean idle = !mine.isEmpty();
      for (CallerRoundTrip t : mine) idle &= t.idleOrGone();
      if (idle) return true;
      if (System.nanoTime() - end >= 0) return false;
      LockSupport.parkNanos(20_000L);
    }
  }

  // ---- trace (diagnosis only) ----
  static final boolean TRACE = System.getProperty("mori4j.tcp.trace") != null;
  static final int SEND = 1, DRIVE_START = 2, DRIVE_DONE = 3, DRIVE_BACK = 4, HAND_OFF = 5, TIMER_BACK = 6,
      COMPLETE = 7, LOOP_SUBMIT = 8, HANDLE_INIT = 9, HANDLE_TARGET = 10, HANDLE_END = 11, SELECT_WAKE = 12,
      SELECT_SLEEP = 13, TAKE_BACK_WAKE = 14, DEFER = 15, HANDLE_SKIPPED = 16, SUBMIT = 17, WRITE_BEGIN = 18,
      DRIVE_EXIT = 19, ACK_WRITE = 20;
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
