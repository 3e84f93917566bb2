package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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

  /** Waits until the op ended (failing the test after 30 s); returns this op. */
  public RecordingOp await() throws InterruptedException {
    assertTrue(done.await(30, TimeUnit.SECONDS), "transfer did not end");
    return this;
  }
}
