package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

class CompletionBatchTest {
  /** Appends "ok N" / "fail N" to a shared log when it ends; {@code onSuccess} runs inside its success. */
  private static final class LoggedOp extends TransferOp {
    final int n;
    final List<String> log;
    Runnable onSuccess = () -> {};

    LoggedOp(int n, List<String> log) {
      this.n = n;
      this.log = log;
    }

    @Override
    public void transferSucceeded() {
      log.add("ok " + n);
      onSuccess.run();
    }

    @Override
    public void transferFailed(TransportError e, String m) {
      log.add("fail " + n);
    }
  }

  @Test
  void successesWaitForPublishAndKeepResponseOrderAroundAFailure() {
    List<String> log = new ArrayList<>();
    CompletionBatch b = new CompletionBatch();
    for (int i = 0; i < 20; i++) b.succeeded(new LoggedOp(i, log)); // past the initial capacity of 16
    assertEquals(List.of(), log, "a success was published before the read was parsed");
    b.failed(new LoggedOp(20, log), TransportError.TRANSPORT, "refused");
    b.succeeded(new LoggedOp(21, log));
    List<String> want = new ArrayList<>();
    for (int i = 0; i < 20; i++) want.add("ok " + i);
    want.add("fail 20");
    assertEquals(want, log, "a failure must follow the successes read before it");
    b.publish();
    want.add("ok 21");
    assertEquals(want, log);
    b.publish(); // nothing kept: publishes nothing twice
    assertEquals(want, log);
  }

  @Test
  void aListenerThatCompletesMoreJoinsThePassAndAThrowingOneLosesNothing() {
    List<String> log = new ArrayList<>();
    CompletionBatch b = new CompletionBatch();
    LoggedOp first = new LoggedOp(0, log);
    first.onSuccess = () -> b.succeeded(new LoggedOp(9, log)); // a listener completing another op on this thread
    LoggedOp throwing = new LoggedOp(1, log);
    throwing.onSuccess = () -> {
      throw new IllegalStateException("listener failed");
    };
    b.succeeded(first);
    b.succeeded(throwing);
    b.succeeded(new LoggedOp(2, log));
    assertThrows(IllegalStateException.class, b::publish);
    assertEquals(List.of("ok 0", "ok 1"), log);
    b.publish(); // the caller's finally: the rest is still there
    assertEquals(List.of("ok 0", "ok 1", "ok 2", "ok 9"), log);
  }
}
