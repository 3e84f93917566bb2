package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/** A transfer op for backend tests: records how it ended ({@link #error} null on success) and lets a test wait for it. */
public final class RecordingOp extends TransferOp {
  public final CountDownLatch done = new CountDownLatch(1);
  public volatile TransportError error;
  public volatile String message;

  @Override
  public void transferSucceeded() {
    done.countDown();
  }

  @Override
  public void transferFailed(TransportError e, String m) {
    error = e;
    message = m;
    done.countDown();
  }

  /**
   * Moves {@code size} bytes from offset 0 of {@code local} to offset 0 of {@code remote} (or back, for a READ) through
   * {@code backend} to {@code peer}, and fails the test unless it succeeded within 30 s.
   */
  public static void moveOrFail(TcpBackend backend, Object peer, byte kind, LocalRegion local, LocalRegion remote, long size)
      throws InterruptedException {
    RecordingOp op = new RecordingOp();
    op.initSingle(kind, local, 0, peer, remote.id(), remote.accessKey(), remote.address(), 0, size, 7);
    backend.submit(op);
    assertTrue(op.done.await(30, TimeUnit.SECONDS), (kind == TransferOp.WRITE ? "write" : "read") + " of " + size + " B did not end");
    assertNull(op.error, () -> op.error + ": " + op.message);
  }

  /** Waits until the op ended (failing the test after 30 s); returns this op. */
  public RecordingOp await() throws InterruptedException {
    assertTrue(done.await(30, TimeUnit.SECONDS), "transfer did not end");
    return this;
  }
}
