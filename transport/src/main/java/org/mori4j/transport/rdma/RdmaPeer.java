package org.mori4j.transport.rdma;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * A remote engine as the initiator side of the RDMA backend reaches it (the handle the engine keeps in its
 * routes): per local device a {@link Path} of {@code qpPerTransfer} queue pairs on one worker, and whether the
 * peer is lost. Ops are spread over the devices; everything of one path belongs to its worker thread. When a queue
 * pair leaves service the connection is replaced: from the moment that is asked until the new connection is up (or
 * the wait is given up) new ops are held here, then sent on the new connection in the order they came; the handle
 * the engine's routes hold keeps working, as it forwards to its successor.
 */
final class RdmaPeer {
  /** The queue pairs of one local device to the peer, and the remote regions confirmed through it. */
  static final class Path {
    final String peerKey;
    final RdmaDevice device;
    final RdmaWorker worker;
    /** The connection this path belongs to (set by its constructor, before any worker sees the path). */
    RdmaPeer owner;
    volatile RdmaLane[] lanes;
    // worker thread only
    final Map<Long, RemoteRdmaRegion> regions = new HashMap<>();
    int nextLane;

    Path(String peerKey, RdmaDevice device, RdmaWorker worker, RdmaLane[] lanes) {
      this.peerKey = peerKey;
      this.device = device;
      this.worker = worker;
      this.lanes = lanes;
    }
  }

  /** A region of the peer that this path confirmed with its owner (worker thread only). */
  static final class RemoteRdmaRegion {
    final long id;
    final long accessKey;
    boolean confirming = true;
    /** Its owner's revocation arrived (or the owner said it no longer has it): a remote access error on it is NOT_FOUND. */
    boolean revoked;
    final List<TransferOp> waiting = new ArrayList<>(2);
    long address;
    long size;
    byte[] data;

    RemoteRdmaRegion(long id, long accessKey) {
      this.id = id;
      this.accessKey = accessKey;
    }
  }

  final String key;
  final Path[] paths;
  private final AtomicInteger next = new AtomicInteger();
  private volatile String lostReason;
  /**
   * Set by the first queue pair of this connection that leaves service: the others (an access error on a striped
   * transfer breaks every queue pair it used) must not ask the engine to connect again, as each request starts a
   * handshake that replaces the one before it and the replies then meet the wrong queue pairs. From then on new ops
   * are held here until the new connection ({@link #successor}) is up.
   */
  private volatile boolean replacing;
  /** The connection that replaced this one; ops that still name this one go there. */
  private volatile RdmaPeer successor;
  /** Ops held during the replacement, in submission order (guarded by this). */
  private final ArrayList<TransferOp> held = new ArrayList<>();
  /** How many of {@link #held} a worker handed back: they were submitted before the others and go first. */
  private int handedBack;

  RdmaPeer(String key, Path[] paths) {
    this.key = key;
    this.paths = paths;
    for (Path p : paths) p.owner = this;
  }

  /**
   * Sends {@code op} on this connection, on the one that replaced it, or holds it while a replacement is under way;
   * fails it if the peer is lost. {@code handedBack}: a worker returns an op it took before the replacement began
   * and never posted (it keeps its place ahead of ops held since).
   */
  void submit(TransferOp op, boolean handedBack) {
    RdmaPeer p = this;
    while (true) {
      RdmaPeer to = p.holdOrRoute(op, handedBack);
      if (to == null) return;
      if (to != p) {
        p = to;
        continue;
      }
      if (!p.alive()) {
        op.transferFailed(TransportError.PEER_LOST, "engine '" + p.key + "' lost: " + p.lostReason());
        return;
      }
      Path path = p.nextPath();
      op.lane = path;
      path.worker.submit(op);
      return;
    }
  }

  /** Null: held. This: send here (or fail: lost). Another: the successor to try. */
  private synchronized RdmaPeer holdOrRoute(TransferOp op, boolean fromWorker) {
    if (successor != null) return successor;
    if (lostReason != null || !replacing) return this;
    if (fromWorker) held.add(handedBack++, op);
    else held.add(op);
    return null;
  }

  /**
   * This connection is replaced by {@code next}: the held ops go to it in order, under this lock, so that an op
   * that names this connection and arrives meanwhile (it routes to {@code next} once the lock is free) cannot pass
   * them.
   */
  synchronized void replaceWith(RdmaPeer next) {
    successor = next;
    List<TransferOp> out = new ArrayList<>(held);
    held.clear();
    handedBack = 0;
    for (TransferOp op : out) next.submit(op, false);
  }

  /** The connection now in service for this peer's ops: this one, or the last that replaced it. */
  RdmaPeer current() {
    RdmaPeer p = this;
    for (RdmaPeer s = p.successor; s != null; s = p.successor) p = s;
    return p;
  }

  /** Its replacement was asked for or is done: ops that reach a worker through it are handed back ({@link #submit}). */
  boolean retiring() {
    return replacing || successor != null;
  }

  /** Ops held now (tests, diagnostics). */
  synchronized int held() {
    return held.size();
  }

  /** The path for the next op (devices in turn). */
  Path nextPath() {
    return paths.length == 1 ? paths[0] : paths[Math.floorMod(next.getAndIncrement(), paths.length)];
  }

  boolean alive() {
    return lostReason == null;
  }

  String lostReason() {
    return lostReason;
  }

  /** True the first time only: this connection's replacement is to be asked for now; new ops are held from now on. */
  synchronized boolean askReplacement() {
    if (replacing || lostReason != null) return false;
    replacing = true;
    return true;
  }

  /** Whether the replacement of this connection is still awaited (asked, no successor, not lost). */
  boolean awaitingReplacement() {
    return replacing && successor == null && lostReason == null;
  }

  /** Whether {@code lane} is one of this connection's queue pairs (not one of a connection it replaced). */
  boolean holds(RdmaLane lane) {
    for (Path p : paths) for (RdmaLane l : p.lanes) if (l == lane) return true;
    return false;
  }

  /** Marks the peer lost; true the first time. The ops held for a replacement fail with PEER_LOST. */
  boolean lose(String reason) {
    return lose(TransportError.PEER_LOST, reason);
  }

  /** Marks the peer lost; true the first time. The ops held for a replacement fail with {@code error}. */
  boolean lose(TransportError error, String reason) {
    List<TransferOp> failed;
    synchronized (this) {
      if (lostReason != null) return false;
      lostReason = reason;
      failed = new ArrayList<>(held);
      held.clear();
      handedBack = 0;
    }
    for (TransferOp op : failed)
      op.transferFailed(error, "engine '" + key + "': its RDMA connection was being replaced when it ended: " + reason);
    return true;
  }
}
