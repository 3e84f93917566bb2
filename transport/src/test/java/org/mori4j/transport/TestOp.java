package org.mori4j.transport;

import java.util.concurrent.atomic.AtomicInteger;

/** A plain op for queue tests: remembers who made it and in which order, and how it ended. */
final class TestOp extends TransferOp {
  final int producer;
  final long seq;
  final AtomicInteger succeeded = new AtomicInteger();
  final AtomicInteger failed = new AtomicInteger();
  volatile TransportError error;

  TestOp(int producer, long seq) {
    this.producer = producer;
    this.seq = seq;
  }

  @Override
  public void transferSucceeded() {
    succeeded.incrementAndGet();
  }

  @Override
  public void transferFailed(TransportError e, String message) {
    error = e;
    failed.incrementAndGet();
  }
}
