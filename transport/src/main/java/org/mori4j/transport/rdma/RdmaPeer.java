package org.mori4j.transport.rdma;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.TransferOp;

/**
 * A remote engine as the initiator side of the RDMA backend reaches it (the handle the engine keeps in its
 * routes): per local device a {@link Path} of {@code qpPerTransfer} queue pairs on one worker, and whether the
 * peer is lost. Ops are spread over the devices; everything of one path belongs to its worker thread.
 */
final class RdmaPeer {
  /** The queue pairs of one local device to the peer, and the remote regions confirmed through it. */
  static final class Path {
    final String peerKey;
    final RdmaDevice device;
    final RdmaWorker worker;
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
   * handshake that replaces the one before it and the replies then meet the wrong queue pairs.
   */
  private final java.util.concurrent.atomic.AtomicBoolean replacementAsked = new java.util.concurrent.atomic.AtomicBoolean();

  RdmaPeer(String key, Path[] paths) {
    this.key = key;
    this.paths = paths;
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

  /** True the first time only: this connection's replacement is to be asked for now. */
  boolean askReplacement() {
    return replacementAsked.compareAndSet(false, true);
  }

  /** Whether {@code lane} is one of this connection's queue pairs (not one of a connection it replaced). */
  boolean holds(RdmaLane lane) {
    for (Path p : paths) for (RdmaLane l : p.lanes) if (l == lane) return true;
    return false;
  }

  /** Marks the peer lost; true the first time. */
  synchronized boolean lose(String reason) {
    if (lostReason != null) return false;
    lostReason = reason;
    return true;
  }
}
