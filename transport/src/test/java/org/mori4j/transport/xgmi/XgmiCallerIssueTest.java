package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.RegionConfirmer;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.xgmi.XgmiTestBackends.Op;

/**
 * A batch issued from the submitting thread ({@link XgmiBackend#issueFromCaller}) on {@link HostBackedGpuRuntime}:
 * once the worker is idle and set up, the caller's call takes the batch, which then reads the caller's arrays never
 * again (they are overwritten right after the call and the bytes still land where the original arrays said); what
 * the worker has to do first (a region its owner has not confirmed) or has to explain (a forged descriptor) is left
 * to the worker, untouched, and ends with the worker's own message.
 */
class XgmiCallerIssueTest {
  private static final int BLOCKS = 64;
  private static final long BLOCK = 4096;
  private final List<AutoCloseable> cleanup = new ArrayList<>();
  private HostBackedGpuRuntime gpu;
  private XgmiBackend initiator;
  private XgmiBackend owner;
  private Object peer;
  private LocalRegion local;
  private LocalRegion remote;
  private byte[] remoteData;
  private MemorySegment src;
  private MemorySegment dst;

  private XgmiBackend started(String key, RegionConfirmer confirmer) {
    // one stream and one event: the first batch through the worker sets up everything a caller's issue needs
    return XgmiTestBackends.started(key, XgmiSettings.of(1, 1), () -> gpu, confirmer, BackendListener.NONE, cleanup);
  }

  private void setUp() {
    gpu = new HostBackedGpuRuntime(1, 30);
    owner = started("owner", (p, id, k, answer) -> answer.refused(TransportError.NOT_FOUND, "nobody asks the owner"));
    long cap = 2 * BLOCKS * BLOCK;
    DeviceBuffer a = gpu.allocDevice(0, cap), b = gpu.allocDevice(0, cap);
    cleanup.add(a);
    cleanup.add(b);
    remote = LocalRegion.gpu(501, 77, b.address(), cap, 0);
    remoteData = owner.registerMemory(remote);
    initiator = started("initiator", (p, id, k, answer) -> CompletableFuture.runAsync(() -> {
      if (id == remote.id() && k == remote.accessKey()) answer.registered(remote.address(), remote.size(), remoteData);
      else answer.refused(TransportError.NOT_FOUND, "memory id " + id + " is not registered");
    }));
    local = LocalRegion.gpu(500, 7, a.address(), cap, 0);
    peer = initiator.connect("owner", owner.acceptHandshake("initiator", initiator.handshakeRequest("owner")));
    src = MemorySegment.ofAddress(a.address()).reinterpret(cap);
    dst = MemorySegment.ofAddress(b.address()).reinterpret(cap);
  }

  /** A write of every other slot in reversed order (no two blocks join), checked as the engine checks it. */
  private Op batch(long[] lo, long[] ro, long[] sizes, long remoteAddress) {
    Op op = new Op();
    op.initCheckedBatch(TransferOp.WRITE, local, lo, peer, remote.id(), remote.accessKey(), remoteAddress, ro, sizes, BLOCKS, 1,
        BLOCKS * BLOCK, BLOCK, BLOCK, local.size(), remote.size());
    op.remoteData(remoteData);
    return op;
  }

  private static long[][] blocks() {
    long[] lo = new long[BLOCKS], ro = new long[BLOCKS], sizes = new long[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
      lo[i] = (long) (BLOCKS - 1 - i) * 2 * BLOCK;
      ro[i] = (long) i * 2 * BLOCK;
      sizes[i] = BLOCK;
    }
    return new long[][] {lo, ro, sizes};
  }

  private void fill(long seed) {
    for (long i = 0; i < src.byteSize(); i += 8) src.set(ValueLayout.JAVA_LONG, i, seed * 1_000_003L + i);
    dst.fill((byte) 0);
  }

  private void assertLanded(long[][] b, String what) {
    for (int i = 0; i < BLOCKS; i++)
      assertEquals(-1, MemorySegment.mismatch(src, b[0][i], b[0][i] + b[2][i], dst, b[1][i], b[1][i] + b[2][i]), what + ", block " + i);
  }

  @AfterEach
  void closeEverything() throws Exception {
    XgmiTestBackends.closeAndCheckNothingLeft(cleanup, gpu);
  }

  @Test
  void anIdleWorkerLetsTheCallerLaunchAndTheCallersArraysAreNotReadAfterTheCall() throws Exception {
    setUp();
    long[][] b = blocks();
    Op unconfirmed = batch(b[0], b[1], b[2], remote.address());
    assertFalse(initiator.issueFromCaller(unconfirmed), "a region its owner has not confirmed is the worker's to ask about");
    assertFalse(unconfirmed.done.isDone(), "nothing was done with it");
    fill(1);
    initiator.submit(unconfirmed);
    assertEquals("ok", unconfirmed.await());
    assertLanded(b, "through the worker");
    int taken = 0;
    // the worker is idle after each await; the caller's issue needs its turn free at the moment of the call
    for (int round = 0; round < 50 && taken < 3; round++) {
      long[][] mine = blocks();
      long[][] kept = {mine[0].clone(), mine[1].clone(), mine[2].clone()};
      fill(round + 2);
      int launches = gpu.launches.get();
      Op op = batch(mine[0], mine[1], mine[2], remote.address());
      if (initiator.issueFromCaller(op)) {
        taken++;
        assertEquals(launches + 1, gpu.launches.get(), "launched before the call returned");
        // the caller reuses its arrays at once: the batch must not read them again
        Arrays.fill(mine[0], -1);
        Arrays.fill(mine[1], Long.MAX_VALUE);
        Arrays.fill(mine[2], 0);
      } else {
        initiator.submit(op);
      }
      assertEquals("ok", op.await(), "round " + round);
      assertLanded(kept, "round " + round);
    }
    assertTrue(taken > 0, "no batch in 50 was issued from the caller with the worker idle");
  }

  @Test
  void aCompletionIsReportedOnceTheTurnIsFreeSoItsWaiterCanLaunchTheNextBatchItself() throws Exception {
    setUp();
    long[][] a = blocks();
    long[][] b = {a[0].clone(), a[1].clone(), a[2].clone()};
    for (int i = 0; i < BLOCKS; i++) b[1][i] += BLOCK;
    fill(9);
    Op first = batch(a[0], a[1], a[2], remote.address());
    initiator.submit(first);
    assertEquals("ok", first.await(), "the worker set everything up");
    Op second = batch(a[0], a[1], a[2], remote.address()), third = batch(b[0], b[1], b[2], remote.address());
    CompletableFuture<Boolean> fromCompletion = new CompletableFuture<>();
    // runs inside second's completion, as a caller woken by it would come back at once
    second.done.thenRun(() -> fromCompletion.complete(initiator.issueFromCaller(third)));
    initiator.submit(second);
    assertEquals("ok", second.await());
    assertTrue(fromCompletion.get(30, java.util.concurrent.TimeUnit.SECONDS), "the poll that completed it still held the worker's turn");
    assertEquals("ok", third.await());
    assertLanded(a, "second batch");
    assertLanded(b, "third batch");
  }

  @Test
  void anIdleWorkersRoundLeavesTheTurnFreeForASubmitter() {
    setUp();
    XgmiWorker w = new XgmiWorker("idle", gpu, XgmiSettings.of(1, 1), (p, id, k, answer) -> answer.refused(TransportError.NOT_FOUND, "none"),
        BackendListener.NONE, new long[] {0}, new boolean[][] {{false}});
    // the poller spins on rounds after work: an empty one must not hold the turn a submitter's issue tries to take
    assertFalse(w.enterRound(), "nothing to do: no round, the turn stays free");
    w.execute(() -> {});
    assertTrue(w.enterRound(), "a task to run: the round takes the turn");
    assertFalse(w.enterRound(), "and holds it until it ends");
    w.exitRound();
  }

  @Test
  void aMappedTableIsReadInPlaceWithNoUploadAndWaitsForItsKernelBeforeTheSlotsNextBatch() throws Exception {
    assertEquals(2 * BLOCKS, tablesAcrossAStalledStream(true), "one move per block, no table upload");
  }

  @Test
  void aRuntimeThatCannotMapPinnedMemoryGetsTheTableCopiedToTheDevice() throws Exception {
    assertEquals(2 * BLOCKS + 2, tablesAcrossAStalledStream(false), "one move per block and one upload per batch");
  }

  /**
   * Two batches through one slot (one event) while the device is stalled: the second must wait for the first's kernel
   * before its table goes into the slot, or the first's kernel would read the second's offsets. Returns the device's
   * copies (block moves and table uploads) for both.
   */
  private int tablesAcrossAStalledStream(boolean mapped) throws Exception {
    setUp();
    gpu.mapsPinned = mapped;
    long[][] a = blocks();
    long[][] b = {a[0].clone(), a[1].clone(), a[2].clone()};
    for (int i = 0; i < BLOCKS; i++) b[1][i] += BLOCK; // the odd slots: a kernel that read b's table for a leaves a's slots 0
    fill(7);
    int copies = gpu.copies.get();
    gpu.stallStreams(true);
    Op first = batch(a[0], a[1], a[2], remote.address()), second = batch(b[0], b[1], b[2], remote.address());
    initiator.submit(first);
    initiator.submit(second);
    for (long end = System.nanoTime() + 10_000_000_000L; gpu.launches.get() < 1 && System.nanoTime() < end; ) Thread.sleep(1);
    assertEquals(1, gpu.launches.get(), "the first batch launched on the stalled device");
    Thread.sleep(20); // the worker has had the second batch: it waits for the slot
    assertEquals(1, gpu.launches.get(), "the second batch waits for the only slot");
    gpu.stallStreams(false);
    assertEquals("ok", first.await());
    assertEquals("ok", second.await());
    assertLanded(a, "first batch");
    assertLanded(b, "second batch");
    return gpu.copies.get() - copies;
  }

  @Test
  void aForgedDescriptorIsLeftToTheWorkerWhichRefusesItWithItsMessage() throws Exception {
    setUp();
    long[][] b = blocks();
    Op first = batch(b[0], b[1], b[2], remote.address());
    initiator.submit(first);
    assertEquals("ok", first.await());
    Op forged = batch(b[0], b[1], b[2], remote.address() + 4096);
    assertFalse(initiator.issueFromCaller(forged));
    assertFalse(forged.done.isDone());
    initiator.submit(forged);
    String outcome = forged.await();
    assertTrue(outcome.startsWith("INVALID_ARGS: the descriptor says") && outcome.endsWith("(forged or stale descriptor)"), outcome);
  }
}
