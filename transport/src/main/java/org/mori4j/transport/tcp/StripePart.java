package org.mori4j.transport.tcp;

import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * One stripe of a large single transfer that the TCP backend split over several connections. The parent
 * op completes when the last stripe does; the first failure fails it. Only transfers above the stripe
 * threshold pay for these objects; {@link #submitStripes} makes and queues them.
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

  /** Splits {@code op}, one block, into one stripe per stripe lane of {@code peer} and queues each on its lane's loop. */
  static void submitStripes(TransferOp op, TcpPeer peer) {
    int parts = peer.stripes();
    long total = op.totalBytes();
    long chunk = (total + parts - 1) / parts;
    AtomicInteger left = new AtomicInteger(parts);
    for (int i = 0; i < parts; i++) {
      long start = i * chunk;
      long len = Math.min(chunk, total - start);
      StripePart p = new StripePart(op, left, parts);
      p.initSingle(op.kind(), op.local(), op.localOffset(0) + start, peer, op.remoteId(), op.remoteAccessKey(),
          op.remoteAddress(), op.remoteOffset(0) + start, len, op.uid());
      p.notifyTarget(op.notifyTarget());
      InitiatorConnection lane = peer.stripeLane(i);
      p.lane = lane;
      lane.queued.incrementAndGet();
      lane.loop.submit(p);
    }
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
  }

  @Override
  public void transferFailed(TransportError error, String message) {
    if (left.getAndSet(-1) > 0) parent.transferFailed(error, message);
  }
}
