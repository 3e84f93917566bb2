package org.mori4j.bench.soak;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The soak's result: what moved, what failed by code, the counts that must be zero, the faults applied and
 * those skipped (with the reason), and for each node JVM that lived from the first resource sample to the
 * last, its threads, file descriptors and native memory before and after against the stated bounds. The
 * soak passes when every must-be-zero count is zero, something moved, notifications were checked, and no
 * JVM grew past a bound; {@link #violations()} says what failed.
 */
final class SoakReport {
  /** Growth allowed between the samples: Pekko and the JIT may add a few threads and some code after the warm-up. */
  static final long THREADS_BOUND = 16;
  static final long FDS_BOUND = 32;
  static final long NATIVE_BOUND_KB = 64 * 1024;

  /** One JVM's samples. */
  record Resources(String node, ResourceSample before, ResourceSample after) {}

  final Map<String, Object> header = new LinkedHashMap<>();
  long done, bytes, unverified, stuck;
  final Map<String, Long> failedByCode = new TreeMap<>();
  long corrupted, hung;
  long notifOk, notifLost, notifDup, notifWrong, notifStale, notifUncheckable;
  final List<ChaosLoop.Fault> faults = new ArrayList<>();
  final Map<String, String> notRun = new LinkedHashMap<>();
  final List<Resources> resources = new ArrayList<>();
  final List<String> firstEvents = new ArrayList<>();
  final List<String> problems = new ArrayList<>();

  /** Adds one incarnation's last STATS and NOTIF lines. */
  void add(Map<String, String> stats, Map<String, String> notif) {
    done += num(stats, "done");
    bytes += num(stats, "bytes");
    unverified += num(stats, "unverified");
    stuck += num(stats, "stuck");
    corrupted += num(stats, "corrupted");
    hung += num(stats, "hung");
    String f = stats.getOrDefault("failed", "-");
    if (!f.equals("-"))
      for (String kv : f.split(",")) {
        int c = kv.lastIndexOf(':');
        failedByCode.merge(kv.substring(0, c), Long.parseLong(kv.substring(c + 1)), Long::sum);
      }
    notifOk += num(notif, "ok");
    notifLost += num(notif, "lost");
    notifDup += num(notif, "dup");
    notifWrong += num(notif, "wrong");
    notifStale += num(notif, "stale");
  }

  /** Raises the must-be-zero counts to the events the driver saw (a killed JVM's last STATS may predate its last event). */
  void events(Map<String, Long> bad) {
    corrupted = Math.max(corrupted, bad.getOrDefault("CORRUPT", 0L));
    hung = Math.max(hung, bad.getOrDefault("HUNG", 0L));
    notifLost = Math.max(notifLost, bad.getOrDefault("NOTIF-LOST", 0L));
    notifDup = Math.max(notifDup, bad.getOrDefault("NOTIF-DUP", 0L));
    notifWrong = Math.max(notifWrong, bad.getOrDefault("NOTIF-WRONG", 0L));
    stuck = Math.max(stuck, bad.getOrDefault("STUCK", 0L));
  }

  private static long num(Map<String, String> m, String k) {
    String v = m.get(k);
    return v == null ? 0 : Long.parseLong(v);
  }

  List<String> violations() {
    List<String> v = new ArrayList<>(problems);
    if (corrupted > 0) v.add("corrupted transfers: " + corrupted);
    if (hung > 0) v.add("hung transfers: " + hung);
    if (stuck > 0) v.add("workers stuck on a transfer: " + stuck);
    if (notifLost > 0) v.add("notifications lost: " + notifLost);
    if (notifDup > 0) v.add("notifications duplicated: " + notifDup);
    if (notifWrong > 0) v.add("notifications with a failed status for a successful write: " + notifWrong);
    if (done == 0) v.add("no transfer completed and checked out");
    if (notifOk == 0) v.add("no notification was checked");
    if (resources.isEmpty()) v.add("no JVM was sampled before and after");
    for (Resources r : resources) {
      if (r.after().threads() - r.before().threads() > THREADS_BOUND)
        v.add(r.node() + ": threads " + r.before().threads() + " -> " + r.after().threads() + " (bound +" + THREADS_BOUND + ")");
      if (r.after().fds() - r.before().fds() > FDS_BOUND)
        v.add(r.node() + ": file descriptors " + r.before().fds() + " -> " + r.after().fds() + " (bound +" + FDS_BOUND + ")");
      if (r.before().nativeKb() < 0 || r.after().nativeKb() < 0) v.add(r.node() + ": native memory tracking gave no figures");
      else if (r.after().nativeKb() - r.before().nativeKb() > NATIVE_BOUND_KB)
        v.add(r.node() + ": native memory " + r.before().nativeKb() + " -> " + r.after().nativeKb() + " KiB (bound +" + NATIVE_BOUND_KB + " KiB)");
    }
    return v;
  }

  String render() {
    StringBuilder sb = new StringBuilder();
    header.forEach((k, v) -> sb.append(String.format(Locale.ROOT, "%-28s %s%n", k, v)));
    sb.append(String.format(Locale.ROOT, "%nfaults applied (%d):%n", faults.size()));
    Map<String, Integer> perKind = new TreeMap<>();
    for (ChaosLoop.Fault f : faults) perKind.merge(f.kind(), 1, Integer::sum);
    sb.append("  per kind: ").append(perKind).append('\n');
    for (ChaosLoop.Fault f : faults)
      sb.append(String.format(Locale.ROOT, "  %7.1f s %-9s node %d  %s (%d ms)%n", f.atMs() / 1000.0, f.kind(), f.node(), f.detail(), f.tookMs()));
    if (!notRun.isEmpty()) {
      sb.append("faults not applied:\n");
      notRun.forEach((k, v) -> sb.append("  ").append(k).append(": ").append(v).append('\n'));
    }
    sb.append(String.format(Locale.ROOT, "%n%-44s %d (%.1f MiB)%n", "transfers done and checked", done, bytes / 1048576.0));
    sb.append(String.format(Locale.ROOT, "%-44s %s%n", "transfers failed, by code", failedByCode.isEmpty() ? "none" : failedByCode));
    sb.append(String.format(Locale.ROOT, "%-44s %d%n", "writes not verified (read-back failed)", unverified));
    sb.append(String.format(Locale.ROOT, "%-44s %d   (must be 0)%n", "corrupted", corrupted));
    sb.append(String.format(Locale.ROOT, "%-44s %d   (must be 0)%n", "hung (over deadline or peer-timeout + 5 s)", hung));
    sb.append(String.format(Locale.ROOT, "%-44s %d   (must be 0)%n", "workers stuck", stuck));
    sb.append(String.format(Locale.ROOT, "%-44s %d%n", "notifications checked (popped once)", notifOk));
    sb.append(String.format(Locale.ROOT, "%-44s %d   (must be 0)%n", "notifications lost", notifLost));
    sb.append(String.format(Locale.ROOT, "%-44s %d   (must be 0)%n", "notifications duplicated", notifDup));
    sb.append(String.format(Locale.ROOT, "%-44s %d   (must be 0)%n", "notifications with a wrong status", notifWrong));
    sb.append(String.format(Locale.ROOT, "%-44s %d%n", "notifications not checkable (target gone)", notifStale + notifUncheckable));
    sb.append(String.format(Locale.ROOT, "%nresources (bounds: threads +%d, fds +%d, native +%d MiB):%n", THREADS_BOUND, FDS_BOUND, NATIVE_BOUND_KB / 1024));
    sb.append(String.format(Locale.ROOT, "  %-16s %15s %15s %21s %21s %17s%n", "jvm", "threads", "fds", "native (NMT) KiB", "rss KiB", "direct bytes"));
    for (Resources r : resources) {
      ResourceSample b = r.before(), a = r.after();
      sb.append(String.format(Locale.ROOT, "  %-16s %15s %15s %21s %21s %17s%n", r.node(), b.threads() + " -> " + a.threads(), b.fds() + " -> " + a.fds(),
          b.nativeKb() + " -> " + a.nativeKb(), b.rssKb() + " -> " + a.rssKb(), b.directBytes() + " -> " + a.directBytes()));
    }
    if (!firstEvents.isEmpty()) {
      sb.append("\nevents that must not happen (first ").append(firstEvents.size()).append("):\n");
      for (String e : firstEvents) sb.append("  ").append(e).append('\n');
    }
    List<String> v = violations();
    sb.append(v.isEmpty() ? "\nRESULT: PASS\n" : "\nRESULT: FAIL\n");
    for (String s : v) sb.append("  violation: ").append(s).append('\n');
    return sb.toString();
  }

  String json() {
    Map<String, Object> m = new LinkedHashMap<>(header);
    m.put("transfers_done", done);
    m.put("bytes_done", bytes);
    m.put("failed_by_code", failedByCode);
    m.put("writes_unverified", unverified);
    m.put("corrupted", corrupted);
    m.put("hung", hung);
    m.put("workers_stuck", stuck);
    m.put("notifications_checked", notifOk);
    m.put("notifications_lost", notifLost);
    m.put("notifications_duplicated", notifDup);
    m.put("notifications_wrong_status", notifWrong);
    m.put("notifications_not_checkable", notifStale + notifUncheckable);
    List<Object> fl = new ArrayList<>();
    for (ChaosLoop.Fault f : faults)
      fl.add(Map.of("kind", f.kind(), "node", f.node(), "at_ms", f.atMs(), "took_ms", f.tookMs(), "detail", f.detail()));
    m.put("faults", fl);
    m.put("faults_not_applied", notRun);
    List<Object> rl = new ArrayList<>();
    for (Resources r : resources)
      rl.add(Map.of("jvm", r.node(), "before", sample(r.before()), "after", sample(r.after())));
    m.put("resources", rl);
    m.put("bounds", Map.of("threads", THREADS_BOUND, "fds", FDS_BOUND, "native_kib", NATIVE_BOUND_KB));
    m.put("violations", violations());
    m.put("passed", violations().isEmpty());
    StringBuilder sb = new StringBuilder();
    write(sb, m);
    return sb.append('\n').toString();
  }

  private static Map<String, Object> sample(ResourceSample s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("threads", s.threads());
    m.put("fds", s.fds());
    m.put("native_kib", s.nativeKb());
    m.put("rss_kib", s.rssKb());
    m.put("direct_bytes", s.directBytes());
    return m;
  }

  private static void write(StringBuilder sb, Object o) {
    if (o instanceof Map<?, ?> m) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) sb.append(',');
        first = false;
        write(sb, String.valueOf(e.getKey()));
        sb.append(':');
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (o instanceof List<?> l) {
      sb.append('[');
      for (int i = 0; i < l.size(); i++) {
        if (i > 0) sb.append(',');
        write(sb, l.get(i));
      }
      sb.append(']');
    } else if (o instanceof Number || o instanceof Boolean) {
      sb.append(o);
    } else {
      sb.append('"');
      for (char c : String.valueOf(o).toCharArray()) {
        if (c == '"' || c == '\\') sb.append('\\').append(c);
        else if (c < 0x20) sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
        else sb.append(c);
      }
      sb.append('"');
    }
  }
}
