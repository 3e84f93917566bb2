package org.mori4j.transport.tcp;

import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * One stripe of a large single transfer that the TCP backend split over several connections. The parent
 * op completes when the last stripe does; the first failure fails it. Only transfers above the stripe
 * threshold pay for these objects; {@link #submitStripes} makes and queues them. A transfer of at least two
 * {@link #PIECE_BYTES} pieces per lane is cut into pieces that a {@link Dealer} hands out as lanes finish theirs,
 * rather than into one fixed stripe per lane: on a machine whose cores the I/O threads share, one lane's thread often
 * waits milliseconds for its core, and with fixed stripes the transfer then ended with that lane's stripe while the
 * other lane sat idle (bench/results/20261125T0925Z-28bc098-tcp-read-5: 64 MiB stripes ended 1.6-1.8 ms apart on
 * average, 5-7 ms in the slowest tenth).
 */
final class StripePart extends TransferOp {
  private final TransferOp parent;
  private final AtomicInteger left;
  private final int parts;

  StripePart(TransferOp parent, AtomicInteger left, int parts) {
    this.parent = parent;
    this.left = left;
    this.parts = parts;
  }

  /** The whole transfer's remote offset: the target checks the whole extent, so no stripe lands on its own. */
  long wholeRemoteOffset() {
    return parent.remoteOffset(0);
  }

  long wholeSize() {
    return parent.totalBytes();
  }

  int parts() {
    return parts;
  }

  /** Size of a dealt piece: small enough that a late lane holds little at the end, large enough that its request is noise. */
  static final long PIECE_BYTES = 4L << 20;
  /** Pieces queued on each lane at once, so that a lane's next request is at the target before its current one ends. */
  static final int QUEUED_PER_LANE = 2;

  /** The dealer of this piece's transfer (null for a fixed stripe) and the lane index it deals to next. */
  private Dealer dealer;
  private int laneIndex;

  /**
   * The pieces of one transfer not yet handed out: each lane starts with {@link #QUEUED_PER_LANE} and takes the next
   * one whenever one of its own succeeds, so a lane whose thread runs carries what a waiting one would have. Any thread.
   */
  static final class Dealer {
    private final TransferOp op;
    private final TcpPeer peer;
    private final int parts;
    private final AtomicInteger left;
    private final AtomicInteger next = new AtomicInteger();

    Dealer(TransferOp op, TcpPeer peer, int parts, AtomicInteger left) {
      this.op = op;
      this.peer = peer;
      this.parts = parts;
      this.left = left;
    }

    /** Queues the next piece on stripe lane {@code i}; nothing once all are out or the transfer failed. */
    void deal(int i) {
      if (left.get() < 0) return;
      int k = next.getAndIncrement();
      if (k >= parts) return;
      long start = k * PIECE_BYTES;
      StripePart p = new StripePart(op, left, parts);
      p.dealer = this;
      p.laneIndex = i;
      queue(p, op, peer, i, start, Math.min(PIECE_BYTES, op.totalBytes() - start));
    }
  }

  /**
   * Splits {@code op}, one block, over the stripe lanes of {@code peer}: into dealt pieces when it holds at least two per
   * lane, otherwise into one stripe per lane, each queued on its lane's loop.
   */
  static void submitStripes(TransferOp op, TcpPeer peer) {
    int lanes = peer.stripes();
    long total = op.totalBytes();
    if (total >= (long) QUEUED_PER_LANE * lanes * PIECE_BYTES) {
      int parts = (int) ((total + PIECE_BYTES - 1) / PIECE_BYTES);
      Dealer d = new Dealer(op, peer, parts, new AtomicInteger(parts));
      for (int r = 0; r < QUEUED_PER_LANE; r++)
        for (int i = 0; i < lanes; i++) d.deal(i);
      return;
    }
    long chunk = (total + lanes - 1) / lanes;
    AtomicInteger left = new AtomicInteger(lanes);
    for (int i = 0; i < lanes; i++) {
      long start = i * chunk;
      queue(new StripePart(op, left, lanes), op, peer, i, start, Math.min(chunk, total - start));
    }
  }

  private static void queue(StripePart p, TransferOp op, TcpPeer peer, int i, long start, long len) {
    p.initSingle(op.kind(), op.local(), op.localOffset(0) + start, peer, op.remoteId(), op.remoteAccessKey(),
        op.remoteAddress(), op.remoteOffset(0) + start, len, op.uid());
    p.notifyTarget(op.notifyTarget());
    InitiatorConnection lane = peer.stripeLane(i);
    p.lane = lane;
    lane.queued.incrementAndGet();
    lane.loop.submit(p);
  }

  // a stripe is cancelled with the whole transfer: one guard, and one payload copy of which it is a slice
  @Override
  protected TransferOp guardOwner() {
    return parent;
  }

  @Override
  public long payloadCopyOffset() {
    return localOffset(0) - parent.localOffset(0);
  }

  @Override
  public void transferSucceeded() {
    if (left.decrementAndGet() == 0) parent.transferSucceeded();
    else if (dealer != null) dealer.deal(laneIndex);
  }

  @Override
  public void transferFailed(TransportError error, String message) {
    if (left.getAndSet(-1) > 0) parent.transferFailed(error, message);
  }
}
