package org.mori4j.io.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.mori4j.io.BackendType;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;
import org.mori4j.io.internal.metrics.EngineMeters;
import org.mori4j.io.internal.metrics.MetricsSettings;
import org.mori4j.io.internal.metrics.RouteMeters;
import org.mori4j.transport.TransferOp;

/**
 * Checks a transfer against the current {@link Routes} and hands it to the chosen backend. Shared by the
 * Java facade and the engine actor's transfer commands. Bad input never throws: it yields a status that
 * has already failed, with a message naming the argument and its value.
 */
public final class TransferPath {
  private final String engineKey;
  private final long spinNanos;
  private final AtomicLong uids = new AtomicLong(1);
  private final BlockArrayPool blockArrays = new BlockArrayPool();
  volatile Routes routes = Routes.EMPTY;
  /** Written by the engine actor's registrations, read by anyone (metrics, benchmarks). */
  private final org.mori4j.io.RegistrationStats registrationStats = new org.mori4j.io.RegistrationStats();
  /** Explains paths ({@code IoEngine.explain}) and warns once when a pair takes a slower one than it could. */
  private final PathExplainer explainer;
  private final InboundLandedHub inboundLanded = new InboundLandedHub();

  /** The engine's metrics (engine-actors/docs/metrics.md, "Metrics"); every hook returns at once when they are off. */
  private final EngineMeters meters;

  public TransferPath(String engineKey, long spinNanos) {
    this(engineKey, spinNanos, MetricsSettings.OFF);
  }

  public TransferPath(String engineKey, long spinNanos, MetricsSettings metrics) {
    this.engineKey = engineKey;
    this.spinNanos = spinNanos;
    this.meters = new EngineMeters(engineKey, metrics, this::routes);
    this.explainer = new PathExplainer(engineKey, this);
  }

  public PathExplainer explainer() {
    return explainer;
  }

  /** The engine's listeners of inbound writes that landed (set on every backend it creates). */
  public InboundLandedHub inboundLanded() {
    return inboundLanded;
  }

  public EngineMeters meters() {
    return meters;
  }

  /** Counts {@code st} as refused (kind {@code kind}) when no backend saw it: it failed before a route was chosen. */
  public TransferStatusImpl counted(TransferStatusImpl st, byte op, int kind) {
    if (!st.metered() && meters.enabled()) meters.refused(op, kind, st.code());
    return st;
  }

  public Routes routes() {
    return routes;
  }

  public long spinNanos() {
    return spinNanos;
  }

  public org.mori4j.io.RegistrationStats registrationStats() {
    return registrationStats;
  }

  /** The engine's default transfer deadline in nanoseconds (0: off); see {@link TransferDeadlines}. */
  private volatile long defaultDeadlineNanos;

  public void defaultDeadlineNanos(long nanos) {
    defaultDeadlineNanos = nanos;
  }

  /** Arms {@code st}'s deadline from {@code options} (null: the engine's default); returns {@code st}. */
  public TransferStatus withDeadline(TransferStatus st, org.mori4j.io.TransferOptions options) {
    long d = defaultDeadlineNanos;
    if (d == 0 && (options == null || options.deadline() == null)) return st; // the common case costs a read and a branch
    return TransferDeadlines.arm(st, options, d);
  }

  /** {@link #withDeadline} for every status of a batch call. */
  public List<TransferStatus> withDeadline(List<TransferStatus> sts, org.mori4j.io.TransferOptions options) {
    for (TransferStatus s : sts) withDeadline(s, options);
    return sts;
  }

  public long allocateUid() {
    return uids.getAndIncrement();
  }

  /** A single read ({@code kind == READ}) or write. */
  public TransferStatusImpl single(byte kind, MemoryDesc local, long localOffset, MemoryDesc remote,
                                   long remoteOffset, long size, long uid) {
    return counted(route(kind, local, localOffset, remote, remoteOffset, size, uid), kind, RouteMeters.SINGLE);
  }

  private TransferStatusImpl route(byte kind, MemoryDesc local, long localOffset, MemoryDesc remote,
                                   long remoteOffset, long size, long uid) {
    boolean read = kind == TransferOp.READ;
    String ln = read ? "localDst" : "localSrc";
    String rn = read ? "remoteSrc" : "remoteDst";
    Routes r = routes;
    String err = check(r, local, ln, remote, rn);
    if (err != null) return failed(r, err);
    Routes.Local l = r.locals().get(local.id());
    if (size <= 0) return invalid("size must be positive: " + size);
    if (localOffset < 0 || localOffset > local.size() - size)
      return invalid("localOffset " + localOffset + " + size " + size + " exceeds " + ln + " size " + local.size());
    if (remoteOffset < 0 || remoteOffset > remote.size() - size)
      return invalid("remoteOffset " + remoteOffset + " + size " + size + " exceeds " + rn + " size " + remote.size());
    Routes.Peer p = r.peers().get(remote.engineKey());
    Routes.Backend b = choose(r, l, p, remote);
    if (b == null) return noBackend(local, ln, remote, rn);
    explainer.noteChosen(r, l, p, remote, b);
    TransferStatusImpl st = new TransferStatusImpl(spinNanos);
    st.initSingle(kind, l.region(), localOffset, p.handles().get(b.type()), remote.id(), remote.accessKey(),
        remote.address(), remoteOffset, size, uid);
    st.remoteData(remote.backendData().get(b.type()), remote.backendData());
    st.meter(meters.route(remote.engineKey(), b.type(), kind, RouteMeters.SINGLE));
    // XGMI with an idle worker issues the copy from this thread (mori4j.xgmi.caller-poll); every other backend declines
    if (!b.backend().issueFromCaller(st)) b.backend().submit(st);
    return st;
  }

  /** One batch entry: all blocks between one (local, remote) pair as one request. */
  public TransferStatusImpl batch(byte kind, MemoryDesc local, long[] lo, MemoryDesc remote, long[] ro, long[] sizes,
                                  long uid) {
    return batch(kind, RouteMeters.BATCH, local, lo, remote, ro, sizes, uid);
  }

  /** One batch entry counted as kind {@code meterKind} (a session's batch is counted as a session transfer). */
  public TransferStatusImpl batch(byte kind, int meterKind, MemoryDesc local, long[] lo, MemoryDesc remote, long[] ro,
                                  long[] sizes, long uid) {
    return counted(routeBatch(kind, meterKind, local, lo, remote, ro, sizes, uid, null), kind, meterKind);
  }

  /**
   * Routes one entry; when {@code held} is not null and the chosen backend {@link org.mori4j.transport.TransferBackend#fusesBatches
   * fuses batches}, the checked op is kept there instead of being submitted ({@link HeldBatches#flush} hands it over).
   */
  private TransferStatusImpl routeBatch(byte kind, int meterKind, MemoryDesc local, long[] lo, MemoryDesc remote, long[] ro,
                                        long[] sizes, long uid, HeldBatches held) {
    boolean read = kind == TransferOp.READ;
    String ln = read ? "localDst" : "localSrc";
    String rn = read ? "remoteSrc" : "remoteDst";
    Routes r = routes;
    String err = check(r, local, ln, remote, rn);
    if (err != null) return failed(r, err);
    if (lo == null || ro == null || sizes == null) return invalid("localOffsets, remoteOffsets and sizes must not be null");
    if (lo.length != ro.length || lo.length != sizes.length)
      return invalid("localOffsets (" + lo.length + "), remoteOffsets (" + ro.length + ") and sizes (" + sizes.length
          + ") must have the same length");
    if (lo.length == 0) return invalid("a batch entry needs at least one block");
    // one pass: every block checked, joins counted, bytes summed (BatchBlocks; the messages are the ones it always had)
    BatchBlocks blocks = new BatchBlocks();
    String bad = blocks.scan(lo, ro, sizes, local.size(), remote.size(), ln, rn);
    if (bad != null) return invalid(bad);
    Routes.Local l = r.locals().get(local.id());
    Routes.Peer p = r.peers().get(remote.engineKey());
    Routes.Backend b = choose(r, l, p, remote);
    if (b == null) return noBackend(local, ln, remote, rn);
    explainer.noteChosen(r, l, p, remote, b);
    TransferStatusImpl st = new TransferStatusImpl(spinNanos);
    int m = lo.length - blocks.joins;
    boolean hold = held != null && b.backend().fusesBatches();
    if (m == 1) {
      st.initSingle(kind, l.region(), lo[0], p.handles().get(b.type()), remote.id(), remote.accessKey(), remote.address(), ro[0],
          blocks.total, uid);
    } else if (m == lo.length) {
      // nothing joins: the caller's own arrays, for a backend that issues the batch from this thread and reads them
      // only until it returns (XGMI with an idle worker: no copy here, no hand-off, the launch from this thread)
      st.initCheckedBatch(kind, l.region(), lo, p.handles().get(b.type()), remote.id(), remote.accessKey(), remote.address(), ro,
          sizes, m, uid, blocks.total, blocks.minBlock, blocks.maxBlock, local.size(), remote.size());
      st.remoteData(remote.backendData().get(b.type()), remote.backendData());
      st.meter(meters.route(remote.engineKey(), b.type(), kind, meterKind));
      if (hold) {
        held.add(b.backend(), st, lo, ro, sizes); // still the caller's arrays: the flush copies them if it must
        return st;
      }
      if (b.backend().issueFromCaller(st)) return st;
      // the backend reads the blocks later on its own threads, and the caller may reuse its arrays once this returns
      ownArrays(st, b.backend(), lo, ro, sizes);
      b.backend().submit(st);
      return st;
    } else {
      // joined into arrays of the op's own (the caller may reuse its arrays as soon as this returns)
      boolean pooled = b.backend().readsBlocksOnlyUntilDone();
      BlockArrayPool.Arrays a = pooled ? blockArrays.take(m) : BlockArrayPool.unpooled(m);
      blocks.join(lo, ro, sizes, a.localOffsets, a.remoteOffsets, a.sizes);
      st.initCheckedBatch(kind, l.region(), a.localOffsets, p.handles().get(b.type()), remote.id(), remote.accessKey(),
          remote.address(), a.remoteOffsets, a.sizes, m, uid, blocks.total, blocks.minBlock, blocks.maxBlock, local.size(),
          remote.size());
      if (pooled) st.returnArraysTo(blockArrays, a);
      st.remoteData(remote.backendData().get(b.type()), remote.backendData());
      st.meter(meters.route(remote.engineKey(), b.type(), kind, meterKind));
      if (hold) held.add(b.backend(), st, null, null, null);
      else if (!b.backend().issueFromCaller(st)) b.backend().submit(st);
      return st;
    }
    st.remoteData(remote.backendData().get(b.type()), remote.backendData());
    st.meter(meters.route(remote.engineKey(), b.type(), kind, meterKind));
    if (hold) held.add(b.backend(), st, null, null, null);
    else b.backend().submit(st);
    return st;
  }

  /**
   * Gives {@code st}, a batch op that still carries the caller's arrays and that {@code backend} will read later on its
   * own threads, arrays of its own (pooled when the backend reads them only until the op is done).
   */
  void ownArrays(TransferStatusImpl st, org.mori4j.transport.TransferBackend backend, long[] lo, long[] ro, long[] sizes) {
    int m = st.blockCount();
    boolean pooled = backend.readsBlocksOnlyUntilDone();
    BlockArrayPool.Arrays a = pooled ? blockArrays.take(m) : BlockArrayPool.unpooled(m);
    System.arraycopy(lo, 0, a.localOffsets, 0, m);
    System.arraycopy(ro, 0, a.remoteOffsets, 0, m);
    System.arraycopy(sizes, 0, a.sizes, 0, m);
    st.replaceBlocks(a.localOffsets, a.remoteOffsets, a.sizes);
    if (pooled) st.returnArraysTo(blockArrays, a);
  }


  /**
   * Hands {@code op}, which the {@code from} backend found at run time it cannot carry ({@code why}), to the
   * first other backend (in preference order) that reaches the same peer and serves the pair; false when there
   * is none, or the engine is closed. Rare: it scans the peers for the op's handle.
   */
  public boolean reroute(BackendType from, TransferOp op, String why) {
    if (!(op instanceof TransferStatusImpl st)) return false;
    Routes r = routes;
    if (r.closed()) return false;
    Routes.Peer peer = null;
    for (Routes.Peer p : r.peers().values()) {
      if (p.handles().get(from) == op.peer()) {
        peer = p;
        break;
      }
    }
    if (peer == null) return false;
    for (Routes.Backend b : r.backends()) {
      if (b.type() == from) continue;
      Object handle = peer.handles().get(b.type());
      // remote GPU memory: only XGMI hands ops back, and it carries nothing else
      if (handle == null || !b.backend().canServe(op.local(), handle, true, st.descriptorData(b.type()))) continue;
      st.moveTo(b.type(), handle, b.backend().readsBlocksOnlyUntilDone());
      meters.rerouted(from, b.type(), why);
      b.backend().submit(st);
      return true;
    }
    return false;
  }

  /** Several entries; a malformed call fails every status it returns. */
  public List<TransferStatus> batches(byte kind, List<MemoryDesc> locals, List<long[]> lo, List<MemoryDesc> remotes,
                                      List<long[]> ro, List<long[]> sizes, long[] uids) {
    int n = uids == null ? 0 : uids.length;
    String shape = null;
    if (uids == null) shape = "uids must not be null";
    else if (locals == null || lo == null || remotes == null || ro == null || sizes == null)
      shape = "the lists of descriptors, offsets and sizes must not be null";
    else if (locals.size() != n || lo.size() != n || remotes.size() != n || ro.size() != n || sizes.size() != n)
      shape = "every list must have one entry per uid (" + n + "): got " + locals.size() + " local, " + lo.size()
          + " localOffsets, " + remotes.size() + " remote, " + ro.size() + " remoteOffsets, " + sizes.size() + " sizes";
    List<TransferStatus> out = new ArrayList<>(Math.max(n, 1));
    if (shape != null) {
      for (int i = 0; i < Math.max(n, 1); i++) out.add(counted(invalid(shape), kind, RouteMeters.BATCH));
      return out;
    }
    // a call of several entries: those for a backend that fuses them (XGMI unless mori4j.xgmi.fuse-batches is off) are
    // held and handed over together at the end
    HeldBatches held = n > 1 ? new HeldBatches(this) : null;
    for (int i = 0; i < n; i++) {
      out.add(counted(routeBatch(kind, RouteMeters.BATCH, locals.get(i), lo.get(i), remotes.get(i), ro.get(i), sizes.get(i), uids[i], held),
          kind, RouteMeters.BATCH));
    }
    if (held != null) held.flush();
    return out;
  }

  /**
   * Null when the descriptors name a registered local region and a registered remote engine; otherwise the
   * message, prefixed with '!' for ERR_NOT_FOUND and '~' for ERR_PEER_LOST (an engine declared lost).
   */
  String check(Routes r, MemoryDesc local, String ln, MemoryDesc remote, String rn) {
    if (r.closed()) return "closed";
    if (local == null) return ln + " must not be null";
    if (remote == null) return rn + " must not be null";
    if (!local.engineKey().equals(engineKey))
      return ln + " belongs to engine '" + local.engineKey() + "', not to this engine '" + engineKey + "'";
    Routes.Local l = r.locals().get(local.id());
    if (l == null || !l.region().live() || l.desc().accessKey() != local.accessKey())
      return "!" + ln + " (memory id " + local.id() + ") is not registered with this engine (or was deregistered)";
    if (l.desc().size() != local.size() || l.desc().address() != local.address())
      return ln + " does not match its registration (size " + local.size() + " vs " + l.desc().size() + ")";
    Routes.Peer p = r.peers().get(remote.engineKey());
    if (p == null) {
      String lost = r.lost().get(remote.engineKey());
      if (lost != null) return "~" + rn + " belongs to engine '" + remote.engineKey() + "', which was lost: " + lost
          + " (transfers to it fail until it is registered again)";
      return "!" + rn + " belongs to engine '" + remote.engineKey() + "', which is not registered with this engine";
    }
    // one compare on the success path; a stale descriptor never reaches a backend, so no byte of the new process moves
    if (p.desc().incarnation() != remote.ownerIncarnation()) return "!" + staleRemote(rn, remote, p.desc().incarnation());
    return null;
  }

  /** Why descriptor {@code remote} (argument {@code rn}) of another incarnation than {@code registered} is refused. */
  public static String staleRemote(String rn, MemoryDesc remote, long registered) {
    return rn + " (memory id " + remote.id() + ") belongs to incarnation " + org.mori4j.io.EngineDesc.incarnationText(remote.ownerIncarnation())
        + " of engine '" + remote.engineKey() + "', but the engine registered under that key is incarnation "
        + org.mori4j.io.EngineDesc.incarnationText(registered) + " (it was restarted; use descriptors of the new one)";
  }

  private TransferStatusImpl failed(Routes r, String err) {
    if (err.equals("closed")) return TransferStatusImpl.failed(StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' is closed");
    if (err.startsWith("!")) return TransferStatusImpl.failed(StatusCode.ERR_NOT_FOUND, err.substring(1));
    if (err.startsWith("~")) return TransferStatusImpl.failed(StatusCode.ERR_PEER_LOST, err.substring(1));
    return invalid(err);
  }

  static TransferStatusImpl invalid(String msg) {
    return TransferStatusImpl.failed(StatusCode.ERR_INVALID_ARGS, msg);
  }

  /**
   * No backend of the caller's snapshot serves the pair. A caller that read it just before a close (or deregistration)
   * and asked the backends after they stopped (or dropped the region) got a refusal; the engine publishes such a change
   * before it tells any backend, so the current snapshot's answer (closed: ERR_BAD_STATE, ...) is given instead.
   */
  private TransferStatusImpl noBackend(MemoryDesc local, String ln, MemoryDesc remote, String rn) {
    Routes now = routes;
    String err = check(now, local, ln, remote, rn);
    if (err != null) return failed(now, err);
    Routes.Local l = now.locals().get(local.id());
    Routes.Peer p = now.peers().get(remote.engineKey());
    // what the engine had: a failure nobody expected explains itself
    StringBuilder had = new StringBuilder();
    for (Routes.Backend b : now.backends()) {
      had.append(had.isEmpty() ? "" : ", ").append(b.type())
          .append(p != null && p.handles().get(b.type()) != null ? " (connected)" : " (not connected)");
    }
    return TransferStatusImpl.failed(StatusCode.ERR_NOT_FOUND, "no backend connected to engine '" + remote.engineKey()
        + "' can move " + (l != null && l.region().gpu() ? "GPU" : "CPU") + " memory to " + remote.location() + " memory"
        + " (backends: " + (had.isEmpty() ? "none" : had) + ")");
  }

  /**
   * The first backend, in preference order (XGMI, RDMA, TCP), that reaches the peer and can move bytes between
   * these two regions: XGMI takes GPU-to-GPU pairs of one host by itself, everything else falls through to TCP.
   */
  static Routes.Backend choose(Routes r, Routes.Local l, Routes.Peer p, MemoryDesc remote) {
    boolean remoteGpu = remote.location() == MemoryLocationType.GPU;
    for (Routes.Backend b : r.backends()) {
      Object handle = p.handles().get(b.type());
      if (handle != null && b.backend().canServe(l.region(), handle, remoteGpu, remote.backendData().get(b.type()))) return b;
    }
    return null;
  }
}
