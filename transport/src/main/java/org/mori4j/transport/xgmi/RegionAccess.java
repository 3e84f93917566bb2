package org.mori4j.transport.xgmi;

import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.IpcMapping;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the XGMI worker reaches a confirmed remote region from one of its devices (worker thread only): the
 * owner's own address for an engine of this process (peer access enabled on first use), otherwise the
 * region's IPC handle opened once per (region, device) and kept on the region until it is revoked, with the
 * mapping's size checked against what the owner registered. When the pair cannot be reached at all (a genuine
 * handle that does not open here, peer access the driver refuses), the op is handed to the engine for another
 * backend and the peer is marked so that the engine routes the pair elsewhere from then on. Counts the
 * mappings it holds, per backend and per process, for the leak checks.
 */
final class RegionAccess {
  private static final Logger log = LoggerFactory.getLogger(RegionAccess.class);
  /** IPC mappings open in every backend of the process. */
  static final AtomicInteger MAPPINGS_IN_PROCESS = new AtomicInteger();

  private final String name;
  private final GpuRuntime gpu;
  private final PeerAccess peers;
  /** The engine: where ops go that XGMI finds it cannot carry. */
  private final BackendListener listener;
  private final AtomicInteger openMappings = new AtomicInteger();

  RegionAccess(String name, GpuRuntime gpu, PeerAccess peers, BackendListener listener) {
    this.name = name;
    this.gpu = gpu;
    this.peers = peers;
    this.listener = listener;
  }

  /** IPC mappings this backend holds now (any thread). */
  int openMappings() {
    return openMappings.get();
  }

  /** Closes the mappings of {@code r} (revoked, nothing of it on the GPU). */
  void closeMappings(RemoteRegion r) {
    int closedNow = r.closeMappings();
    openMappings.addAndGet(-closedNow);
    MAPPINGS_IN_PROCESS.addAndGet(-closedNow);
  }

  /**
   * The remote region's base address usable from {@code device}, opening its IPC handle on first use; 0 when
   * {@code op} was failed or handed to another backend (said why).
   */
  long base(TransferOp op, RemoteRegion r, int device) {
    if (r.peer.sameProcess) {
      if (r.localDevice == device) return r.address;
      if (r.localDevice < 0 || r.localDevice >= peers.deviceCount()) {
        op.transferFailed(TransportError.GPU_OP, "device " + r.localDevice + " of " + r.describe() + " is not a device of this process");
        return 0;
      }
      String refused = peers.enablePeer(device, r.localDevice);
      if (refused == null) return r.address;
      fallBack(op, r, device, true, refused);
      return 0;
    }
    IpcMapping m = r.mapping(device);
    if (m == null) {
      String failed = r.openFailure(device);
      if (failed != null) {
        fallBack(op, r, device, false, failed);
        return 0;
      }
      if (!r.hasHandle) {
        op.transferFailed(TransportError.INVALID_ARGS, r.describe() + " cannot be exported to another process (its owner has no IPC handle for it)");
        return 0;
      }
      try {
        m = gpu.openIpcHandle(device, XgmiMemoryData.decode(r.data).ipcHandle());
      } catch (RuntimeException e) {
        // the handle is the one its owner confirmed, so this is the pair, not the descriptor: another backend may carry it
        String why = "cannot open the IPC handle of " + r.describe() + " on device " + device + ": " + e.getMessage();
        r.keepOpenFailure(device, why);
        fallBack(op, r, device, false, why);
        return 0;
      }
      if (m.size() < r.offsetInAllocation + r.size) {
        m.close();
        String why = "the IPC mapping of " + r.describe() + " has " + m.size() + " bytes, less than its offset " + r.offsetInAllocation
            + " + size " + r.size + " (forged or stale descriptor)";
        r.keepOpenFailure(device, why);
        op.transferFailed(TransportError.INVALID_ARGS, why);
        return 0;
      }
      r.keepMapping(device, m);
      openMappings.incrementAndGet();
      MAPPINGS_IN_PROCESS.incrementAndGet();
    }
    return m.address() + r.offsetInAllocation;
  }

  /**
   * {@link #base} when it needs nothing done (a submitting thread's issue: no handle is opened, no peer access
   * enabled, nothing fails): the owner's address on the same device or on one peer access is on for, an IPC
   * mapping already open; 0 otherwise.
   */
  long readyBase(RemoteRegion r, int device) {
    if (r.peer.sameProcess) {
      return r.localDevice == device || r.localDevice >= 0 && r.localDevice < peers.deviceCount() && peers.peerEnabled(device, r.localDevice)
          ? r.address : 0;
    }
    IpcMapping m = r.mapping(device);
    return m == null ? 0 : m.address() + r.offsetInAllocation;
  }

  /**
   * XGMI cannot reach {@code r}'s memory from {@code device} ({@code why}): later transfers with its engine from
   * that device are routed to another backend (canServe says no), and {@code op} is handed to one now when the
   * engine has one that reaches the peer; otherwise it fails.
   */
  private void fallBack(TransferOp op, RemoteRegion r, int device, boolean peerAccess, String why) {
    if (r.peer.markUnusableFrom(device, peerAccess, why))
      log.warn("{}: XGMI cannot reach the memory of engine {} from device {} ({}); transfers between them go through the engine's next backend"
          + " (TCP) from now on", name, r.peer.key, device, why);
    if (!listener.reroute(op, why))
      op.transferFailed(TransportError.GPU_OP, "XGMI " + why + ", and no other backend of this engine reaches engine '" + r.peer.key + "'");
  }
}
