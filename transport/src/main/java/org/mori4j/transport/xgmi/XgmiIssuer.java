package org.mori4j.transport.xgmi;

import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The last step of an XGMI op before the GPU, for whoever holds the worker's turn (see {@link XgmiWorker}): checks it
 * against what the remote region's owner confirmed (access key, address, XGMI data, the batch limit, every block
 * unless the engine vouched for them) and hands it to {@link DeviceTransfers}. The worker's form fails a bad op with
 * its message; the submitting thread's form ({@link #issueReady}) only goes ahead when there is nothing to say and
 * nothing to create, and otherwise leaves the op untouched to the worker.
 */
final class XgmiIssuer {
  private final XgmiSettings settings;
  private final RegionAccess access;
  private final DeviceTransfers transfers;

  XgmiIssuer(XgmiSettings settings, RegionAccess access, DeviceTransfers transfers) {
    this.settings = settings;
    this.access = access;
    this.transfers = transfers;
  }

  /** Checks {@code op} against the owner's answer and puts it on the GPU; false when no event slot is free. */
  boolean issue(TransferOp op, RemoteRegion r) {
    int device = op.local().deviceId();
    long remoteBase = prepare(op, r, device);
    if (remoteBase == 0) return true; // failed, said why
    int issued = transfers.issue(op, r, device, remoteBase, preparedMin, preparedMax);
    if (issued == DeviceTransfers.NO_SLOT) return false;
    if (issued == DeviceTransfers.ISSUED) r.inFlight++;
    return true;
  }

  /** The smallest and largest block of the op {@link #prepare} last found good. */
  long preparedMin, preparedMax;

  /**
   * Checks {@code op} against the owner's answer ({@code r}) and finds the remote base usable from {@code device}
   * (opening its mapping or enabling peer access on first use): that base, with the op's block bounds in
   * {@link #preparedMin}/{@link #preparedMax}, or 0 when the op was failed or handed to another backend (said why).
   */
  long prepare(TransferOp op, RemoteRegion r, int device) {
    // the region's description is built only for a message: this runs once per op on the way to the GPU
    if (op.remoteAccessKey() != r.accessKey) {
      op.transferFailed(TransportError.NOT_FOUND, r.describe() + " is not registered under the descriptor's access key (forged or stale descriptor)");
      return 0;
    }
    if (op.remoteAddress() != r.address) {
      op.transferFailed(TransportError.INVALID_ARGS, "the descriptor says " + r.describe() + " is at 0x" + Long.toHexString(op.remoteAddress())
          + " but its owner registered it at 0x" + Long.toHexString(r.address) + " (forged or stale descriptor)");
      return 0;
    }
    if (!r.sameData(op.remoteData())) {
      op.transferFailed(TransportError.INVALID_ARGS, "the descriptor's XGMI data (IPC handle, allocation offset) for " + r.describe()
          + " differs from what its owner registered (forged or stale descriptor)");
      return 0;
    }
    int n = op.blockCount();
    if (n > settings.maxBatchBlocks()) {
      op.transferFailed(TransportError.INVALID_ARGS, "batch of " + n + " blocks exceeds the XGMI limit of " + settings.maxBatchBlocks());
      return 0;
    }
    LocalRegion local = op.local();
    long maxBlock, minBlock;
    if (op.blocksChecked(local.size(), r.size)) {
      // the engine checked every block against sizes within what is registered on both sides: two compares, not a pass
      minBlock = op.minBlockSize();
      maxBlock = op.maxBlockSize();
    } else {
      maxBlock = 0;
      minBlock = Long.MAX_VALUE;
      for (int i = 0; i < n; i++) {
        long lo = op.localOffset(i), ro = op.remoteOffset(i), sz = op.blockSize(i);
        if (sz <= 0 || ro < 0 || ro > r.size - sz) {
          op.transferFailed(TransportError.INVALID_ARGS, "block " + i + ": remote offset " + ro + " + size " + sz + " exceeds the " + r.size
              + " bytes its owner registered as " + r.describe());
          return 0;
        }
        if (!local.contains(lo, sz)) {
          op.transferFailed(TransportError.INVALID_ARGS, "block " + i + ": local offset " + lo + " + size " + sz + " exceeds local memory id "
              + local.id() + " (" + local.size() + " bytes)");
          return 0;
        }
        maxBlock = Math.max(maxBlock, sz);
        minBlock = Math.min(minBlock, sz);
      }
    }
    preparedMin = minBlock;
    preparedMax = maxBlock;
    return access.base(op, r, device);
  }

  /**
   * The worker's way to the GPU ({@code XgmiWorker.process}, then {@link #issue}) for a submitting thread that holds
   * the turn: {@link DeviceTransfers#ISSUED}, {@link DeviceTransfers#FAILED} (a native call failed; the op ended with
   * the worker's message), or {@link DeviceTransfers#NO_SLOT}, with nothing done, whenever the worker would have to
   * say something, ask the owner or create something.
   */
  int issueReady(TransferOp op) {
    RemoteRegion r = readyRegion(op);
    if (r == null) return DeviceTransfers.NO_SLOT;
    int device = op.local().deviceId();
    long remoteBase = access.readyBase(r, device);
    if (remoteBase == 0) return DeviceTransfers.NO_SLOT;
    int issued = transfers.issueReady(op, r, device, remoteBase, op.minBlockSize(), op.maxBlockSize());
    if (issued == DeviceTransfers.ISSUED) r.inFlight++;
    return issued;
  }

  /**
   * The confirmed region {@code op} goes to when a submitting thread may issue it with nothing to say and nothing to
   * create (peer alive, local region live, the owner's answer in and matching, a batch within the limit whose blocks
   * the engine checked); null otherwise.
   */
  RemoteRegion readyRegion(TransferOp op) {
    XgmiPeer peer = (XgmiPeer) op.peer();
    LocalRegion local = op.local();
    if (!peer.alive() || !local.live()) return null;
    RemoteRegion r = peer.region(op.remoteId());
    if (r == null || r.state != RemoteRegion.State.READY) return null;
    if (op.remoteAccessKey() != r.accessKey || op.remoteAddress() != r.address || !r.sameData(op.remoteData())) return null;
    if (op.blockCount() > settings.maxBatchBlocks()) return null;
    if (!op.blocksChecked(local.size(), r.size) && !(op.blockCount() == 1 && singleInside(op, r))) return null;
    return r;
  }

  /** Whether the single transfer {@code op} lies inside its local region and inside {@code r} (two compares each). */
  private static boolean singleInside(TransferOp op, RemoteRegion r) {
    long ro = op.remoteOffset(0), sz = op.blockSize(0);
    return sz > 0 && ro >= 0 && ro <= r.size - sz && op.local().contains(op.localOffset(0), sz);
  }

  /** {@link RegionAccess#readyBase}. */
  long readyBase(RemoteRegion r, int device) {
    return access.readyBase(r, device);
  }
}
