package org.mori4j.transport.tcp;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * An optional per-transfer count of the socket calls and loop wake-ups behind each TCP transfer of at least
 * {@link #MIN_BYTES}, host memory and GPU memory alike, so that the two paths can be set side by side in one run
 * (issue 15 target 6: why GPU memory over TCP is slower than CPU&lt;-&gt;CPU at 1 MiB). Off unless the system property
 * {@code mori4j.tcp.call-trace} or the environment variable {@code MORI4J_TCP_CALL_TRACE} names a file prefix (the
 * variable reaches the child JVM the bench starts). Then each data connection keeps a {@link Tally}: from the transfer's
 * start on that end (the initiator's request prepared, the target's request checked) to its end (the initiator's
 * response complete; the target's payload read or its READ response written) it counts write and read calls, the
 * ones that moved less than offered (short) and nothing (EAGAIN), the largest call, the selector's write and read
 * wake-ups for the connection, the GPU polls, and the blocking selects and yields of the loop thread; and it stamps
 * the first and last byte written and read. At JVM exit a summary per end, op, kind (cpu: this end's memory is host
 * memory, gpu: it is GPU memory) and size goes to {@code PREFIX.PID.tcp-calls.txt}, with the sizes of the calls, and
 * every transfer's own record to {@code PREFIX.PID.tcp-transfers.txt}: its stamps as raw {@link System#nanoTime} (one
 * clock for every JVM of a Linux host, so the initiator's and the target's records of one transfer line up) and the id
 * of the thread that began it, which tells the stripes of one large transfer apart (each lane has its loop thread).
 * A constant that is false costs the data path one null check per call.
 */
final class TcpCallTrace {
  private TcpCallTrace() {}

  static final String PREFIX = prefix();
  static final boolean ON = PREFIX != null;
  /** Smaller transfers (requests, set-up) are not counted. */
  static final long MIN_BYTES = 64 << 10;

  static final int SIDE = 0, KIND = 1, WRITE = 2, BYTES = 3, T0 = 4, FIRST_W = 5, LAST_W = 6, FIRST_R = 7, LAST_R = 8,
      T_END = 9, W_CALLS = 10, W_SHORT = 11, W_ZERO = 12, W_MAX = 13, R_CALLS = 14, R_SHORT = 15, R_ZERO = 16, R_MAX = 17,
      WAKE_W = 18, WAKE_R = 19, GPU_POLLS = 20, SLEEPS = 21, YIELDS = 22, OVERLAP = 23, THREAD = 24;
  static final int FIELDS = 25;
  private static final int CAP = 1 << 16;
  private static final long[] RING = ON ? new long[CAP * FIELDS] : null;
  private static final AtomicLong NEXT = new AtomicLong();
  /** Sizes of the counted calls, log2 buckets, per side x kind x (write, read). */
  private static final int BUCKETS = 24;
  private static final AtomicLongArray SIZES = ON ? new AtomicLongArray(2 * 2 * 2 * BUCKETS) : null;
  /** The tally of the transfer the current loop thread works on, for its sleeps and yields. */
  private static final ThreadLocal<Tally> CURRENT = new ThreadLocal<>();

  static {
    if (ON) Runtime.getRuntime().addShutdownHook(new Thread(TcpCallTrace::dump, "tcp-call-trace-dump"));
  }

  private static String prefix() {
    String p = System.getProperty("mori4j.tcp.call-trace");
    if (p == null || p.isBlank()) p = System.getenv("MORI4J_TCP_CALL_TRACE");
    return p == null || p.isBlank() ? null : p;
  }

  /** A connection's tally, or null when the trace is off. */
  static Tally tally() {
    return ON ? new Tally() : null;
  }

  /** Bytes left in the first {@code count} buffers (what a vectored call offers). */
  static long remaining(ByteBuffer[] iov, int count) {
    long n = 0;
    for (int i = 0; i < count; i++) n += iov[i].remaining();
    return n;
  }

  /** The loop thread is about to block in select. */
  static void loopSleep() {
    Tally t = CURRENT.get();
    if (t != null && t.active) t.r[SLEEPS]++;
  }

  /** The loop thread found nothing and yields its core. */
  static void loopYield() {
    Tally t = CURRENT.get();
    if (t != null && t.active) t.r[YIELDS]++;
  }

  /**
   * One end's counts of the transfer in progress on one connection. Loop thread only (the caller-driven path, which
   * may write from a caller's thread, carries only transfers below {@link #MIN_BYTES}).
   */
  static final class Tally {
    private final long[] r = new long[FIELDS];
    private boolean active;

    /** Package-private for tests; connections get theirs from {@link TcpCallTrace#tally()} (null while the trace is off). */
    Tally() {}

    /** A transfer of {@code bytes} starts on this end; {@code side} 0 initiator, 1 target. */
    void begin(int side, boolean gpu, boolean write, long bytes) {
      boolean overlapped = active;
      if (active) end();
      if (bytes < MIN_BYTES) return;
      Arrays.fill(r, 0);
      r[SIDE] = side;
      r[KIND] = gpu ? 1 : 0;
      r[WRITE] = write ? 1 : 0;
      r[BYTES] = bytes;
      r[OVERLAP] = overlapped ? 1 : 0;
      r[THREAD] = Thread.currentThread().threadId();
      r[T0] = System.nanoTime();
      active = true;
      CURRENT.set(this);
    }

    void write(long offered, long moved) {
      if (!active) return;
      call(W_CALLS, FIRST_W, LAST_W, W_MAX, offered, moved, 0);
    }

    void read(long offered, long moved) {
      if (!active) return;
      call(R_CALLS, FIRST_R, LAST_R, R_MAX, offered, moved, 1);
    }

    private void call(int calls, int first, int last, int max, long offered, long moved, int dir) {
      // calls + 1: short, calls + 2: nothing moved (the field order keeps them together for both directions)
      r[calls]++;
      if (moved <= 0) r[calls + 2]++;
      else if (moved < offered) r[calls + 1]++;
      if (moved > 0) {
        long now = System.nanoTime();
        if (r[first] == 0) r[first] = now;
        r[last] = now;
        r[max] = Math.max(r[max], moved);
        int b = Math.min(BUCKETS - 1, 63 - Long.numberOfLeadingZeros(moved));
        if (SIZES != null) SIZES.incrementAndGet(((((int) r[SIDE] * 2) + (int) r[KIND]) * 2 + dir) * BUCKETS + b);
      }
    }

    /** The selector found the connection ready ({@code ready}: its ready ops). */
    void wake(int ready) {
      if (!active) return;
      if ((ready & java.nio.channels.SelectionKey.OP_WRITE) != 0) r[WAKE_W]++;
      if ((ready & java.nio.channels.SelectionKey.OP_READ) != 0) r[WAKE_R]++;
    }

    void gpuPoll() {
      if (active) r[GPU_POLLS]++;
    }

    /** The transfer ended on this end: its record goes to the trace (when it is on). */
    void end() {
      if (!active) return;
      active = false;
      r[T_END] = System.nanoTime();
      if (ON) {
        long i = NEXT.getAndIncrement() % CAP;
        System.arraycopy(r, 0, RING, (int) i * FIELDS, FIELDS);
      }
      if (CURRENT.get() == this) CURRENT.remove();
    }

    /** A copy of the current (or last ended) transfer's record, {@link #FIELDS} longs (tests). */
    long[] record() {
      return r.clone();
    }
  }

  private static void dump() {
    Path file = Path.of(PREFIX + "." + ProcessHandle.current().pid() + ".tcp-calls.txt");
    int n = (int) Math.min(NEXT.get(), CAP);
    dumpTransfers(Path.of(PREFIX + "." + ProcessHandle.current().pid() + ".tcp-transfers.txt"), n);
    TreeMap<String, List<long[]>> groups = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      long[] r = Arrays.copyOfRange(RING, i * FIELDS, (i + 1) * FIELDS);
      String key = (r[SIDE] == 0 ? "init " : "targ ") + (r[WRITE] == 1 ? "write " : "read  ") + (r[KIND] == 1 ? "gpu " : "cpu ")
          + String.format(Locale.ROOT, "%8d", r[BYTES]);
      groups.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
    }
    try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file))) {
      w.println("# TCP socket calls per transfer, pid " + ProcessHandle.current().pid() + ", " + n + " transfers of >= " + MIN_BYTES
          + " bytes; times: medians in us from this end's start; counts: mean per transfer (median in brackets)");
      w.println("# kind: this end's memory. firstW/lastW: first/last write that moved bytes; firstR/lastR: reads; end: initiator"
          + " response complete, target payload read (write) or response written (read). short: moved less than offered;"
          + " zero: moved nothing (EAGAIN). wakeW/wakeR: selector found it writable/readable; sleeps: blocking selects of the"
          + " loop thread; yields: empty polls; over: began while the previous one was open");
      w.println("side op    kind   bytes  count   firstW   lastW  firstR   lastR     end | wCalls  wShort  wZero  wMaxKiB | rCalls  rShort  rZero  rMaxKiB | wakeW  wakeR gpuPoll sleeps yields over");
      for (var e : groups.entrySet()) {
        List<long[]> g = e.getValue();
        w.printf(Locale.ROOT, "%s %6d %8.1f %7.1f %7.1f %7.1f %7.1f | %s %s %s %8.0f | %s %s %s %8.0f | %s %s %s %s %s %d%n", e.getKey(), g.size(),
            med(g, FIRST_W), med(g, LAST_W), med(g, FIRST_R), med(g, LAST_R), med(g, T_END),
            cnt(g, W_CALLS), cnt(g, W_SHORT), cnt(g, W_ZERO), medRaw(g, W_MAX) / 1024.0,
            cnt(g, R_CALLS), cnt(g, R_SHORT), cnt(g, R_ZERO), medRaw(g, R_MAX) / 1024.0,
            cnt(g, WAKE_W), cnt(g, WAKE_R), cnt(g, GPU_POLLS), cnt(g, SLEEPS), cnt(g, YIELDS), g.stream().mapToLong(r -> r[OVERLAP]).sum());
      }
      w.println("# sizes of the calls that moved bytes (all counted transfers): bucket = [2^k, 2^(k+1)) bytes, calls");
      for (int side = 0; side < 2; side++)
        for (int kind = 0; kind < 2; kind++)
          for (int dir = 0; dir < 2; dir++) {
            StringBuilder b = new StringBuilder();
            int base = ((side * 2 + kind) * 2 + dir) * BUCKETS;
            for (int k = 0; k < BUCKETS; k++) {
              long c = SIZES.get(base + k);
              if (c > 0) b.append(' ').append(k >= 20 ? (1 << (k - 20)) + "M" : k >= 10 ? (1 << (k - 10)) + "K" : String.valueOf(1 << k)).append(':').append(c);
            }
            if (!b.isEmpty()) w.println((side == 0 ? "init " : "targ ") + (kind == 1 ? "gpu " : "cpu ") + (dir == 0 ? "writes" : "reads ") + b);
          }
    } catch (IOException e) {
      System.err.println("tcp call trace: " + e);
    }
  }

  /**
   * One line per transfer, in the order they ended, stamps as raw nanoTime (0: never set): whether two stripes of one
   * transfer started and ended together, and how the target's record of it lines up with the initiator's, is only seen
   * here (the summary's medians mix the stripes).
   */
  private static void dumpTransfers(Path file, int n) {
    try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file))) {
      w.println("# side (0 initiator, 1 target) write kind (1 gpu) bytes thread t0 firstW lastW firstR lastR end wCalls rCalls wakeW wakeR sleeps yields");
      int[] f = {SIDE, WRITE, KIND, BYTES, THREAD, T0, FIRST_W, LAST_W, FIRST_R, LAST_R, T_END, W_CALLS, R_CALLS, WAKE_W, WAKE_R, SLEEPS, YIELDS};
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < n; i++) {
        b.setLength(0);
        for (int k = 0; k < f.length; k++) b.append(k == 0 ? "" : " ").append(RING[i * FIELDS + f[k]]);
        w.println(b);
      }
    } catch (IOException e) {
      System.err.println("tcp call trace: " + e);
    }
  }

  /** Median of field {@code f} (a stamp) after {@link #T0}, in us; stamps never set are left out. */
  private static double med(List<long[]> g, int f) {
    long[] v = g.stream().filter(r -> r[f] != 0).mapToLong(r -> r[f] - r[T0]).sorted().toArray();
    return v.length == 0 ? Double.NaN : v[v.length / 2] / 1e3;
  }

  private static double medRaw(List<long[]> g, int f) {
    long[] v = g.stream().mapToLong(r -> r[f]).sorted().toArray();
    return v.length == 0 ? 0 : v[v.length / 2];
  }

  /** Mean and median of count field {@code f}. */
  private static String cnt(List<long[]> g, int f) {
    double mean = g.stream().mapToLong(r -> r[f]).average().orElse(0);
    return String.format(Locale.ROOT, "%5.2f[%d]", mean, (long) medRaw(g, f));
  }
}
