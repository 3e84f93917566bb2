package org.mori4j.io.kv;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Opt-in timing of the "layers landed" message between a sending and a receiving KV endpoint
 * ({@code -Dmori4j.kv.hop-trace=true} or {@code MORI4J_KV_HOP_TRACE=1}; off by default, and then one constant
 * check per message): when the sender's last transfer of a layer range completed, when it told the receiver,
 * when the receiver first heard it (its landing board or the message, whichever came first), when its subscribers
 * had been told, and when the Pekko message itself arrived. Timestamps are
 * {@code System.nanoTime()}, so the stages are only comparable with both engines in one JVM (kv-bench's
 * {@code --xgmi-single-process}). At JVM exit the medians of each stage over every range seen go to stderr.
 */
final class KvHopTrace {
  static final boolean ON = Boolean.getBoolean("mori4j.kv.hop-trace") || "1".equals(System.getenv("MORI4J_KV_HOP_TRACE"));
  private static final int MAX = 1 << 16;
  /** Stage times per range key: completed, told, received, published, Pekko message arrived. */
  private static final ConcurrentHashMap<String, long[]> RANGES = new ConcurrentHashMap<>();
  private static final AtomicInteger COUNT = new AtomicInteger();

  static {
    if (ON) Runtime.getRuntime().addShutdownHook(new Thread(KvHopTrace::report, "kv-hop-trace"));
  }

  private KvHopTrace() {}

  static final int COMPLETED = 0, TOLD = 1, RECEIVED = 2, PUBLISHED = 3, MESSAGE = 4;

  static void mark(int stage, String requestId, int from, int to) {
    if (!ON) return;
    String key = requestId + "#" + from + "-" + to;
    long[] t = RANGES.get(key);
    if (t == null) {
      if (COUNT.incrementAndGet() > MAX) return;
      t = RANGES.computeIfAbsent(key, k -> new long[5]);
    }
    // the first of the two paths (landing board, Pekko message) sets a stage; the message's arrival has its own
    if (t[stage] == 0) t[stage] = System.nanoTime();
  }

  private static void report() {
    long[][] d = new long[4][RANGES.size()];
    int n = 0, m = 0;
    for (long[] t : RANGES.values()) {
      if (t[COMPLETED] == 0 || t[TOLD] == 0 || t[RECEIVED] == 0 || t[PUBLISHED] == 0) continue;
      d[0][n] = t[TOLD] - t[COMPLETED];
      d[1][n] = t[RECEIVED] - t[TOLD];
      d[2][n] = t[PUBLISHED] - t[RECEIVED];
      n++;
      if (t[MESSAGE] != 0) d[3][m++] = t[MESSAGE] - t[TOLD];
    }
    if (n == 0) {
      System.err.println("kv hop trace: no range seen at both ends in this JVM (" + RANGES.size() + " partial)");
      return;
    }
    String[] names = {"completed->told", "told->received", "received->published"};
    StringBuilder sb = new StringBuilder("kv hop trace (" + n + " layer ranges, p50 / p90 us):");
    for (int i = 0; i < 3; i++) {
      long[] s = Arrays.copyOf(d[i], n);
      Arrays.sort(s);
      sb.append(String.format(" %s %.1f / %.1f;", names[i], s[n / 2] / 1e3, s[n * 9 / 10] / 1e3));
    }
    if (m > 0) {
      long[] s = Arrays.copyOf(d[3], m);
      Arrays.sort(s);
      sb.append(String.format(" told->Pekko message %.1f / %.1f (%d ranges)", s[m / 2] / 1e3, s[m * 9 / 10] / 1e3, m));
    }
    System.err.println(sb);
  }
}
