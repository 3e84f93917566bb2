package org.mori4j.transport.tcp;

import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * One stripe of a large single transfer that the TCP backend split over several connections. The parent
 * op completes when the last stripe does; the first failure fails it. Only transfers above the stripe
 * threshold pay for these objects. With a {@link Feed} (bulk lanes), stripes are handed out as lanes finish
 * them rather than fixed per lane up front, so a lane that runs slower for a moment takes fewer of them and
 * both lanes end together.
 */
final class StripePart extends TransferOp {
  private final TransferOp parent;
  private final AtomicInteger left;
  private final int parts;
  /** Hands out the next stripe to the lane that finished this one; null when every stripe was placed up front. */
  private final Feed feed;

  StripePart(TransferOp parent, AtomicInteger left, int parts) {
    this(parent, left, parts, null);
  }

  private StripePart(TransferOp parent, AtomicInteger left, int parts, Feed feed) {
    this.parent = parent;
    this.left = left;
    this.parts = parts;
    this.feed = feed;
  }

  /**
   * The stripes of one transfer, cut in {@code parts} equal pieces and handed out in order: {@link #start} puts
   * {@code depth} on each lane, and each stripe that succeeds puts the next one on its own lane (from that lane's
   * loop thread), until none is left or one failed.
   */
  static final class Feed {
    private final TransferOp parent;
    private final TcpPeer peer;
    private final int parts;
    private final long chunk;
    private final AtomicInteger left;
    private final AtomicInteger next = new AtomicInteger();

    Feed(TransferOp parent, TcpPeer peer, int parts) {
      this.parent = parent;
      this.peer = peer;
      this.parts = parts;
      this.chunk = (parent.totalBytes() + parts - 1) / parts;
      this.left = new AtomicInteger(parts);
    }

    void start(int lanes, int depth) {
      for (int d = 0; d < depth; d++)
        for (int i = 0; i < lanes; i++)
          if (!submitNext(peer.stripeLane(i))) return;
    }

    /** Puts the next stripe, if any is left and nothing failed, on {@code lane}; false when none was put. */
    boolean submitNext(InitiatorConnection lane) {
      if (left.get() < 0) return false;
      int i = next.getAndIncrement();
      if (i >= parts) return false;
      long start = i * chunk;
      long len = Math.min(chunk, parent.totalBytes() - start);
      StripePart p = new StripePart(parent, left, parts, this);
      p.initSingle(parent.kind(), parent.local(), parent.localOffset(0) + start, peer, parent.remoteId(), parent.remoteAccessKey(),
          parent.remoteAddress(), parent.remoteOffset(0) + start, len, parent.uid());
      p.notifyTarget(parent.notifyTarget());
      p.lane = lane;
      lane.queued.incrementAndGet();
      lane.loop.submit(p);
      return true;
    }
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
    if (feed != null) feed.submitNext((InitiatorConnection) lane);
    if (left.decrementAndGet() == 0) parent.transferSucceeded();
  }

  @Override
  public void transferFailed(TransportError error, String message) {
    if (left.getAndSet(-1) > 0) parent.transferFailed(error, message);
  }
}
