package org.mori4j.transport.xgmi;

import org.mori4j.natives.gpu.GpuRuntime;

/**
 * Which pairs of this process's devices can reach each other's memory and which of them have had peer access
 * enabled (worker thread enables; a submitting thread holding the worker's turn only reads). A region owned by
 * another device of the same process is copied through peer access, which is enabled once per pair on first use.
 */
final class PeerAccess {
  private final GpuRuntime gpu;
  private final boolean[][] peerAccess;
  private final boolean[][] peerEnabled;

  PeerAccess(GpuRuntime gpu, boolean[][] peerAccess) {
    this.gpu = gpu;
    this.peerAccess = peerAccess;
    this.peerEnabled = new boolean[peerAccess.length][peerAccess.length];
  }

  /**
   * Enables peer access from {@code device} to {@code peer} (a device of this process) once; null when it is on,
   * else why it cannot be.
   */
  String enablePeer(int device, int peer) {
    if (peerEnabled[device][peer]) return null;
    if (!peerAccess[device][peer]) return "devices " + device + " and " + peer + " have no peer access";
    try {
      gpu.enablePeerAccess(device, peer);
      if (peerAccess[peer][device]) gpu.enablePeerAccess(peer, device);
    } catch (RuntimeException e) {
      return "cannot enable peer access between devices " + device + " and " + peer + ": " + e.getMessage();
    }
    peerEnabled[device][peer] = true;
    return null;
  }

  /** Whether peer access from {@code device} to {@code peer} was enabled already. */
  boolean peerEnabled(int device, int peer) {
    return device >= 0 && device < peerEnabled.length && peerEnabled[device][peer];
  }

  /** Devices of this process. */
  int deviceCount() {
    return peerEnabled.length;
  }
}
