package org.mori4j.transport.xgmi;

import java.util.ArrayList;
import java.util.List;
import org.mori4j.transport.DrivenWorker;
import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The part of the XGMI worker ({@link XgmiWorker} extends it) that keeps remote regions in step with their owners:
 * it asks a region's owner what it registered before the first op touches it ({@link RegionConfirmer}), takes the
 * answer on the worker's thread (checks the XGMI data, finds the local device of the owner's PCI location) and hands
 * the waiting ops back to be issued or fails them, and revokes a region its owner deregistered or whose peer went,
 * closing its mappings once no copy uses them. It is separate from the worker's rounds and GPU polling because it is
 * a protocol with the owners of its own; as a superclass it adds no indirection on the issue path. Worker thread only,
 * as the worker's own state.
 */
abstract class RegionConfirmingWorker extends DrivenWorker {
  final String engineKey;
  private final RegionConfirmer confirmer;
  private final long[] devicePci;
  /** Peers that have had a region here; worker only. */
  final List<XgmiPeer> knownPeers = new ArrayList<>();
  /** Ops waiting for an owner's answer; worker only. */
  int waitingForOwner;

  RegionConfirmingWorker(String engineKey, RegionConfirmer confirmer, long[] devicePci) {
    super("xgmi-" + engineKey);
    this.engineKey = engineKey;
    this.confirmer = confirmer;
    this.devicePci = devicePci;
  }

  /** Issues {@code op} again once its region was answered, behind the ops already waiting for an event slot. */
  abstract void retry(TransferOp op);

  /** Closes the IPC mappings of {@code r} (it is revoked and no copy uses it any more). */
  abstract void closeMappings(RemoteRegion r);

  final void askOwner(RemoteRegion r) {
    RegionConfirmer.Answer answer = new RegionConfirmer.Answer() {
      @Override
      public void registered(long address, long size, byte[] xgmiData) {
        execute(() -> confirmed(r, address, size, xgmiData, null, null));
      }

      @Override
      public void refused(TransportError error, String reason) {
        execute(() -> confirmed(r, 0, 0, null, error, reason));
      }
    };
    try {
      confirmer.confirm(r.peer.key, r.id, r.accessKey, answer);
    } catch (RuntimeException e) {
      answer.refused(TransportError.TRANSPORT, "cannot ask engine '" + r.peer.key + "' about memory id " + r.id + ": " + e.getMessage());
    }
  }

  /** The owner answered about {@code r} (worker thread, or the closer once the worker is gone). */
  private void confirmed(RemoteRegion r, long address, long size, byte[] data, TransportError error, String reason) {
    if (r.state != RemoteRegion.State.CONFIRMING) return; // revoked meanwhile: its ops were failed then
    List<TransferOp> waiting = new ArrayList<>(r.waiting);
    r.waiting.clear();
    waitingForOwner -= waiting.size();
    if (error == null && !closing) {
      String bad = XgmiMemoryData.check(data);
      if (bad != null) {
        error = TransportError.INVALID_ARGS;
        reason = "engine '" + r.peer.key + "' has no usable XGMI data for memory id " + r.id + " (" + bad + ")";
      } else if (size <= 0) {
        error = TransportError.INVALID_ARGS;
        reason = "engine '" + r.peer.key + "' reported memory id " + r.id + " with size " + size;
      }
    }
    if (closing && error == null) {
      error = TransportError.BAD_STATE;
      reason = "XGMI backend of engine '" + engineKey + "' is closed";
    }
    if (error != null) {
      r.state = RemoteRegion.State.REVOKED;
      r.peer.forget(r);
      for (TransferOp op : waiting) {
        if (op.remoteAccessKey() == r.accessKey || closing) op.transferFailed(error, reason);
        else retry(op); // another key for the same id: its own question to the owner
      }
      return;
    }
    r.confirmed(address, size, data);
    r.localDevice = r.peer.sameProcess ? r.ownerDevice : localOrdinal(r.pciLocation);
    for (TransferOp op : waiting) retry(op);
  }

  private int localOrdinal(long pci) {
    if (pci < 0) return -1;
    for (int d = 0; d < devicePci.length; d++) if (devicePci[d] == pci) return d;
    return -1;
  }

  /** Closes a revoked region's mappings and tells whoever waits for that. */
  final void release(RemoteRegion r) {
    closeMappings(r);
    Runnable done = r.onReleased;
    r.onReleased = null;
    if (done != null) runSafely(done);
  }

  /** Worker task: {@code r}'s owner deregistered it (or its peer went): no new op reaches it, its mappings close once idle. */
  final void revoke(RemoteRegion r, TransportError error, String reason, Runnable done) {
    if (r.state == RemoteRegion.State.REVOKED) {
      if (done != null) runSafely(done);
      return;
    }
    boolean confirming = r.state == RemoteRegion.State.CONFIRMING;
    r.state = RemoteRegion.State.REVOKED;
    r.peer.forget(r);
    if (confirming) {
      waitingForOwner -= r.waiting.size();
      for (TransferOp op : r.waiting) op.transferFailed(error, reason);
      r.waiting.clear();
    }
    r.onReleased = done;
    if (r.inFlight == 0) release(r);
  }

  /** Worker task: every region of {@code peer}. */
  final void revokeAll(XgmiPeer peer, TransportError error, String reason) {
    for (RemoteRegion r : new ArrayList<>(peer.regions.values())) revoke(r, error, reason, null);
  }
}
