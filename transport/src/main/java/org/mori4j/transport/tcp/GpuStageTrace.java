package org.mori4j.transport.tcp;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An optional per-transfer timeline of the TCP backend's GPU staging ({@link GpuStager}), for finding where a GPU
 * transfer over TCP loses time against the same transfer between host buffers. Off unless the system property
 * {@code mori4j.tcp.gpu-stage-trace} or the environment variable {@code MORI4J_TCP_GPU_STAGE_TRACE} names a file
 * prefix (the variable reaches a child JVM that the bench starts, a property would not). Then every staged transfer
 * leaves one record of {@code System.nanoTime()} stamps (the machine-wide monotonic clock on Linux, so two
 * processes' records line up): start, the first and last byte through the socket, the end; and how often the loop
 * found a device copy unfinished, how long the copies took from issue to the first poll that saw them done, and how
 * long the loop spent inside the copy calls. At JVM exit the records go to {@code PREFIX.PID.gpu-stage.txt}: a
 * summary per direction and size (medians), then the raw records. A constant that is false costs nothing on the
 * data path.
 */
final class GpuStageTrace {
  private GpuStageTrace() {}

  static final String PREFIX = prefix();
  static final boolean ON = PREFIX != null;

  static final int DIR = 0, TOTAL = 1, PIECES = 2, T0 = 3, T_FIRST = 4, T_LAST = 5, T_END = 6, WAITS = 7, COPY_SUM = 8,
      COPIES = 9, COPY_MAX = 10, API = 11, FIRST_COPY = 12, OPS = 13, SHORT = 14, SPIN = 15, SPUN = 16, T_OFFER = 17;
  static final int FIELDS = 18;
  private static final String[] NAMES = {"dir", "total", "pieces", "t0", "first", "last", "end", "waits", "copySum", "copies",
      "copyMax", "api", "firstCopy", "ops", "short", "spin", "spun", "offer"};
  private static final int CAP = 1 << 17;
  private static final long[] RING = ON ? new long[CAP * FIELDS] : null;
  private static final AtomicLong NEXT = new AtomicLong();

  static {
    if (ON) Runtime.getRuntime().addShutdownHook(new Thread(GpuStageTrace::dump, "gpu-stage-trace-dump"));
  }

  private static String prefix() {
    String p = System.getProperty("mori4j.tcp.gpu-stage-trace");
    if (p == null || p.isBlank()) p = System.getenv("MORI4J_TCP_GPU_STAGE_TRACE");
    return p == null || p.isBlank() ? null : p;
  }

  /** Keeps one transfer's record ({@link #FIELDS} longs; copied). */
  static void record(long[] r) {
    long i = NEXT.getAndIncrement() % CAP;
    System.arraycopy(r, 0, RING, (int) i * FIELDS, FIELDS);
  }

  private static void dump() {
    Path file = Path.of(PREFIX + "." + ProcessHandle.current().pid() + ".gpu-stage.txt");
    int n = (int) Math.min(NEXT.get(), CAP);
    TreeMap<String, List<long[]>> groups = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      long[] r = Arrays.copyOfRange(RING, i * FIELDS, (i + 1) * FIELDS);
      groups.computeIfAbsent((r[DIR] == 1 ? "out " : "in  ") + String.format(Locale.ROOT, "%12d", r[TOTAL]), k -> new ArrayList<>()).add(r);
    }
    try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file))) {
      w.println("# GPU staging timeline, pid " + ProcessHandle.current().pid() + ", " + n + " transfers; medians in us per direction and size");
      w.println("# start->first byte | of it, start->first bytes offered to the socket | first->last byte (socket) | last byte->end (tail) | start->end | device-copy issue->seen done (avg, max)"
          + " | first piece's copy | loop time in copy calls | GPU waits | pieces | socket calls | of them short (socket"
          + " full/empty) | time spinning on copies | spins that saw the copy done");
      w.println("dir        bytes  count  toFirst toOffer  socket    tail   total  copyAvg copyMax firstCopy  api  waits pieces   ops  short   spin spun");
      for (var e : groups.entrySet()) {
        List<long[]> g = e.getValue();
        w.printf(Locale.ROOT, "%s %6d %8.1f %7.1f %7.1f %7.1f %7.1f %8.1f %7.1f %8.1f %5.1f %6d %6d %5d %6d %6.1f %4d%n", e.getKey(), g.size(),
            med(g, r -> r[T_FIRST] - r[T0]), med(g, r -> r[T_OFFER] - r[T0]), med(g, r -> r[T_LAST] - r[T_FIRST]), med(g, r -> r[T_END] - r[T_LAST]),
            med(g, r -> r[T_END] - r[T0]), med(g, r -> r[COPIES] == 0 ? 0 : r[COPY_SUM] / r[COPIES]), med(g, r -> r[COPY_MAX]),
            med(g, r -> r[FIRST_COPY]), med(g, r -> r[API]), count(g, WAITS), count(g, PIECES), count(g, OPS), count(g, SHORT),
            med(g, r -> r[SPIN]), count(g, SPUN));
      }
      w.println("# raw records: " + String.join(" ", NAMES));
      for (int i = 0; i < n; i++) {
        StringBuilder b = new StringBuilder();
        for (int f = 0; f < FIELDS; f++) b.append(f == 0 ? "" : " ").append(RING[i * FIELDS + f]);
        w.println(b);
      }
    } catch (IOException e) {
      System.err.println("gpu stage trace: " + e);
    }
  }

  private static long count(List<long[]> g, int field) {
    long[] v = g.stream().mapToLong(r -> r[field]).sorted().toArray();
    return v.length == 0 ? 0 : v[v.length / 2];
  }

  /** Median of {@code f} over {@code g}, in microseconds (f in nanoseconds). */
  private static double med(List<long[]> g, java.util.function.ToLongFunction<long[]> f) {
    long[] v = g.stream().mapToLong(f).sorted().toArray();
    return v.length == 0 ? 0 : v[v.length / 2] / 1e3;
  }
}
