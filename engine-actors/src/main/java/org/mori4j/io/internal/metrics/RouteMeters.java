package org.mori4j.io.internal.metrics;

import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.mori4j.io.BackendType;
import org.mori4j.io.StatusCode;
import org.mori4j.transport.TransferOp;

/**
 * The meters of one route of one engine: (backend, peer, op, kind), where op is read or write and kind is
 * single (an engine-level read or write), batch (one entry of an engine-level batch) or session (a session's
 * read, write or batch). Resolved once per session and once per engine-level transfer by
 * {@link EngineMeters#route}, so a transfer costs here: two {@code LongAdder} additions when it starts, one when it
 * ends (two when it fails), and with a registry bound one {@code Timer} recording (two clock reads).
 *
 * <p>Why this shape: counters are {@code LongAdder}s that Micrometer reads at scrape time through function
 * counters, so they cost the same with and without a registry and never allocate; the latency histogram is
 * Micrometer's {@code Timer} (Prometheus buckets by fixed counters; client-side percentiles by HdrHistogram only when
 * configured, since they double its cost), the one piece whose cost is paid only when a registry is bound, since
 * without a registry nobody could read it. JFR costs a volatile read while nothing records ({@link JfrState}). Transfers
 * refused before a route existed (bad arguments, unknown peer) are counted on a route whose backend and peer are
 * "none", errors only.
 */
public final class RouteMeters {
  public static final int SINGLE = 0;
  public static final int BATCH = 1;
  public static final int SESSION = 2;
  static final String[] KINDS = {"single", "batch", "session"};
  private static final StatusCode[] CODES = StatusCode.values();

  final EngineMeters engine;
  /** Null on a "none" route (transfers refused before a route was chosen). */
  final BackendType backend;
  final String peer;
  final byte op;
  final int kind;
  final LongAdder started = new LongAdder();
  final LongAdder bytes = new LongAdder();
  final LongAdder completed = new LongAdder();
  final LongAdder[] errors = new LongAdder[CODES.length];
  /** Codes whose error counter is known to the registry binding; written under the engine's lock. */
  final boolean[] errorSeen = new boolean[CODES.length];
  /** Successful transfers' latency; null unless a registry is bound with histograms on. */
  volatile Timer latency;

  RouteMeters(EngineMeters engine, BackendType backend, String peer, byte op, int kind) {
    this.engine = engine;
    this.backend = backend;
    this.peer = peer;
    this.op = op;
    this.kind = kind;
    for (int i = 0; i < errors.length; i++) errors[i] = new LongAdder();
  }

  String backendTag() {
    return backend == null ? "none" : backend.name().toLowerCase(java.util.Locale.ROOT);
  }

  String opTag() {
    return op == TransferOp.READ ? "read" : "write";
  }

  String kindTag() {
    return KINDS[kind];
  }

  /**
   * A transfer of {@code bytes} bytes is handed to the backend (call before the hand-off: the backend may complete
   * it at once); returns its start time for {@link #finished}, or 0 when nothing will need it.
   */
  public long started(long bytes) {
    started.increment();
    this.bytes.add(bytes);
    return latency != null || (engine.jfr && JfrState.recording) ? System.nanoTime() : 0;
  }

  /**
   * The transfer {@code op} that {@link #started} at {@code startNanos} ended with {@code code}. Called once, by the
   * thread that completes it, before the status is published, so that a caller whose {@code await()} returned
   * reads counters that include its transfer.
   */
  public void finished(StatusCode code, long startNanos, TransferOp op) {
    completed.increment();
    if (code == StatusCode.SUCCESS) {
      Timer t = latency;
      if (t != null && startNanos != 0) t.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    } else {
      error(code);
    }
    if (engine.jfr && JfrState.recording) emit(code, startNanos, op);
  }

  /** A transfer on this route failed, or (a "none" route) was refused, with {@code code}. */
  void error(StatusCode code) {
    int c = code.ordinal();
    errors[c].increment();
    if (!errorSeen[c]) engine.errorSeen(this, code);
  }

  void emit(StatusCode code, long startNanos, TransferOp op) {
    TransferEvent e = new TransferEvent(); // scalar-replaced by the JIT while no recording enables the event
    if (!e.shouldCommit()) return;
    e.engine = engine.engineKey;
    e.peer = peer;
    e.backend = backendTag();
    e.op = opTag();
    e.kind = kindTag();
    e.status = code.name();
    e.latency = startNanos == 0 ? -1 : System.nanoTime() - startNanos;
    if (op != null) {
      e.bytes = op.totalBytes();
      e.blocks = op.blockCount();
      e.uid = op.uid();
    }
    e.commit();
  }

  /** Transfers started and not finished yet. */
  long inFlight() {
    // completed first: a transfer that ends between the two reads is then counted as still in flight, never as -1
    long done = completed.sum();
    return started.sum() - done;
  }

  static StatusCode code(int ordinal) {
    return CODES[ordinal];
  }
}
