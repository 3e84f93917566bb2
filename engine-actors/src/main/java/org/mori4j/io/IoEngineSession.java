package org.mori4j.io;

import org.mori4j.io.internal.Routes;
import org.mori4j.io.internal.SessionActor;
import org.mori4j.io.internal.TransferPath;
import org.mori4j.io.internal.TransferStatusImpl;
import org.mori4j.io.internal.metrics.RouteMeters;
import org.mori4j.transport.TransferOp;

/**
 * A pre-resolved route between one local and one remote memory region, for repeated transfers with the
 * least overhead: the descriptors, backend and peer are looked up once, so a transfer is a bounds check, one
 * status object and a lock-free hand-off to the backend's I/O thread. A session stops working when its peer is
 * lost (its transfers fail with {@code ERR_PEER_LOST}), or when its memory or peer is deregistered or the engine
 * closes (they fail with {@code ERR_BAD_STATE}); {@link #alive()} tells.
 */
public final class IoEngineSession implements SessionActor.Handle {
  private final TransferPath path;
  private final Routes.Local local;
  private final MemoryDesc remote;
  private final Routes.Backend backend;
  private final Object peer;
  /** The chosen backend's part of the remote descriptor (XGMI: its IPC data), looked up once. */
  private final byte[] remoteData;
  private final long spinNanos;
  /** This route's metrics, resolved once (null when metrics are off). */
  private final RouteMeters readMeters;
  private final RouteMeters writeMeters;
  private volatile String deadReason;
  private volatile StatusCode deadCode = StatusCode.ERR_BAD_STATE;

  IoEngineSession(TransferPath path, Routes.Local local, MemoryDesc remote, Routes.Backend backend, Object peer) {
    this.path = path;
    this.local = local;
    this.remote = remote;
    this.backend = backend;
    this.peer = peer;
    this.remoteData = remote.backendData().get(backend.type());
    this.spinNanos = path.spinNanos();
    this.readMeters = path.meters().route(remote.engineKey(), backend.type(), TransferOp.READ, RouteMeters.SESSION);
    this.writeMeters = path.meters().route(remote.engineKey(), backend.type(), TransferOp.WRITE, RouteMeters.SESSION);
  }

  public long allocateTransferUid() {
    return path.allocateUid();
  }

  public MemoryDesc localDesc() {
    return local.desc();
  }

  public MemoryDesc remoteDesc() {
    return remote;
  }

  /** The backend this session's transfers use. */
  public BackendType backendType() {
    return backend.type();
  }

  public TransferStatus read(long localOffset, long remoteOffset, long size, long uid) {
    return path.withDeadline(single(TransferOp.READ, localOffset, remoteOffset, size, uid), null);
  }

  /** {@link #read} with per-call {@code options} (a deadline; null: the engine's default). */
  public TransferStatus read(long localOffset, long remoteOffset, long size, long uid, TransferOptions options) {
    return path.withDeadline(single(TransferOp.READ, localOffset, remoteOffset, size, uid), options);
  }

  public TransferStatus write(long localOffset, long remoteOffset, long size, long uid) {
    return path.withDeadline(single(TransferOp.WRITE, localOffset, remoteOffset, size, uid), null);
  }

  /** {@link #write} with per-call {@code options} (a deadline; null: the engine's default). */
  public TransferStatus write(long localOffset, long remoteOffset, long size, long uid, TransferOptions options) {
    return path.withDeadline(single(TransferOp.WRITE, localOffset, remoteOffset, size, uid), options);
  }

  public TransferStatus batchRead(long[] localOffsets, long[] remoteOffsets, long[] sizes, long uid) {
    return path.withDeadline(batch(TransferOp.READ, localOffsets, remoteOffsets, sizes, uid), null);
  }

  /** {@link #batchRead} with per-call {@code options}. */
  public TransferStatus batchRead(long[] localOffsets, long[] remoteOffsets, long[] sizes, long uid, TransferOptions options) {
    return path.withDeadline(batch(TransferOp.READ, localOffsets, remoteOffsets, sizes, uid), options);
  }

  public TransferStatus batchWrite(long[] localOffsets, long[] remoteOffsets, long[] sizes, long uid) {
    return path.withDeadline(batch(TransferOp.WRITE, localOffsets, remoteOffsets, sizes, uid), null);
  }

  /** {@link #batchWrite} with per-call {@code options}. */
  public TransferStatus batchWrite(long[] localOffsets, long[] remoteOffsets, long[] sizes, long uid, TransferOptions options) {
    return path.withDeadline(batch(TransferOp.WRITE, localOffsets, remoteOffsets, sizes, uid), options);
  }

  /** Whether the route still works: memory registered, peer connected, engine open. */
  public boolean alive() {
    return deadReason == null && local.region().live() && backend.backend().connected(remote.engineKey());
  }

  @Override
  public synchronized void invalidate(StatusCode code, String reason) {
    if (deadReason != null) return; // the first reason is the one that explains the others
    deadCode = code; // written before the reason, which readers check first
    deadReason = reason;
  }

  private TransferStatus single(byte kind, long localOffset, long remoteOffset, long size, long uid) {
    TransferStatusImpl bad = refuse();
    if (bad != null) return path.counted(bad, kind, RouteMeters.SESSION);
    if (size <= 0) return refused(kind, "size must be positive: " + size);
    if (localOffset < 0 || localOffset > local.desc().size() - size)
      return refused(kind, "localOffset " + localOffset + " + size " + size + " exceeds the session's local memory size "
          + local.desc().size());
    if (remoteOffset < 0 || remoteOffset > remote.size() - size)
      return refused(kind, "remoteOffset " + remoteOffset + " + size " + size + " exceeds the session's remote memory size "
          + remote.size());
    TransferStatusImpl st = new TransferStatusImpl(spinNanos);
    st.initSingle(kind, local.region(), localOffset, peer, remote.id(), remote.accessKey(), remote.address(),
        remoteOffset, size, uid);
    st.remoteData(remoteData, remote.backendData());
    st.meter(kind == TransferOp.READ ? readMeters : writeMeters);
    // XGMI with an idle worker issues the copy from this thread (mori4j.xgmi.caller-poll); every other backend declines
    if (!backend.backend().issueFromCaller(st)) backend.backend().submit(st);
    return st;
  }

  private TransferStatus refused(byte kind, String why) {
    return path.counted(TransferStatusImpl.failed(StatusCode.ERR_INVALID_ARGS, why), kind, RouteMeters.SESSION);
  }

  private TransferStatus batch(byte kind, long[] lo, long[] ro, long[] sizes, long uid) {
    TransferStatusImpl bad = refuse();
    if (bad != null) return path.counted(bad, kind, RouteMeters.SESSION);
    // the engine-level batch path does the same checks and merging; it needs only the pre-resolved pair
    return path.batch(kind, RouteMeters.SESSION, local.desc(), lo, remote, ro, sizes, uid);
  }

  private TransferStatusImpl refuse() {
    String dead = deadReason;
    if (dead != null) return TransferStatusImpl.failed(deadCode, "session is no longer usable: " + dead);
    if (!local.region().live())
      return TransferStatusImpl.failed(StatusCode.ERR_BAD_STATE, "session is no longer usable: its local memory was deregistered");
    return null;
  }
}
