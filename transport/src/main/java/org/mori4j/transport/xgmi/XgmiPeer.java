package org.mori4j.transport.xgmi;

import java.util.HashMap;

/**
 * A remote engine the XGMI backend connected to: on this host (the handshake checked), maybe in this very
 * process, in which case its regions are addressed directly instead of through IPC handles. The handle the
 * engine puts into every op for this peer. {@link #regions} belongs to the worker thread.
 */
final class XgmiPeer {
  final String key;
  final XgmiHost host;
  final boolean sameProcess;
  private volatile String lostReason;
  /** Local devices (bit per ordinal) from which XGMI found it cannot reach this peer's memory; read by canServe on any thread. */
  private volatile long unusableFrom;
  /** Why, per device in {@link #unusableFrom}; written before the bit, read by the path explanation. */
  private final java.util.concurrent.ConcurrentHashMap<Integer, org.mori4j.transport.ServeRefusal> unusableWhy = new java.util.concurrent.ConcurrentHashMap<>();
  /** Remote regions by id (worker thread only). */
  final HashMap<Long, RemoteRegion> regions = new HashMap<>();
  /** The region of the last lookup: a session or a benchmark hits it every time, without boxing the id. */
  private RemoteRegion last;

  XgmiPeer(String key, XgmiHost host, boolean sameProcess) {
    this.key = key;
    this.host = host;
    this.sameProcess = sameProcess;
  }

  /** The region with {@code id}, or null (worker thread). */
  RemoteRegion region(long id) {
    RemoteRegion r = last;
    if (r != null && r.id == id) return r;
    r = regions.get(id);
    if (r != null) last = r;
    return r;
  }

  /** Drops {@code r} from the lookup (worker thread). */
  void forget(RemoteRegion r) {
    regions.remove(r.id, r);
    if (last == r) last = null;
  }

  /** Whether XGMI found it cannot reach this peer from local {@code device} (later transfers take another backend). */
  boolean unusableFrom(int device) {
    return device >= 0 && device < 64 && (unusableFrom & (1L << device)) != 0;
  }

  /**
   * Records that XGMI cannot reach this peer from local {@code device}, because peer access was refused
   * ({@code peerAccess}) or the remote memory's IPC handle did not open, and why; true the first time (worker thread).
   */
  boolean markUnusableFrom(int device, boolean peerAccess, String why) {
    if (device < 0 || device >= 64 || unusableFrom(device)) return false;
    unusableWhy.put(device, new org.mori4j.transport.ServeRefusal(peerAccess ? org.mori4j.transport.ServeRefusal.Reason.PEER_ACCESS_REFUSED
        : org.mori4j.transport.ServeRefusal.Reason.IPC_HANDLE_NOT_OPENED, why));
    unusableFrom |= 1L << device;
    return true;
  }

  /** Why XGMI cannot reach this peer from {@code device}, or null (any thread). */
  org.mori4j.transport.ServeRefusal unusableWhy(int device) {
    return unusableWhy.get(device);
  }

  boolean alive() {
    return lostReason == null;
  }

  String lostReason() {
    return lostReason;
  }

  void lose(String reason) {
    if (lostReason == null) lostReason = reason == null ? "disconnected" : reason;
  }

  @Override
  public String toString() {
    return "XgmiPeer[" + key + (sameProcess ? ", same process" : ", " + host) + (alive() ? "" : ", lost: " + lostReason) + "]";
  }
}
