package org.mori4j.shmem;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.IpcMapping;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How this PE reaches each other PE's GPU memory directly, decided once at init from every PE's
 * {@link PeerInfo}: not at all (another host, {@code MORI_DISABLE_P2P}, a GPU this process cannot see or
 * reach), by the peer's own address (a PE of this same process: unified addressing, peer access enabled when
 * the GPUs differ; CUDA refuses to open a handle in the exporting process), or by opening the peer's IPC handle
 * (another process of this host, on the same GPU or on one joined by NVLink/XGMI with peer access enabled).
 * {@link #map} applies that to one exported allocation, and the caller owns the mappings it returns.
 *
 * <p>Peer access, once enabled, stays enabled for the process: it is a property of the device's context,
 * which other users (the engine's XGMI backend) share.
 */
final class PeerPaths {
  private static final Logger LOG = LoggerFactory.getLogger(PeerPaths.class);

  enum Kind { SELF, NONE, SAME_PROCESS, IPC }

  private final GpuRuntime gpu;
  private final int device;
  private final int rank;
  private final Kind[] kinds;
  private final String[] reasons;

  PeerPaths(GpuRuntime gpu, int device, PeerInfo[] peers, int rank, boolean disableP2p) {
    this.gpu = gpu;
    this.device = device;
    this.rank = rank;
    this.kinds = new Kind[peers.length];
    this.reasons = new String[peers.length];
    PeerInfo me = peers[rank];
    for (int p = 0; p < peers.length; p++) {
      PeerInfo them = peers[p];
      if (p == rank) {
        kinds[p] = Kind.SELF;
        reasons[p] = "this PE";
      } else if (disableP2p) {
        none(p, "MORI_DISABLE_P2P is on");
      } else if (!them.host().equals(me.host())) {
        none(p, "on another host");
      } else {
        int theirDevice = them.pciBusId().equals(me.pciBusId()) ? device : visibleDevice(them.pciBusId());
        if (theirDevice < 0) {
          none(p, "its GPU " + them.pciBusId() + " is not visible to this process");
        } else if (theirDevice != device && !gpu.canAccessPeer(device, theirDevice)) {
          none(p, "GPU " + device + " cannot access GPU " + theirDevice + " (" + them.pciBusId() + ") directly");
        } else {
          if (theirDevice != device) gpu.enablePeerAccess(device, theirDevice);
          boolean sameProcess = them.pid() == me.pid();
          kinds[p] = sameProcess ? Kind.SAME_PROCESS : Kind.IPC;
          reasons[p] = (sameProcess ? "same process" : "IPC") + (theirDevice == device ? ", same GPU " + device : ", GPU " + theirDevice + " by peer access");
        }
      }
    }
  }

  private void none(int p, String why) {
    kinds[p] = Kind.NONE;
    reasons[p] = "no direct path: " + why;
  }

  private int visibleDevice(String pciBusId) {
    for (int d = 0; d < gpu.deviceCount(); d++) if (gpu.pciBusId(d).equalsIgnoreCase(pciBusId)) return d;
    return -1;
  }

  Kind kind(int pe) {
    return kinds[pe];
  }

  String describe(int pe) {
    return "PE " + rank + " -> PE " + pe + ": " + reasons[pe];
  }

  /**
   * Where each PE's part of one exported allocation is in this process: {@code addresses[p]} (the PE's own
   * address) plus {@code offsets[p]} into the allocation whose IPC handle is {@code handles[p]}; 0 where there
   * is no path. Opened mappings are added to {@code owned}; on failure the ones opened here are closed.
   */
  long[] map(long[] addresses, long[] offsets, byte[][] handles, List<IpcMapping> owned) {
    long[] out = new long[kinds.length];
    List<IpcMapping> opened = new ArrayList<>();
    try {
      for (int p = 0; p < kinds.length; p++) {
        out[p] = switch (kinds[p]) {
          case SELF, SAME_PROCESS -> addresses[p];
          case NONE -> 0;
          case IPC -> {
            IpcMapping m = gpu.openIpcHandle(device, handles[p]);
            opened.add(m);
            yield m.address() + offsets[p];
          }
        };
      }
    } catch (RuntimeException e) {
      for (IpcMapping m : opened) m.close();
      throw e;
    }
    owned.addAll(opened);
    return out;
  }

  @Override
  public String toString() {
    return Arrays.toString(reasons);
  }

  void log() {
    for (int p = 0; p < kinds.length; p++) if (p != rank) LOG.info("shmem {}", describe(p));
  }
}
