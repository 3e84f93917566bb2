package org.mori4j.bench.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToLongFunction;
import org.mori4j.transport.xgmi.XgmiTrace;

/**
 * kv-bench's view of the XGMI timeline ({@link XgmiTrace}, on with {@code MORI4J_XGMI_TRACE=1}): one window per
 * timed migration, from the call of {@code migrate} to the bench seeing its handle complete, and one stderr line per
 * row with the median of each stage over the row's iterations, in microseconds after the call. The GPU columns are
 * the backend's timing events placed in the host's clock through an anchor event recorded in front of the first launch
 * (see {@link XgmiTrace}); "-" where a stage was not seen (e.g. no GPU timing, or the TCP backend).
 */
final class KvBenchTrace {
  private final List<XgmiTrace.Window> windows = new ArrayList<>();

  static boolean on() {
    return XgmiTrace.ON;
  }

  void add(XgmiTrace.Window w) {
    windows.add(w);
  }

  /** The row's line, or null when no window was kept. */
  String summary(String tag) {
    if (windows.isEmpty()) return null;
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "kv-bench xgmi trace %s (p50 of %d migrations, us after migrate() was called):", tag,
        windows.size()));
    col(b, " plan built", XgmiTrace.Window::planned);
    col(b, " | first launch", XgmiTrace.Window::firstLaunch);
    col(b, " | last launch", XgmiTrace.Window::lastLaunch);
    col(b, " | call returned", XgmiTrace.Window::returned);
    col(b, " | GPU first start", XgmiTrace.Window::gpuFirstStart);
    col(b, " | GPU last end", XgmiTrace.Window::gpuLastEnd);
    col(b, " | first completion seen", XgmiTrace.Window::firstDone);
    col(b, " | last completion seen", XgmiTrace.Window::lastDone);
    col(b, " | statuses done", XgmiTrace.Window::statusesDone);
    col(b, " | handle completed", XgmiTrace.Window::finished);
    col(b, " | bench saw it", XgmiTrace.Window::observed);
    col(b, " || GPU span", w -> w.gpuLastEnd() < 0 ? -1 : w.gpuLastEnd() - w.gpuFirstStart());
    col(b, ", longest op", XgmiTrace.Window::gpuLongestOp);
    col(b, ", sum of op times", XgmiTrace.Window::gpuOpSum);
    b.append(String.format(Locale.ROOT, "; per migration (p50): %d launches, %d issued by the caller, %d by the worker, %d issues found no free event,"
        + " %d GPU-timed, at most %d completions found by one poll; the trace's own GPU-time reads %.1f us (left out of the completion stamps)",
        p50(XgmiTrace.Window::launches), p50(XgmiTrace.Window::callerIssues), p50(XgmiTrace.Window::workerIssues),
        p50(XgmiTrace.Window::noFreeEvent), p50(XgmiTrace.Window::gpuOps), p50(XgmiTrace.Window::largestPass), p50(XgmiTrace.Window::traceReads) / 1e3));
    b.append(String.format(Locale.ROOT, "; the XGMI worker's time (p50, us): %d polls of its events %.1f, reporting completions %.1f, issuing %.1f",
        p50(XgmiTrace.Window::polls), p50(XgmiTrace.Window::pollNanos) / 1e3, p50(XgmiTrace.Window::reportNanos) / 1e3,
        p50(XgmiTrace.Window::issueNanos) / 1e3));
    b.append(String.format(Locale.ROOT, "; the worker's issue per launch (p50 over migrations of each part's mean, us; %d launches timed):",
        p50(w -> w.issueParts()[XgmiTrace.PARTS])));
    for (int p = 0; p < XgmiTrace.PARTS; p++) {
      int part = p;
      b.append(p == 0 ? " " : " | ").append(PART_NAMES[p]).append(' ');
      b.append(String.format(Locale.ROOT, "%.2f", p50PerLaunch(w -> w.issueParts()[part])));
    }
    b.append(String.format(Locale.ROOT, " | sum %.2f", p50PerLaunch(w -> Arrays.stream(w.issueParts(), 0, XgmiTrace.PARTS).sum())));
    b.append(String.format(Locale.ROOT, "; the caller's calls (p50 per migration, us; %d calls): plans %.1f | engine calls %.1f | after the calls %.1f",
        p50(w -> w.callerParts()[XgmiTrace.CALLER_PARTS]), p50(w -> w.callerParts()[XgmiTrace.CALLER_PLAN]) / 1e3,
        p50(w -> w.callerParts()[XgmiTrace.CALLER_ENGINE]) / 1e3, p50(w -> w.callerParts()[XgmiTrace.CALLER_AFTER]) / 1e3));
    return b.toString();
  }

  /** Names of {@link XgmiTrace}'s issue parts, in their order. */
  private static final String[] PART_NAMES = {"checks", "slot+stream", "table", "trace records", "kernel args", "launch call", "event record",
      "bookkeeping", "between issues"};

  /** The median over the windows with timed launches of {@code f}'s nanoseconds per timed launch, in microseconds (NaN: none). */
  double p50PerLaunch(ToLongFunction<XgmiTrace.Window> f) {
    double[] v = windows.stream().filter(w -> w.issueParts()[XgmiTrace.PARTS] > 0)
        .mapToDouble(w -> f.applyAsLong(w) / (double) w.issueParts()[XgmiTrace.PARTS] / 1e3).sorted().toArray();
    return v.length == 0 ? Double.NaN : v[(v.length - 1) / 2];
  }

  private void col(StringBuilder b, String name, ToLongFunction<XgmiTrace.Window> f) {
    long v = p50(f);
    b.append(name).append(' ').append(v < 0 ? "-" : String.format(Locale.ROOT, "%.1f", v / 1e3));
  }

  /** The median of the windows' values, over those that saw the stage; -1 when none did. */
  long p50(ToLongFunction<XgmiTrace.Window> f) {
    long[] v = windows.stream().mapToLong(f).filter(x -> x >= 0).toArray();
    if (v.length == 0) return -1;
    Arrays.sort(v);
    return v[(v.length - 1) / 2];
  }
}
