package org.mori4j.transport.rdma;

import org.mori4j.transport.TransferOp;

/**
 * The share of one op that one queue pair carries: a byte range of a single transfer (a stripe), or a run of
 * whole blocks of a batch, possibly followed by the notification SEND; and where its posting stands. Parts are
 * pooled by their worker, so a transfer allocates none in steady state. Worker thread only.
 */
final class Part {
  TransferOp op;
  RdmaLane lane;
  /** Blocks [block, endBlock) of the op; for a stripe of a single transfer block 0 only, bytes [byteStart, byteEnd). */
  int endBlock;
  long byteStart;
  long byteEnd;
  /** Posting cursor: next block and byte within it. */
  int block;
  long within;
  /** Whether a notification SEND follows the data (and whether it has been posted). */
  boolean notify;
  boolean notifyPosted;
  /** Only the notification, for a write whose stripes all completed. */
  boolean notifyOnly;
  /** Whether any work request of the part has been built for posting (a part not begun may still be dropped). */
  boolean begun;
  /** Sequence number of the part's last work request on its lane (-1 until fully posted). */
  long lastSeq;
  /** Keys and base addresses of the two regions. */
  int lkey;
  int rkey;
  long localBase;
  long remoteBase;
  /** The owner's registration the part was checked against (what a remote access error on it is asked about). */
  RdmaPeer.RemoteRdmaRegion region;

  Part set(TransferOp op, RdmaLane lane, int block, int endBlock, long byteStart, long byteEnd, boolean notify, boolean notifyOnly) {
    this.op = op;
    this.lane = lane;
    this.block = block;
    this.endBlock = endBlock;
    this.byteStart = byteStart;
    this.byteEnd = byteEnd;
    this.within = byteStart;
    this.notify = notify;
    this.notifyPosted = false;
    this.notifyOnly = notifyOnly;
    this.begun = false;
    this.lastSeq = -1;
    return this;
  }

  /** Whether every work request of the part has been posted. */
  boolean fullyPosted() {
    return (notifyOnly || block >= endBlock) && (!notify || notifyPosted);
  }

  /**
   * Whether this part, not begun (its cursor still at its start), carries all of its op: not a stripe, not a run of
   * some of its blocks, not a notification alone.
   */
  boolean wholeOp() {
    return !notifyOnly && block == 0 && byteStart == 0 && endBlock == op.blockCount() && (byteEnd < 0 || byteEnd == op.blockSize(0));
  }

  void clear() {
    op = null;
    lane = null;
    region = null;
  }
}
