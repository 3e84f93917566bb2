package org.mori4j.transport.rdma;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * What a remote access error ({@code IBV_WC_REM_ACCESS_ERR}) means for the ops it ends. The NIC refuses a work request
 * whose rkey no longer names a memory region, which is what a write racing its target's deregistration meets: the
 * owner kills the region and tells its importers to forget it, but a request already posted arrives before that
 * news. A TCP target reports such a transfer as {@code NOT_FOUND}; so does this backend, once it knows the region is
 * gone: at once when the owner's revocation already arrived, otherwise after asking the owner again (the same
 * confirmation every first transfer to a region makes). An owner that still has the region registered as confirmed
 * means the refusal was something else (a bad rkey, a range the owner's NIC rejects): that op keeps
 * {@code RDMA_OP} with the device's words. The queue pair leaves service either way, so every op posted or waiting on
 * it is resolved the same way, per region. Worker thread only.
 */
final class AccessErrors {
  private final RdmaWorker worker;
  private final RegionConfirmer confirmer;
  /** Regions being asked about again, with the ops whose outcome waits for the answer. */
  private final Map<RdmaPeer.RemoteRdmaRegion, List<TransferOp>> asking = new IdentityHashMap<>();

  AccessErrors(RdmaWorker worker, RegionConfirmer confirmer) {
    this.worker = worker;
    this.confirmer = confirmer;
  }

  /**
   * {@code op} ends because a queue pair of its path left service after a remote access error ({@code why}); {@code r}
   * is the owner's registration it was checked against, null when it has none (it then fails with {@code RDMA_OP}).
   */
  void failed(TransferOp op, String peerKey, RdmaPeer.RemoteRdmaRegion r, String why) {
    if (r == null) {
      op.transferFailed(TransportError.RDMA_OP, why);
      return;
    }
    if (r.revoked) {
      op.transferFailed(TransportError.NOT_FOUND, deregistered(r, peerKey, why));
      return;
    }
    List<TransferOp> ops = asking.get(r);
    if (ops == null) {
      ops = new ArrayList<>(2);
      asking.put(r, ops);
      confirmer.confirm(peerKey, r.id, r.accessKey, new RegionConfirmer.Answer() {
        @Override
        public void registered(long address, long size, byte[] data) {
          boolean same = address == r.address && size == r.size && Arrays.equals(data, r.data);
          worker.execute(() -> answered(r, peerKey, why, same ? null : TransportError.NOT_FOUND, same ? null
              : "memory id " + r.id + " of engine '" + peerKey + "' was registered again under other keys since it was confirmed"));
        }

        @Override
        public void refused(TransportError error, String reason) {
          worker.execute(() -> answered(r, peerKey, why, error, reason));
        }
      });
    }
    ops.add(op);
    worker.inFlight++;
  }

  /**
   * The owner answered: {@code error} null means it still holds the region as confirmed. {@code NOT_FOUND} (or keys
   * that changed) means it was deregistered; any other refusal leaves the device's error standing, with the reason.
   */
  private void answered(RdmaPeer.RemoteRdmaRegion r, String peerKey, String why, TransportError error, String reason) {
    List<TransferOp> ops = asking.remove(r);
    if (ops == null) return; // failed with everything else while asking
    worker.inFlight -= ops.size();
    if (error == TransportError.NOT_FOUND || r.revoked) {
      r.revoked = true;
      for (TransferOp op : ops) op.transferFailed(TransportError.NOT_FOUND, deregistered(r, peerKey, why) + (reason != null ? ": " + reason : ""));
    } else {
      String detail = error == null ? why + " (the owner still has memory id " + r.id + " registered as confirmed)"
          : why + " (asking the owner about memory id " + r.id + " again failed: " + error + ": " + reason + ")";
      for (TransferOp op : ops) op.transferFailed(TransportError.RDMA_OP, detail);
    }
  }

  private static String deregistered(RdmaPeer.RemoteRdmaRegion r, String peerKey, String why) {
    return "memory id " + r.id + " of engine '" + peerKey + "' was deregistered while the transfer was in flight (" + why + ")";
  }

  /** Ends every op still waiting for an answer (the worker closes or its queue failed). */
  void failAll(TransportError error, String reason) {
    List<List<TransferOp>> all = new ArrayList<>(asking.values());
    asking.clear();
    for (List<TransferOp> ops : all) for (TransferOp op : ops) op.transferFailed(error, reason);
  }
}
