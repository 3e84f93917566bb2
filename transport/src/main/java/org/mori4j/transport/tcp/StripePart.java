package org.mori4j.transport.tcp;

import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * One stripe of a large single transfer that the TCP backend split over several connections. The parent
 * op completes when the last stripe does; the first failure fails it. Only transfers above the stripe
 * threshold pay for these objects.
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
