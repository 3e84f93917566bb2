package org.mori4j.transport.rdma;

import static org.mori4j.natives.verbs.VerbsConstants.IBV_SEND_SIGNALED;
import static org.mori4j.natives.verbs.VerbsConstants.IBV_WC_REM_ACCESS_ERR;
import static org.mori4j.natives.verbs.VerbsConstants.IBV_WC_RETRY_EXC_ERR;

import java.util.ArrayDeque;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.PostException;
import org.mori4j.transport.rdma.verbs.SendRequests;
import org.mori4j.transport.rdma.verbs.WcStatus;

/**
 * How a worker turns ops into work requests and completions back into finished ops. An op is checked against
 * what the remote region's owner confirmed, then split into parts: one per queue pair for a single transfer of
 * at least the stripe threshold (byte ranges) or a batch (runs of blocks), else one. A part becomes a chain of
 * RDMA WRITEs or READs of at most {@code maxWorkRequestBytes} each, posted {@code postBatchSize} at a time, of
 * which only the last is signaled (and one every half queue, so that unsignaled requests cannot hold every slot);
 * a write to a target that keeps notifications ends with an 8-byte SEND of its uid on the same queue pair, which
 * RC ordering delivers after the data. A part that finds no free slot (in its send queue, or in the worker's
 * completion queue, which must never overrun) waits on its queue pair, in order. Worker thread only.
 */
final class PartPoster {
  /** In {@code op.laneSeq}: a notification SEND is owed once every stripe completed. */
  private static final long NOTIFY_AFTER = 1L << 40;
  private static final long COUNT = NOTIFY_AFTER - 1;

  private final RdmaWorker worker;
  private final SendRequests wrs;
  private final int cqCapacity;
  private final ArrayDeque<Part> pool = new ArrayDeque<>();
  private long sendsOutstanding;
  private int receivesPosted;

  PartPoster(RdmaWorker worker, SendRequests wrs, int cqCapacity) {
    this.worker = worker;
    this.wrs = wrs;
    this.cqCapacity = cqCapacity;
  }

  /** Checks {@code op} against the owner's registration {@code r} and posts it (or queues it behind its lane's parts). */
  void issue(TransferOp op, RdmaPeer peer, RdmaPeer.Path path, RdmaPeer.RemoteRdmaRegion r) {
    // cancelled or past its deadline while it waited (for a confirmation, a replacement connection): it never starts
    if (op.outcomeDecided()) return;
    if (op.remoteAccessKey() != r.accessKey) {
      // not a registration under that key: the owner's own answer (and TCP's, XGMI's) for a key it never issued
      op.transferFailed(TransportError.NOT_FOUND, "memory id " + r.id + " of engine '" + peer.key + "' is not registered under that access key");
      return;
    }
    String bad = check(op, peer, r);
    if (bad != null) {
      op.transferFailed(TransportError.INVALID_ARGS, bad);
      return;
    }
    MemoryRegion local = path.device.region(op.local().id());
    if (local == null) {
      op.transferFailed(TransportError.INVALID_ARGS, "local memory id " + op.local().id() + " is not registered with the RDMA backend of engine '"
          + worker.engineKey + "' on device " + path.device.device.name());
      return;
    }
    RdmaLane[] lanes = path.lanes;
    int usable = 0;
    for (RdmaLane l : lanes) if (!l.broken) usable++;
    if (usable == 0) {
      String why = "no queue pair to engine '" + peer.key + "' is in service: " + lanes[0].brokenReason;
      // refused by the NIC: the region may be what is gone (the owner is asked), not the path
      if (lanes[0].accessError) worker.accessErrors.failed(op, peer.key, r, why);
      else op.transferFailed(TransportError.RDMA_OP, why);
      return;
    }
    boolean notify = op.kind() == TransferOp.WRITE && op.notifyTarget() && lanes[0].notifications;
    int blocks = op.blockCount();
    int parts = blocks == 1
        ? (usable > 1 && op.totalBytes() >= worker.settings.stripeThreshold() ? usable : 1)
        : Math.min(usable, blocks);
    op.laneSeq = parts | (notify && parts > 1 ? NOTIFY_AFTER : 0);
    if (parts == 1) {
      enqueue(take().set(op, nextLane(path), 0, blocks, 0, blocks == 1 ? op.blockSize(0) : -1, notify, false), local, r);
      return;
    }
    long total = op.totalBytes();
    for (int i = 0; i < parts; i++) {
      RdmaLane lane = nextLane(path);
      Part p = take();
      if (blocks == 1) {
        long chunk = (total + parts - 1) / parts;
        p.set(op, lane, 0, 1, i * chunk, Math.min(total, (i + 1) * chunk), false, false);
      } else {
        p.set(op, lane, (int) ((long) blocks * i / parts), (int) ((long) blocks * (i + 1) / parts), 0, -1, false, false);
      }
      if (!enqueue(p, local, r)) return;
    }
  }

  /** Why {@code op} does not fit what the owner registered, or null. */
  private static String check(TransferOp op, RdmaPeer peer, RdmaPeer.RemoteRdmaRegion r) {
    String what = "memory id " + r.id + " of engine '" + peer.key + "'";
    if (op.remoteAddress() != r.address)
      return what + " is registered at address 0x" + Long.toHexString(r.address) + ", not 0x" + Long.toHexString(op.remoteAddress());
    for (int i = 0, n = op.blockCount(); i < n; i++) {
      long off = op.remoteOffset(i), len = op.blockSize(i);
      if (off < 0 || len <= 0 || len > r.size || off > r.size - len)
        return "block " + i + ": remote range [" + off + ", " + off + "+" + len + ") is outside " + what + " (" + r.size + " bytes)";
    }
    return null;
  }

  private static RdmaLane nextLane(RdmaPeer.Path path) {
    RdmaLane[] lanes = path.lanes;
    for (int k = 0; k < lanes.length; k++) {
      RdmaLane l = lanes[Math.floorMod(path.nextLane++, lanes.length)];
      if (!l.broken) return l;
    }
    return lanes[0];
  }

  /** Queues or posts {@code p}; false when that failed the op (nothing more of it is to be issued). */
  private boolean enqueue(Part p, MemoryRegion local, RdmaPeer.RemoteRdmaRegion r) {
    RdmaLane lane = p.lane;
    worker.inFlight++;
    if (lane.remoteDevice >= RdmaMemoryData.devices(r.data)) {
      failPart(p, TransportError.INVALID_ARGS, "memory id " + r.id + " of engine '" + lane.peerKey + "' has no rkey for its device "
          + lane.remoteDevice);
      return false;
    }
    p.lkey = local.lkey();
    p.rkey = RdmaMemoryData.rkey(r.data, lane.remoteDevice);
    p.localBase = p.op.local().address();
    p.remoteBase = r.address;
    p.region = r;
    if (!lane.waiting.isEmpty() || !post(p)) lane.waiting.addLast(p);
    return true;
  }

  /** Posts what fits of the parts waiting on {@code lane}, in order. */
  void drainWaiting(RdmaLane lane) {
    while (!lane.waiting.isEmpty() && !lane.broken) {
      if (!post(lane.waiting.peekFirst())) return;
      lane.waiting.pollFirst();
    }
  }

  /** Posts as much of {@code p} as the queues allow; true once all of it is posted (or it failed). */
  private boolean post(Part p) {
    RdmaLane lane = p.lane;
    TransferOp op = p.op;
    if (!p.begun) {
      if (op.outcomeDecided()) {
        // it waited for room on the queue and its transfer ended meanwhile: none of it leaves (the status is final,
        // so this failure only releases the part)
        failPart(p, TransportError.BAD_STATE, "ended before it was posted");
        return true;
      }
      p.begun = true;
    }
    long maxWr = worker.settings.maxWorkRequestBytes();
    int half = lane.depth / 2;
    while (!p.fullyPosted()) {
      int free = (int) Math.min(lane.freeSlots(), cqCapacity - receivesPosted - sendsOutstanding);
      if (free <= 0) return false;
      int limit = Math.min(free, wrs.capacity());
      int n = 0;
      while (n < limit && !p.fullyPosted()) {
        long seq = lane.posted + n;
        boolean signaled;
        if (!p.notifyOnly && p.block < p.endBlock) {
          int b = p.block;
          long end = p.byteEnd >= 0 ? p.byteEnd : op.blockSize(b);
          long len = Math.min(end - p.within, maxWr);
          long laddr = p.localBase + op.localOffset(b) + p.within;
          long raddr = p.remoteBase + op.remoteOffset(b) + p.within;
          p.within += len;
          if (p.within >= end) {
            p.block++;
            p.within = 0;
          }
          signaled = p.fullyPosted() || seq - lane.lastSignaled >= half;
          int flags = signaled ? IBV_SEND_SIGNALED : 0;
          if (op.kind() == TransferOp.READ) wrs.read(n, seq, laddr, (int) len, p.lkey, raddr, p.rkey, flags);
          else wrs.write(n, seq, laddr, (int) len, p.lkey, raddr, p.rkey, flags);
        } else {
          wrs.send(n, seq, lane.sendNote(seq, op.uid()), RdmaLane.NOTE_BYTES, lane.sendNotesMr.lkey(), IBV_SEND_SIGNALED);
          p.notifyPosted = true;
          signaled = true;
        }
        if (signaled) lane.lastSignaled = seq;
        n++;
      }
      try {
        lane.qp.postSend(wrs, 0, n);
      } catch (PostException e) {
        posted(lane, e.posted());
        breakLane(lane, TransportError.RDMA_OP, "posting to " + lane + " failed: " + e.getMessage());
        failPart(p, TransportError.RDMA_OP, "posting to " + lane + " failed: " + e.getMessage());
        return true;
      } catch (RuntimeException e) {
        breakLane(lane, TransportError.RDMA_OP, "posting to " + lane + " failed: " + e);
        failPart(p, TransportError.RDMA_OP, "posting to " + lane + " failed: " + e);
        return true;
      }
      posted(lane, n);
    }
    p.lastSeq = lane.posted - 1;
    lane.postedParts.addLast(p);
    return true;
  }

  private void posted(RdmaLane lane, int n) {
    lane.posted += n;
    sendsOutstanding += n;
  }

  private void retire(RdmaLane lane, long upTo) {
    if (upTo > lane.retired) {
      sendsOutstanding -= upTo - lane.retired;
      lane.retired = upTo;
    }
  }

  /** A signaled work request {@code seq} of {@code lane} completed: every part posted up to it is done. */
  void sendCompleted(RdmaLane lane, long seq) {
    retire(lane, seq + 1);
    while (!lane.postedParts.isEmpty() && lane.postedParts.peekFirst().lastSeq <= seq) partDone(lane.postedParts.pollFirst());
  }

  /** Work request {@code seq} of {@code lane} completed with an error: the first takes the lane out of service. */
  void sendFailed(RdmaLane lane, long seq, int status) {
    retire(lane, seq + 1);
    if (lane.broken) return; // the flushes that follow the first error
    String why = "work request " + seq + " on " + lane + " completed with " + WcStatus.name(status);
    boolean gone = status == IBV_WC_RETRY_EXC_ERR;
    // out of service and the peer lost or its replacement asked for before any transfer learns of the failure
    lane.breakWith(why);
    lane.accessError = status == IBV_WC_REM_ACCESS_ERR;
    if (gone) worker.peerUnreachable(lane, why);
    else worker.replace(lane, why);
    breakLane(lane, gone ? TransportError.PEER_LOST : TransportError.RDMA_OP, why);
  }

  private void breakLane(RdmaLane lane, TransportError error, String why) {
    lane.breakWith(why);
    handBackUnposted(lane);
    if (lane.accessError) failLaneAfterAccessError(lane, why);
    else failLane(lane, error, why);
    try {
      lane.qp.toError(); // what is still posted completes as flushed, which retires its slots
    } catch (RuntimeException e) {
      // already in error
    }
  }

  /**
   * When {@code lane}'s connection is being replaced: the ops whose only part waits on it for a free slot and was never
   * begun go back to the connection, which holds them (ahead of ops held since, in their order) for the new one, as
   * it does with ops a worker had not posted yet. Nothing of them left, so nothing is sent twice; the lane's error
   * is not theirs. Parts of striped ops and begun parts still end with the lane.
   */
  private void handBackUnposted(RdmaLane lane) {
    if (lane.waiting.isEmpty()) return;
    RdmaPeer owner = ((RdmaPeer.Path) lane.waiting.peekFirst().op.lane).owner;
    if (!owner.retiring() || !owner.alive()) return;
    var it = lane.waiting.iterator();
    while (it.hasNext()) {
      Part p = it.next();
      if (p.begun || !p.wholeOp()) continue;
      it.remove();
      TransferOp op = p.op;
      release(p);
      op.laneSeq = 0;
      owner.submit(op, true);
    }
  }

  /** Fails every part posted or waiting on {@code lane}. */
  void failLane(RdmaLane lane, TransportError error, String reason) {
    Part p;
    while ((p = lane.postedParts.pollFirst()) != null) failPart(p, error, reason);
    while ((p = lane.waiting.pollFirst()) != null) failPart(p, error, reason);
  }

  /** Hands every part posted or waiting on {@code lane} to {@link AccessErrors}: which of them met a deregistered region. */
  private void failLaneAfterAccessError(RdmaLane lane, String why) {
    Part p;
    while ((p = lane.postedParts.pollFirst()) != null || (p = lane.waiting.pollFirst()) != null) {
      TransferOp op = p.op;
      RdmaPeer.RemoteRdmaRegion r = p.region;
      release(p);
      if (op.laneSeq < 0) continue;
      op.laneSeq = -1;
      worker.accessErrors.failed(op, lane.peerKey, r, why);
    }
  }

  /** A lane leaves this worker (closed): its outstanding requests and receives no longer count against the queue. */
  void forget(RdmaLane lane) {
    sendsOutstanding -= lane.posted - lane.retired;
    lane.retired = lane.posted;
    receivesPosted -= lane.receiveDepth;
  }

  void receivesPosted(int n) {
    receivesPosted += n;
  }

  /** Free completion-queue entries for a new lane's receives. */
  int completionCredits() {
    return (int) (cqCapacity - receivesPosted - sendsOutstanding);
  }

  private void partDone(Part p) {
    TransferOp op = p.op;
    RdmaPeer.RemoteRdmaRegion region = p.region;
    release(p);
    if (op.laneSeq < 0) return;
    long left = (op.laneSeq & COUNT) - 1;
    if (left > 0) {
      op.laneSeq = (op.laneSeq & NOTIFY_AFTER) | left;
      return;
    }
    if ((op.laneSeq & NOTIFY_AFTER) != 0) {
      // every stripe landed: the uid follows on one queue pair
      RdmaPeer.Path path = (RdmaPeer.Path) op.lane;
      RdmaLane lane = nextLane(path);
      op.laneSeq = 1;
      if (lane.broken) {
        op.laneSeq = -1;
        op.transferFailed(TransportError.RDMA_OP, "the data landed but no queue pair can carry the notification: " + lane.brokenReason);
        return;
      }
      Part n = take().set(op, lane, 0, 0, 0, 0, true, true);
      n.region = region;
      worker.inFlight++;
      if (!lane.waiting.isEmpty() || !post(n)) lane.waiting.addLast(n);
      return;
    }
    op.laneSeq = 0;
    op.transferSucceeded();
  }

  private void failPart(Part p, TransportError error, String reason) {
    TransferOp op = p.op;
    release(p);
    if (op.laneSeq < 0) return;
    op.laneSeq = -1;
    op.transferFailed(error, reason);
  }

  private Part take() {
    Part p = pool.pollFirst();
    return p != null ? p : new Part();
  }

  private void release(Part p) {
    worker.inFlight--;
    p.clear();
    if (pool.size() < 4096) pool.addFirst(p);
  }
}
