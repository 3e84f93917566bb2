package org.mori4j.transport;

import static org.junit.jupiter.api.Assertions.*;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The outcome guard of {@link TransferOp} when several backend threads land bytes of one transfer at once (the
 * stripes of a striped transfer share their parent's guard and run on different I/O threads): every section may
 * open, the outcome waits until the last one closed, and once it is decided no new section opens.
 */
class LandingGuardTest {
  /** An op whose outcome can be claimed from the test (the claim methods are protected). */
  private static final class Op extends TransferOp {
    boolean complete() {
      return claimOutcome();
    }

    boolean cancel() {
      return cancelOutcome();
    }

    @Override
    public void transferSucceeded() {}

    @Override
    public void transferFailed(TransportError e, String message) {}
  }

  @Test
  void twoThreadsLandAtOnceAndTheOutcomeWaitsForBoth() throws Exception {
    Op op = new Op();
    assertTrue(op.beginLanding(), "first section");
    assertTrue(op.beginLanding(), "a second section while the first is open (another stripe's thread)");
    CompletableFuture<Boolean> claim = CompletableFuture.supplyAsync(op::complete);
    op.endLanding();
    Thread.sleep(50);
    assertFalse(claim.isDone(), "the outcome was claimed while a section was still open");
    op.endLanding();
    assertTrue(claim.get(5, TimeUnit.SECONDS), "claimed once both sections closed");
    assertFalse(op.beginLanding(), "no section opens once the outcome is decided");
    assertFalse(op.complete(), "the outcome is claimed once");
    assertFalse(op.cancel(), "nor cancelled after it was completed");
  }

  @Test
  void aCancellationWaitsForOpenSectionsAndThenShutsThemOut() throws Exception {
    Op op = new Op();
    assertTrue(op.beginLanding());
    assertTrue(op.beginLanding());
    CompletableFuture<Boolean> cancel = CompletableFuture.supplyAsync(op::cancel);
    op.endLanding();
    op.endLanding();
    assertTrue(cancel.get(5, TimeUnit.SECONDS));
    assertFalse(op.beginLanding(), "a cancelled op's memory is not touched again");
    assertNull(op.payloadCopy(), "no payload had started, so nothing was copied");
  }
}
