package org.mori4j.transport.xgmi;

import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.ServeRefusal;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which (local region, remote region) pairs of a connected, live peer the XGMI backend serves, from what the remote
 * descriptor's XGMI data says and what this process's devices can reach: the same device, a device with peer access,
 * or (another process) a device whose memory can be exported through an IPC handle. Pairs left to the engine's other
 * backends for a reason worth knowing are logged once per peer and reason. Split out of {@link XgmiBackend}; any thread.
 */
final class XgmiPairs {
  private static final Logger log = LoggerFactory.getLogger(XgmiBackend.class);
  private static final int NOTE_NO_DATA = 1, NOTE_NO_HANDLE = 2, NOTE_NO_PEER_ACCESS = 4;

  private final String engineKey;
  private final ConcurrentHashMap<String, Integer> notes = new ConcurrentHashMap<>();
  /** PCI location of each device of this process, and which pairs of them have peer access (set once by start). */
  private volatile long[] devicePci = new long[0];
  private volatile boolean[][] peerAccess = new boolean[0][0];

  XgmiPairs(String engineKey) {
    this.engineKey = engineKey;
  }

  /** The devices of this process, as the backend's start found them. */
  void devices(long[] pci, boolean[][] access) {
    peerAccess = access;
    devicePci = pci;
  }

  /** Whether XGMI serves {@code local} with remote memory described by {@code remoteData} of the live peer {@code p}. */
  boolean serves(LocalRegion local, XgmiPeer p, byte[] remoteData) {
    boolean[][] peerAccess = this.peerAccess;
    if (XgmiMemoryData.check(remoteData) != null) {
      note(p, NOTE_NO_DATA, "remote GPU memory without (usable) XGMI data: " + XgmiMemoryData.check(remoteData)
          + " (registered before its engine had an XGMI backend?)");
      return false;
    }
    int localDevice = local.deviceId();
    if (p.unusableFrom(localDevice)) return false; // the worker found it out and said so in the log
    int remoteDevice;
    if (p.sameProcess) {
      remoteDevice = XgmiMemoryData.device(remoteData);
    } else {
      if (!XgmiMemoryData.hasHandle(remoteData)) {
        note(p, NOTE_NO_HANDLE, "remote GPU memory that its driver cannot export to other processes (no IPC handle)");
        return false;
      }
      remoteDevice = localOrdinal(XgmiMemoryData.pciLocation(remoteData));
      if (remoteDevice < 0) return true; // a device this process does not see: opening the handle decides
    }
    if (remoteDevice == localDevice) return true;
    if (remoteDevice >= peerAccess.length || localDevice >= peerAccess.length || !peerAccess[localDevice][remoteDevice]) {
      note(p, NOTE_NO_PEER_ACCESS, "GPU memory on device " + localDevice + " and remote memory on device " + remoteDevice
          + ", which have no peer access");
      return false;
    }
    return true;
  }

  /** Why {@link #serves} says no, or null when it says yes. */
  ServeRefusal refusal(LocalRegion local, XgmiPeer p, byte[] remoteData) {
    boolean[][] peerAccess = this.peerAccess;
    String bad = XgmiMemoryData.check(remoteData);
    if (bad != null) return new ServeRefusal(ServeRefusal.Reason.NOT_REGISTERED, "the remote GPU memory has no usable XGMI data: " + bad
        + " (registered before its engine had an XGMI backend?)");
    int localDevice = local.deviceId();
    if (p.unusableFrom(localDevice)) {
      ServeRefusal why = p.unusableWhy(localDevice);
      return why != null ? why : new ServeRefusal(ServeRefusal.Reason.OTHER, "XGMI found it cannot reach engine '" + p.key + "' from device " + localDevice);
    }
    int remoteDevice;
    if (p.sameProcess) {
      remoteDevice = XgmiMemoryData.device(remoteData);
    } else {
      if (!XgmiMemoryData.hasHandle(remoteData))
        return new ServeRefusal(ServeRefusal.Reason.IPC_HANDLE_NOT_OPENED, "the remote GPU memory has no IPC handle (its driver cannot export"
            + " the allocation to other processes)");
      remoteDevice = localOrdinal(XgmiMemoryData.pciLocation(remoteData));
      if (remoteDevice < 0) return null;
    }
    if (remoteDevice == localDevice) return null;
    if (remoteDevice >= peerAccess.length || localDevice >= peerAccess.length || !peerAccess[localDevice][remoteDevice])
      return new ServeRefusal(ServeRefusal.Reason.PEER_ACCESS_REFUSED, "device " + localDevice + " has no peer access to device " + remoteDevice);
    return null;
  }

  private int localOrdinal(long pci) {
    if (pci < 0) return -1;
    long[] known = devicePci;
    for (int d = 0; d < known.length; d++) if (known[d] == pci) return d;
    return -1;
  }

  /** Logs once per peer and kind why a pair is left to the engine's other backends. */
  private void note(XgmiPeer p, int kind, String what) {
    Integer seen = notes.get(p.key);
    if (seen != null && (seen & kind) != 0) return;
    notes.merge(p.key, kind, (a, b) -> a | b);
    log.warn("XGMI of engine {} cannot serve transfers with engine {} for {}; they go through the engine's next backend (TCP)",
        engineKey, p.key, what);
  }
}
