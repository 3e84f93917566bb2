package org.mori4j.bench.jmh;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Allocation per operation split by thread, to complement JMH's {@code -prof gc}: {@code gc.alloc.rate.norm}
 * divides everything the JVM allocated by the operation count, including Pekko's timers and remoting
 * heartbeats, which allocate per unit of time, not per transfer. At tens of microseconds per transfer that
 * background is a few hundred bytes per operation and hides whether the fast path itself allocates. Per-thread
 * counters ({@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes}) separate the caller, the I/O
 * loop and the rest. {@link #currentThreadBytes()} serves tools that count one thread's allocation around a call
 * (kv-bench's per-{@code migrate()} figure).
 */
public final class ThreadAllocation {
  /** HotSpot's counters with allocation counting on, or null where the JVM has none. */
  private static final com.sun.management.ThreadMXBean COUNTERS = counters();

  private static com.sun.management.ThreadMXBean counters() {
    if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t && t.isThreadAllocatedMemorySupported()) {
      t.setThreadAllocatedMemoryEnabled(true);
      return t;
    }
    return null;
  }

  /** Bytes the calling thread allocated since it started, or -1 where the JVM cannot say. */
  public static long currentThreadBytes() {
    return COUNTERS != null ? COUNTERS.getCurrentThreadAllocatedBytes() : -1;
  }

  private final com.sun.management.ThreadMXBean mx =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
  private Map<Long, Long> before = Map.of();

  /** Remembers every live thread's allocation counter. */
  void start() {
    before = snapshot();
  }

  /**
   * Bytes per operation of each thread that allocated at least {@code minBytesPerOp} since {@link #start()},
   * largest first, formatted as "name=NN.N B/op".
   */
  List<String> perOp(long ops, double minBytesPerOp) {
    Map<Long, Long> after = snapshot();
    long[] ids = after.keySet().stream().mapToLong(Long::longValue).toArray();
    ThreadInfo[] infos = mx.getThreadInfo(ids);
    Map<Long, String> names = new HashMap<>();
    for (ThreadInfo i : infos) if (i != null) names.put(i.getThreadId(), i.getThreadName());
    List<Map.Entry<String, Double>> rows = new ArrayList<>();
    for (Map.Entry<Long, Long> e : after.entrySet()) {
      long delta = e.getValue() - before.getOrDefault(e.getKey(), 0L);
      double perOp = ops == 0 ? 0 : (double) delta / ops;
      if (perOp >= minBytesPerOp) rows.add(Map.entry(names.getOrDefault(e.getKey(), "#" + e.getKey()), perOp));
    }
    rows.sort((a, b) -> Double.compare(b.getValue(), a.getValue()));
    List<String> out = new ArrayList<>();
    for (var r : rows) out.add(String.format(Locale.ROOT, "%s=%.1f B/op", r.getKey(), r.getValue()));
    return out;
  }

  private Map<Long, Long> snapshot() {
    long[] ids = mx.getAllThreadIds();
    long[] bytes = mx.getThreadAllocatedBytes(ids);
    Map<Long, Long> m = new HashMap<>();
    for (int i = 0; i < ids.length; i++) if (bytes[i] >= 0) m.put(ids[i], bytes[i]);
    return m;
  }
}
