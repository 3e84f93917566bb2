package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * A single-block op issued from the submitting thread ({@code mori4j.xgmi.caller-poll}, {@link XgmiCallerPoll}) on
 * {@link HostBackedGpuRuntime}, with the worker driven by the test thread only, so that nothing but the caller can
 * complete an op while the worker is not driven: with a positive caller poll the copy queued by {@code issueFromCaller}
 * moves the block, the awaiting thread's drive gives up after its time while the device is stalled and afterwards
 * completes the op on that thread and gives its only event slot back (the next op is issued from the caller again);
 * meanwhile the worker leaves the op's event to the caller until the caller hands it back or twice its limit passed;
 * with 0 the caller issues and the worker completes;
 * off leaves single copies to the worker as before; and an op the worker completed first is not completed twice.
 */
class XgmiCallerSingleTest {
  private static final long BLOCK = 4096;
  private final List<AutoCloseable> cleanup = new ArrayList<>();
  private HostBackedGpuRuntime gpu;
  private XgmiBackend initiator;
  private CompletionSource worker;
  private Object peer;
  private LocalRegion local;
  private LocalRegion remote;
  private byte[] remoteData;
  private MemorySegment src;
  private MemorySegment dst;

  /** Records who completed it and how often anyone tried; its outcome is claimed once, as the engine's status does. */
  private static final class Single extends TransferOp {
    final AtomicInteger ends = new AtomicInteger();
    volatile Thread by;
    volatile String outcome;

    @Override
    public void transferSucceeded() {
      end("ok");
    }

    @Override
    public void transferFailed(TransportError e, String message) {
      end(e + ": " + message);
    }

    private void end(String what) {
      ends.incrementAndGet();
      if (!claimOutcome()) return;
      by = Thread.currentThread();
      outcome = what;
    }
  }

  private void setUp(long callerPollNanos) {
    gpu = new HostBackedGpuRuntime(1, 30);
    XgmiSettings settings = new XgmiSettings(1, 1, 1 << 20, 0, true, false, callerPollNanos);
    XgmiBackend owner = new XgmiBackend("owner", settings, () -> gpu, (p, id, k, answer) -> answer.refused(TransportError.NOT_FOUND, "none"));
    owner.start(BackendListener.NONE);
    long cap = 16 * BLOCK;
    DeviceBuffer a = gpu.allocDevice(0, cap), b = gpu.allocDevice(0, cap);
    cleanup.add(a);
    cleanup.add(b);
    remote = LocalRegion.gpu(601, 78, b.address(), cap, 0);
    remoteData = owner.registerMemory(remote);
    // the owner's answer comes within the ask, so the worker driven by this thread confirms the region in its round
    initiator = new XgmiBackend("initiator", settings, () -> gpu, (p, id, k, answer) -> answer.registered(remote.address(), remote.size(), remoteData));
    initiator.start(BackendListener.NONE);
    worker = initiator.completionSources().get(0);
    // closing needs a thread that drives the workers (started only then: until then the test thread drives)
    cleanup.add(0, () -> closeDriven(initiator));
    cleanup.add(1, () -> closeDriven(owner));
    local = LocalRegion.gpu(600, 8, a.address(), cap, 0);
    peer = initiator.connect("owner", owner.acceptHandshake("initiator", initiator.handshakeRequest("owner")));
    src = MemorySegment.ofAddress(a.address()).reinterpret(cap);
    dst = MemorySegment.ofAddress(b.address()).reinterpret(cap);
    for (long i = 0; i < cap; i += 8) src.set(ValueLayout.JAVA_LONG, i, 0x5EED_0000L + i);
  }

  private static void closeDriven(XgmiBackend b) throws InterruptedException {
    CompletionSource s = b.completionSources().get(0);
    Thread driver = Thread.ofPlatform().daemon().start(() -> {
      while (!s.isClosed()) if (s.doWork() == 0) s.awaitWork(1_000_000);
    });
    b.close();
    driver.join(30_000);
  }

  private Single write(int slot) {
    Single op = new Single();
    op.initSingle(TransferOp.WRITE, local, slot * BLOCK, peer, remote.id(), remote.accessKey(), remote.address(), slot * BLOCK, BLOCK, slot);
    op.remoteData(remoteData);
    return op;
  }

  /** Drives the worker from this thread until {@code op} ends (at most 2,000 rounds and 10 s). */
  private void driveUntilDone(Single op) {
    long end = System.nanoTime() + 10_000_000_000L;
    for (int i = 0; i < 2_000 && op.ends.get() == 0 && System.nanoTime() < end; i++) {
      if (worker.doWork() == 0) worker.awaitWork(200_000);
    }
    assertEquals("ok", op.outcome, "the worker completed it");
  }

  private boolean landed(int slot) {
    long at = slot * BLOCK;
    return MemorySegment.mismatch(src, at, at + BLOCK, dst, at, at + BLOCK) == -1;
  }

  private void assertLanded(int slot) {
    long at = slot * BLOCK;
    assertEquals(-1, MemorySegment.mismatch(src, at, at + BLOCK, dst, at, at + BLOCK), "block " + slot);
  }

  /** The first single op goes through the worker, which confirms the region and creates the stream and the event. */
  private void firstThroughTheWorker() {
    Single first = write(0);
    assertFalse(initiator.issueFromCaller(first), "nothing is set up yet: the worker's to do");
    initiator.submit(first);
    driveUntilDone(first);
    assertLanded(0);
  }

  @AfterEach
  void closeEverything() throws Exception {
    XgmiTestBackends.closeAndCheckNothingLeft(cleanup, gpu);
  }

  @Test
  void theAwaitingCallerCompletesItsOwnCopyAndGivesTheSlotBack() {
    setUp(5_000_000_000L);
    firstThroughTheWorker();
    for (int k = 1; k <= 3; k++) {
      Single op = write(k);
      gpu.stallStreams(true);
      // one event slot: the op before must have given it back, or this issue is refused
      assertTrue(initiator.issueFromCaller(op), "op " + k + " issued from the caller");
      assertNotNull(op.callerDrive, "the awaiting thread gets to poll its event");
      op.callerDrive.drive(op, 20_000_000L);
      assertEquals(0, op.ends.get(), "a stalled copy: the drive gave up after its time, op " + k);
      gpu.stallStreams(false);
      // nobody drives the worker: only the copy this thread queued can move the block, only this thread complete it
      op.callerDrive.drive(op, 5_000_000_000L);
      assertEquals("ok", op.outcome, "op " + k);
      assertSame(Thread.currentThread(), op.by, "completed on the awaiting thread");
      assertEquals(1, op.ends.get());
      assertLanded(k);
    }
  }

  @Test
  void anOpTheWorkerCompletedFirstIsNotCompletedAgainByItsCaller() {
    setUp(5_000_000_000L);
    firstThroughTheWorker();
    Single op = write(1);
    assertTrue(initiator.issueFromCaller(op));
    op.callerDrive.handOff(op); // say its status was polled: the worker's to complete
    driveUntilDone(op);
    op.callerDrive.drive(op, 1_000_000_000L);
    assertEquals(1, op.ends.get(), "one completion");
    Single next = write(2);
    assertTrue(initiator.issueFromCaller(next), "the worker gave the slot back");
    next.callerDrive.drive(next, 5_000_000_000L);
    assertEquals("ok", next.outcome);
    assertLanded(2);
  }

  /** Drives the worker from this thread for {@code rounds} rounds (each at most 200 us of waiting). */
  private void driveRounds(int rounds) {
    for (int i = 0; i < rounds; i++) if (worker.doWork() == 0) worker.awaitWork(200_000);
  }

  @Test
  void theWorkerLeavesACallersEventToItUntilTheCallerStops() throws Exception {
    setUp(5_000_000_000L);
    firstThroughTheWorker();
    Single op = write(1);
    assertTrue(initiator.issueFromCaller(op));
    // the copy has run (its bytes are there) before the worker's rounds: an unskipped poll would complete the op
    for (long end = System.nanoTime() + 5_000_000_000L; !landed(1) && System.nanoTime() < end; ) Thread.sleep(1);
    Thread.sleep(2);
    driveRounds(20);
    assertEquals(0, op.ends.get(), "two threads querying one event: the worker leaves it to the caller that polls it");
    op.callerDrive.handOff(op); // a future, a listener or a poll of the status: the caller will not query it
    driveUntilDone(op);
    assertLanded(1);
  }

  @Test
  void anOpWhoseCallerNeverAwaitsItIsCompletedByTheWorkerAfterTwiceTheCallersLimit() throws Exception {
    setUp(1_000_000L);
    firstThroughTheWorker();
    Single op = write(1);
    assertTrue(initiator.issueFromCaller(op));
    Thread.sleep(5); // more than 2 x 1 ms
    driveUntilDone(op);
    assertLanded(1);
  }

  @Test
  void withoutCallerPollingTheCallerIssuesAndTheWorkerCompletes() {
    setUp(0);
    firstThroughTheWorker();
    Single op = write(1);
    assertTrue(initiator.issueFromCaller(op));
    assertNull(op.callerDrive, "caller-poll 0: no polling by the caller");
    driveUntilDone(op);
    assertLanded(1);
  }

  @Test
  void offLeavesSingleCopiesToTheWorker() {
    setUp(XgmiSettings.CALLER_OFF);
    firstThroughTheWorker();
    Single op = write(1);
    assertFalse(initiator.issueFromCaller(op), "caller-poll off: as before");
    initiator.submit(op);
    driveUntilDone(op);
    assertLanded(1);
  }
}
