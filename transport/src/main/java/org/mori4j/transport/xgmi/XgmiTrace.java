package org.mori4j.transport.xgmi;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Opt-in timeline of one operation at a time through the XGMI path ({@code MORI4J_XGMI_TRACE=1} or
 * {@code -Dmori4j.xgmi.trace=true}; off by default, and then every hook is one constant check): a caller opens a
 * window ({@link #begin}), the KV layer, the engine and this backend stamp {@code System.nanoTime()} at their steps
 * (plan built, each launch returned, each completion first seen by a poll, statuses done, handle completed), and
 * {@link #end} hands back the window's {@link Window}. With the trace on, the backend's events are created with
 * timing, a second timing event is recorded in front of every launch and a per-device anchor event in front of the
 * window's first launch, so each op's GPU start and end are known relative to the anchor, whose host time is its
 * record call: the GPU side of the window in the host's clock, to within the record's submission latency. Windows
 * are process-wide and must not overlap (kv-bench runs one migration at a time); ops that complete after their
 * window closed are not counted.
 */
public final class XgmiTrace {
  /** Whether the trace is on in this JVM (read once). */
  public static final boolean ON = Boolean.getBoolean("mori4j.xgmi.trace") || "1".equals(System.getenv("MORI4J_XGMI_TRACE"));

  /** Host stamps (first or last occurrence), in the window's array. */
  public static final int ENTER = 0, PLANNED = 1, FIRST_LAUNCH = 2, LAST_LAUNCH = 3, RETURNED = 4, FIRST_DONE = 5, LAST_DONE = 6,
      STATUSES_DONE = 7, FINISHED = 8, OBSERVED = 9, ANCHOR = 10;
  /** Counters. */
  private static final int LAUNCHES = 11, CALLER_ISSUES = 12, WORKER_ISSUES = 13, NO_FREE_EVENT = 14, GPU_OPS = 15;
  /** GPU figures in nanoseconds after the anchor: earliest start, latest end, longest single op, sum of op times. */
  private static final int GPU_FIRST_START = 16, GPU_LAST_END = 17, GPU_LONGEST = 18, GPU_SUM = 19, OPEN = 20;
  /**
   * The poll pass under way: the trace's own GPU-time reads so far (credited back to each completion's "seen" stamp) and
   * the completions it found; over the window: the most one pass found, and every read's time.
   */
  private static final int PASS_CREDIT = 21, PASS_FOUND = 22, MAX_PASS = 23, READ_NANOS = 24;
  /** The worker thread's time in the window by what it did: polls of its events (and how many), reports, issues. */
  private static final int POLLS = 25, POLL_NANOS = 26, REPORT_NANOS = 27, ISSUE_NANOS = 28;
  private static final int SLOTS = 29;
  private static final AtomicLongArray T = new AtomicLongArray(SLOTS);

  /**
   * The parts of one issue by the worker (nanoseconds summed over the window's launches, {@link Window#issueParts}): its
   * checks (peer, regions, blocks, remote base), the event slot and stream, the block table (copy into the slot's
   * pinned buffer, upload when not mapped), the trace's own start-event records (absent untraced), the kernel's
   * argument layout (function, grid, {@code KernelArgs}), the launch call ({@code GpuRuntime.launch}: context bind,
   * parameter scratch, {@code cuLaunchKernel}; a lone copy's call for a single block), the event record, the bookkeeping
   * after it, and the worker's time between the end of one issue and the start of the next in the same round. The
   * last entry counts the launches (event records) they cover.
   */
  public static final int PART_CHECK = 0, PART_SLOT = 1, PART_TABLE = 2, PART_TRACE = 3, PART_ARGS = 4, PART_LAUNCH = 5, PART_RECORD = 6,
      PART_BOOK = 7, PART_BETWEEN = 8, PARTS = 9;
  private static final AtomicLongArray P = new AtomicLongArray(PARTS + 1);
  /**
   * The migrating caller's time (nanoseconds summed over the window, {@link Window#callerParts}): building each call's
   * plan, the engine's batch call, and its bookkeeping after the call returned; the last entry counts the calls.
   */
  public static final int CALLER_PLAN = 0, CALLER_ENGINE = 1, CALLER_AFTER = 2, CALLER_PARTS = 3;
  private static final AtomicLongArray C = new AtomicLongArray(CALLER_PARTS + 1);
  /**
   * One worker thread's issue under way: its parts so far, the stamp the next part is measured from (0: none being
   * timed, e.g. a submitting thread's issue), and when its last issue in the round ended. Per thread: every backend of
   * the process has its own worker.
   */
  private static final class Issue {
    final long[] pending = new long[PARTS + 1];
    long from, lastEnd;
  }

  private static final ThreadLocal<Issue> ISSUE = ThreadLocal.withInitial(Issue::new);

  private XgmiTrace() {}

  /**
   * What one window saw; host times in nanoseconds after {@link #ENTER} (-1: not seen), GPU times in host-clock
   * nanoseconds after ENTER through the anchor (-1: no GPU timing, e.g. a runtime without it). {@code firstDone} and
   * {@code lastDone} leave out the trace's own reads of GPU times made earlier in the same poll pass ({@code traceReads},
   * over the window), so they say when an untraced poll would have seen each op; {@code largestPass} is the most
   * completions one poll pass found (a pass that finds many reports them all before the first caller hears of its op).
   */
  public record Window(long planned, long firstLaunch, long lastLaunch, long returned, long firstDone, long lastDone, long statusesDone,
                       long finished, long observed, long gpuFirstStart, long gpuLastEnd, long gpuLongestOp, long gpuOpSum, long launches,
                       long callerIssues, long workerIssues, long noFreeEvent, long gpuOps, long largestPass, long traceReads,
                       long polls, long pollNanos, long reportNanos, long issueNanos, long[] issueParts, long[] callerParts) {}

  /** Opens a window now (its {@link #ENTER} stamp); clears the last one. */
  public static void begin() {
    for (int i = 0; i < SLOTS; i++) T.set(i, 0);
    for (int i = 0; i <= PARTS; i++) P.set(i, 0);
    for (int i = 0; i <= CALLER_PARTS; i++) C.set(i, 0);
    T.set(GPU_FIRST_START, Long.MAX_VALUE);
    T.set(OPEN, 1);
    T.set(ENTER, System.nanoTime());
  }

  /** Stamps {@code stage} unless it was stamped already in this window. */
  public static void first(int stage) {
    if (ON && T.get(OPEN) != 0) T.compareAndSet(stage, 0, System.nanoTime());
  }

  /** Stamps {@code stage}, keeping the latest stamp of the window. */
  public static void last(int stage) {
    if (ON && T.get(OPEN) != 0) T.accumulateAndGet(stage, System.nanoTime(), Math::max);
  }

  /** A launch (or a lone copy) returned on the issuing thread. */
  static void launched() {
    if (!ON || T.get(OPEN) == 0) return;
    long now = System.nanoTime();
    T.compareAndSet(FIRST_LAUNCH, 0, now);
    T.accumulateAndGet(LAST_LAUNCH, now, Math::max);
    T.incrementAndGet(LAUNCHES);
  }

  /**
   * Counts a launch (or copy) put on the GPU by a submitting thread, one put there by the worker, and an issue by the
   * worker that found every event of its device in use (the op waits and is tried again: one op can count several times).
   */
  static void callerIssued() { count(CALLER_ISSUES); }

  static void workerIssued() { count(WORKER_ISSUES); }

  static void noFreeEvent() { count(NO_FREE_EVENT); }

  private static void count(int c) {
    if (ON && T.get(OPEN) != 0) T.incrementAndGet(c);
  }

  /** The open window's id (its ENTER stamp), or 0 when the trace is off or no window is open. */
  static long window() {
    return ON && T.get(OPEN) != 0 ? T.get(ENTER) : 0;
  }

  /**
   * True for the one caller that records the window's anchor (the window's first launch, on whichever device), which
   * then calls {@link #anchored}; GPU times are read only for ops on that device.
   */
  static boolean claimAnchor() {
    return T.compareAndSet(ANCHOR, 0, -1);
  }

  static void anchored(long hostNanos) {
    T.set(ANCHOR, hostNanos);
  }

  /**
   * The worker (or a submitter holding its turn) starts a poll of its events: the completions it finds are stamped as
   * if the trace's reads made in the pass had not been made (one poller at a time: the turn).
   */
  /** Worker time: a poll of the events that took {@code nanos} (the trace's reads included: see {@code traceReads}). */
  static void polled(long nanos) {
    if (!ON || T.get(OPEN) == 0) return;
    T.incrementAndGet(POLLS);
    T.addAndGet(POLL_NANOS, nanos);
  }

  /** Worker time: reporting completed ops to their callers (their listeners run here), and issuing ops (checks, launch, event). */
  static void reported(long nanos) {
    if (ON && T.get(OPEN) != 0) T.addAndGet(REPORT_NANOS, nanos);
  }

  static void issued(long nanos) {
    if (ON && T.get(OPEN) != 0) T.addAndGet(ISSUE_NANOS, nanos);
  }

  static void passStarted() {
    if (!ON || T.get(OPEN) == 0) return;
    T.set(PASS_CREDIT, 0);
    T.set(PASS_FOUND, 0);
  }

  /**
   * An op left the GPU: first/last completion seen, and its GPU start and end in milliseconds after the anchor (NaN:
   * unknown), which took the trace {@code readNanos} to read. Without the credit, the last op of a pass that found 64
   * was stamped after 128 elapsed-time reads (58-248 us per 80-launch KV migration on the 1x H100 hosts,
   * bench/results/20261125T0624Z-cecdfb9-kv-gap-1xh100), which an untraced poll does not make.
   */
  static void done(double startMs, double endMs, long readNanos) {
    if (!ON || T.get(OPEN) == 0) return;
    long now = System.nanoTime() - T.addAndGet(PASS_CREDIT, readNanos);
    T.addAndGet(READ_NANOS, readNanos);
    T.accumulateAndGet(MAX_PASS, T.incrementAndGet(PASS_FOUND), Math::max);
    T.compareAndSet(FIRST_DONE, 0, now);
    T.accumulateAndGet(LAST_DONE, now, Math::max);
    if (Double.isNaN(startMs) || Double.isNaN(endMs)) return;
    long s = Math.round(startMs * 1e6), e = Math.round(endMs * 1e6);
    T.accumulateAndGet(GPU_FIRST_START, s, Math::min);
    T.accumulateAndGet(GPU_LAST_END, e, Math::max);
    T.accumulateAndGet(GPU_LONGEST, e - s, Math::max);
    T.addAndGet(GPU_SUM, e - s);
    T.incrementAndGet(GPU_OPS);
  }

  /** Closes the window (stamping {@link #OBSERVED}) and returns what it saw. */
  public static Window end() {
    long now = System.nanoTime();
    T.compareAndSet(OBSERVED, 0, now);
    T.set(OPEN, 0);
    long enter = T.get(ENTER), anchor = T.get(ANCHOR);
    boolean gpu = anchor > 0 && T.get(GPU_OPS) > 0;
    return new Window(rel(PLANNED, enter), rel(FIRST_LAUNCH, enter), rel(LAST_LAUNCH, enter), rel(RETURNED, enter), rel(FIRST_DONE, enter),
        rel(LAST_DONE, enter), rel(STATUSES_DONE, enter), rel(FINISHED, enter), rel(OBSERVED, enter),
        gpu ? anchor - enter + T.get(GPU_FIRST_START) : -1, gpu ? anchor - enter + T.get(GPU_LAST_END) : -1,
        gpu ? T.get(GPU_LONGEST) : -1, gpu ? T.get(GPU_SUM) : -1, T.get(LAUNCHES), T.get(CALLER_ISSUES), T.get(WORKER_ISSUES),
        T.get(NO_FREE_EVENT), T.get(GPU_OPS), T.get(MAX_PASS), T.get(READ_NANOS), T.get(POLLS), T.get(POLL_NANOS), T.get(REPORT_NANOS),
        T.get(ISSUE_NANOS), snapshot(P), snapshot(C));
  }

  private static long[] snapshot(AtomicLongArray a) {
    long[] p = new long[a.length()];
    for (int i = 0; i < p.length; i++) p[i] = a.get(i);
    return p;
  }

  /**
   * One call of a migration ({@code io/kv}): its plan took {@code plan} ns, the engine's call {@code engine} ns, what
   * followed until the next call {@code after} ns.
   */
  public static void callerCall(long plan, long engine, long after) {
    if (!ON || T.get(OPEN) == 0) return;
    C.addAndGet(CALLER_PLAN, plan);
    C.addAndGet(CALLER_ENGINE, engine);
    C.addAndGet(CALLER_AFTER, after);
    C.incrementAndGet(CALLER_PARTS);
  }

  /** The worker starts a round's issue loop: the first issue has no "between" part. */
  static void roundStarted() {
    if (ON) ISSUE.get().lastEnd = 0;
  }

  /** The worker starts issuing one queued op (its checks are the first part). */
  static void issueStarted() {
    if (!ON) return;
    Issue is = ISSUE.get();
    if (T.get(OPEN) == 0) {
      is.from = 0;
      return;
    }
    long now = System.nanoTime();
    java.util.Arrays.fill(is.pending, 0);
    if (is.lastEnd != 0) is.pending[PART_BETWEEN] = now - is.lastEnd;
    is.from = now;
  }

  /** The part {@code part} of the issue under way ended now; nothing when no worker issue is being timed. */
  static void part(int part) {
    if (!ON) return;
    Issue is = ISSUE.get();
    if (is.from == 0) return;
    long now = System.nanoTime();
    is.pending[part] += now - is.from;
    if (part == PART_RECORD) is.pending[PARTS]++;
    is.from = now;
  }

  /** The worker's issue of one queued op ended: its parts count when it recorded at least one launch's event. */
  static void issueEnded() {
    if (!ON) return;
    Issue is = ISSUE.get();
    if (is.from == 0) return;
    part(PART_BOOK);
    if (is.pending[PARTS] > 0 && T.get(OPEN) != 0) for (int i = 0; i <= PARTS; i++) P.addAndGet(i, is.pending[i]);
    is.lastEnd = is.from;
    is.from = 0;
  }

  private static long rel(int stage, long enter) {
    long t = T.get(stage);
    return t == 0 ? -1 : t - enter;
  }
}
