package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The GPU staging pipeline when things go wrong ({@link GpuStagingFixture}): a failed device copy fails its transfer
 * with GPU_OP and only that one, the target's checks still guard GPU regions, a transfer cancelled while its pieces
 * are in flight leaves the connections framed, and a backend without staging refuses GPU memory.
 */
class GpuStagingFailureTest extends GpuStagingFixture {
  @Test
  void aFailedDeviceCopyOnTheTargetFailsThatWriteOnly() throws InterruptedException {
    stagingB.poisonAddress = bGpu.address() + 200_000;
    RecordingOp bad = single(TransferOp.WRITE, aCpu, 0, bGpu, 0, 1 << 20);
    assertEquals(TransportError.GPU_OP, bad.error, bad.message);
    assertTrue(bad.message.contains("GPU copy to device 0 failed"), bad.message);
    stagingB.poisonAddress = -1;
    fill(aCpu, 3);
    RecordingOp ok = single(TransferOp.WRITE, aCpu, 0, bGpu, 0, 1 << 20);
    assertNull(ok.error, ok.message);
    assertSame(aCpu, 0, bGpu, 0, 1 << 20, "write after a failed one");
  }

  @Test
  void aFailedDeviceCopyOnTheInitiatorFailsThatReadOnly() throws InterruptedException {
    stagingA.poisonAddress = aGpu.address() + 100;
    RecordingOp bad = single(TransferOp.READ, aGpu, 0, bCpu, 0, 1 << 20);
    assertEquals(TransportError.GPU_OP, bad.error, bad.message);
    stagingA.poisonAddress = -1;
    fill(bCpu, 4);
    RecordingOp ok = single(TransferOp.READ, aGpu, 0, bCpu, 0, 1 << 20);
    assertNull(ok.error, ok.message);
    assertSame(aGpu, 0, bCpu, 0, 1 << 20, "read after a failed one");
  }

  @Test
  void targetChecksStillGuardGpuRegions() throws InterruptedException {
    RecordingOp op = new RecordingOp();
    op.initSingle(TransferOp.WRITE, aCpu, 0, peerOfA, bGpu.id(), bGpu.accessKey() + 1, bGpu.address(), 0, 4096, 1);
    a.submit(op);
    assertEquals(TransportError.NOT_FOUND, op.await().error);
    RecordingOp out = single(TransferOp.READ, aGpu, 0, bGpu, SIZE - 10, 11);
    assertEquals(TransportError.INVALID_ARGS, out.error, out.message);
    bGpu.kill();
    RecordingOp dead = single(TransferOp.WRITE, aGpu, 0, bGpu, 0, 100);
    assertEquals(TransportError.NOT_FOUND, dead.error, dead.message);
  }

  @Test
  void aTransferCancelledWhilePiecesAreInFlightLeavesTheConnectionsFramed() throws InterruptedException {
    long size = (5L << 20) + 7; // striped over both lanes, many pieces each
    for (byte kind : new byte[] {TransferOp.WRITE, TransferOp.READ}) {
      for (long delayMicros : new long[] {0, 200, 2_000}) {
        fill(aGpu, kind + delayMicros);
        fill(bGpu, kind * 3 + delayMicros);
        CancellableOp op = new CancellableOp();
        op.initSingle(kind, aGpu, 0, peerOfA, bGpu.id(), bGpu.accessKey(), bGpu.address(), 0, size, 90);
        a.submit(op);
        if (delayMicros > 0) java.util.concurrent.locks.LockSupport.parkNanos(delayMicros * 1000);
        boolean cancelled = op.cancel();
        op.await();
        // cancelled first: nothing else may decide the outcome; otherwise it finished (and must have succeeded)
        if (cancelled) assertTrue(op.cancelled && op.error == null, "a cancelled op reported " + op.error + ": " + op.message);
        else assertNull(op.error, op.message);
        // the lanes still carry whole requests: the next transfers both ways are byte-exact
        fill(aGpu, 500 + kind);
        RecordingOp w = single(TransferOp.WRITE, aGpu, 0, bGpu, 0, size);
        assertNull(w.error, w.message);
        assertSame(aGpu, 0, bGpu, 0, size, "write after a cancelled " + kind + " (" + delayMicros + " us)");
        fill(bGpu, 600 + kind);
        RecordingOp r = single(TransferOp.READ, aGpu, 0, bGpu, 0, size);
        assertNull(r.error, r.message);
        assertSame(aGpu, 0, bGpu, 0, size, "read after a cancelled " + kind + " (" + delayMicros + " us)");
      }
    }
  }

  /** An op that can be cancelled as the engine's status does: whoever claims the outcome first decides it. */
  private static final class CancellableOp extends TransferOp {
    private final java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    volatile TransportError error;
    volatile String message;
    volatile boolean cancelled;

    @Override
    public void transferSucceeded() {
      if (claimOutcome()) done.countDown();
    }

    @Override
    public void transferFailed(TransportError e, String m) {
      if (!claimOutcome()) return;
      error = e;
      message = m;
      done.countDown();
    }

    boolean cancel() {
      if (!cancelOutcome()) return false;
      cancelled = true;
      done.countDown();
      return true;
    }

    void await() throws InterruptedException {
      assertTrue(done.await(30, java.util.concurrent.TimeUnit.SECONDS), "transfer did not end");
    }
  }

  @Test
  void gpuRegionsNeedStaging() {
    TcpBackend plain = new TcpBackend("plain", settings());
    LocalRegion r = LocalRegion.gpu(9, 9, 0x1000, 4096, 0);
    assertFalse(plain.canServe(r, false));
    assertTrue(plain.canServe(aCpu, true), "a remote GPU end is staged by the target");
    var e = assertThrows(org.mori4j.transport.TransportException.class, () -> plain.registerMemory(r));
    assertTrue(e.getMessage().contains("cannot move GPU memory"), e.getMessage());
    assertTrue(a.canServe(aGpu, true));
    plain.close();
  }
}
