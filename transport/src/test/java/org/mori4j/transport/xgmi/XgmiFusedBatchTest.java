package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.xgmi.XgmiTestBackends.Op;

/**
 * The entries of one batch-of-batches call handed to the XGMI backend together ({@link XgmiBackend#submitGroup},
 * {@link XgmiBackend#issueGroupFromCaller}) on {@link HostBackedGpuRuntime}: entries over several remote regions of one
 * device are one kernel launch per {@code maxBatchBlocks} blocks, every byte lands where its entry says and each entry
 * ends on its own; an entry with a forged descriptor or block fails alone with the message it gets as a lone op while
 * the others land; with fusing off each entry is its own launch, as before.
 */
class XgmiFusedBatchTest {
  private static final int ENTRIES = 12;
  private static final int BLOCKS = 8;
  private static final long BLOCK = 4096;
  private static final long CAP = 2 * BLOCKS * BLOCK;
  private final List<AutoCloseable> cleanup = new ArrayList<>();
  private HostBackedGpuRuntime gpu;
  private XgmiBackend initiator;
  private Object peer;
  private LocalRegion[] locals;
  private LocalRegion[] remotes;
  private byte[][] remoteData;

  /** {@code ENTRIES} local and remote regions (the KV case: one per layer buffer), and a started initiator with {@code settings}. */
  private void setUp(XgmiSettings settings) {
    gpu = new HostBackedGpuRuntime(2, 20);
    XgmiBackend owner = XgmiTestBackends.started("owner", XgmiSettings.of(1, 1), () -> gpu,
        (p, id, k, answer) -> answer.refused(TransportError.NOT_FOUND, "nobody asks the owner"), BackendListener.NONE, cleanup);
    locals = new LocalRegion[ENTRIES];
    remotes = new LocalRegion[ENTRIES];
    remoteData = new byte[ENTRIES][];
    for (int e = 0; e < ENTRIES; e++) {
      DeviceBuffer a = gpu.allocDevice(0, CAP), b = gpu.allocDevice(1, CAP);
      cleanup.add(a);
      cleanup.add(b);
      locals[e] = LocalRegion.gpu(100 + e, 7, a.address(), CAP, 0);
      remotes[e] = LocalRegion.gpu(500 + e, 77, b.address(), CAP, 1);
      remoteData[e] = owner.registerMemory(remotes[e]);
    }
    initiator = XgmiTestBackends.started("initiator", settings, () -> gpu, (p, id, k, answer) -> CompletableFuture.runAsync(() -> {
      for (int e = 0; e < ENTRIES; e++) {
        if (id == remotes[e].id() && k == remotes[e].accessKey()) {
          answer.registered(remotes[e].address(), remotes[e].size(), remoteData[e]);
          return;
        }
      }
      answer.refused(TransportError.NOT_FOUND, "memory id " + id + " is not registered");
    }), BackendListener.NONE, cleanup);
    peer = initiator.connect("owner", owner.acceptHandshake("initiator", initiator.handshakeRequest("owner")));
  }

  private static MemorySegment seg(LocalRegion r) {
    return MemorySegment.ofAddress(r.address()).reinterpret(r.size());
  }

  /** Entry {@code e}'s write: every other slot in reversed order (nothing joins), unchecked, so the worker checks each block. */
  private Op entry(int e, long remoteAddress, long badRemoteOffset) {
    long[] lo = new long[BLOCKS], ro = new long[BLOCKS], sizes = new long[BLOCKS];
    for (int i = 0; i < BLOCKS; i++) {
      lo[i] = (long) (BLOCKS - 1 - i) * 2 * BLOCK;
      ro[i] = (long) i * 2 * BLOCK + (e % 2) * BLOCK;
      sizes[i] = BLOCK;
    }
    if (badRemoteOffset >= 0) ro[BLOCKS - 1] = badRemoteOffset;
    Op op = new Op();
    op.initBatch(TransferOp.WRITE, locals[e], lo, peer, remotes[e].id(), remotes[e].accessKey(), remoteAddress, ro, sizes, e + 1);
    op.remoteData(remoteData[e]);
    return op;
  }

  private List<Op> entries() {
    List<Op> ops = new ArrayList<>();
    for (int e = 0; e < ENTRIES; e++) ops.add(entry(e, remotes[e].address(), -1));
    return ops;
  }

  /** {@link #entries()} as the engine hands them over: every block checked against both regions already. */
  private List<Op> checkedEntries() {
    List<Op> ops = new ArrayList<>();
    for (int e = 0; e < ENTRIES; e++) {
      Op u = entry(e, remotes[e].address(), -1), op = new Op();
      long[] lo = new long[BLOCKS], ro = new long[BLOCKS], sizes = new long[BLOCKS];
      for (int i = 0; i < BLOCKS; i++) {
        lo[i] = u.localOffset(i);
        ro[i] = u.remoteOffset(i);
        sizes[i] = u.blockSize(i);
      }
      op.initCheckedBatch(TransferOp.WRITE, locals[e], lo, peer, remotes[e].id(), remotes[e].accessKey(), remotes[e].address(), ro, sizes,
          BLOCKS, e + 1, BLOCKS * BLOCK, BLOCK, BLOCK, CAP, CAP);
      op.remoteData(remoteData[e]);
      ops.add(op);
    }
    return ops;
  }

  private void fill(long seed) {
    for (int e = 0; e < ENTRIES; e++) {
      MemorySegment s = seg(locals[e]);
      for (long i = 0; i < CAP; i += 8) s.set(ValueLayout.JAVA_LONG, i, (seed + e) * 1_000_003L + i);
      seg(remotes[e]).fill((byte) 0);
    }
  }

  /** Every block of entry {@code e} landed, and nothing else of its remote region was written. */
  private void assertLanded(int e, Op op, String what) {
    MemorySegment src = seg(locals[e]), dst = seg(remotes[e]);
    MemorySegment want = java.lang.foreign.Arena.ofAuto().allocate(CAP);
    for (int i = 0; i < BLOCKS; i++) MemorySegment.copy(src, op.localOffset(i), want, op.remoteOffset(i), op.blockSize(i));
    assertEquals(-1, dst.mismatch(want), what + ", entry " + e + ": first wrong byte");
  }

  /** Confirms every remote region with a lone op each (the worker asks the owner once per region). */
  private void warmUp() throws Exception {
    List<Op> ops = entries();
    for (Op op : ops) initiator.submit(op);
    for (Op op : ops) assertEquals("ok", op.await());
  }

  @AfterEach
  void closeEverything() throws Exception {
    XgmiTestBackends.closeAndCheckNothingLeft(cleanup, gpu);
  }

  @Test
  void entriesOfOneCallAreOneLaunchPerBlockLimitAndEachLandsAndEndsOnItsOwn() throws Exception {
    // 20 blocks a launch: 12 entries of 8 blocks are 6 launches of 2 entries (an entry is never split)
    setUp(new XgmiSettings(4, 8, 20, 0, true, true));
    warmUp();
    fill(1);
    int launches = gpu.launches.get();
    List<Op> ops = entries();
    initiator.submitGroup(ops);
    for (int e = 0; e < ENTRIES; e++) {
      assertEquals("ok", ops.get(e).await(), "entry " + e);
      assertEquals(1, ops.get(e).ends.get(), "entry " + e + " ended once");
      assertLanded(e, ops.get(e), "grouped");
    }
    assertEquals(6, gpu.launches.get() - launches, "launches for 12 entries of 8 blocks with 20 blocks a launch");

    // no limit in the way: one launch, from the worker or from the caller's thread
    setUpAgain(new XgmiSettings(4, 8, 1 << 20, 0, true, true));
    warmUp();
    fill(2);
    launches = gpu.launches.get();
    ops = entries();
    initiator.submitGroup(ops);
    for (int e = 0; e < ENTRIES; e++) {
      assertEquals("ok", ops.get(e).await(), "entry " + e);
      assertLanded(e, ops.get(e), "one launch");
    }
    assertEquals(1, gpu.launches.get() - launches, "launches for 12 entries through the worker");
    int taken = 0;
    for (int round = 0; round < 50 && taken < 2; round++) {
      fill(round + 3);
      launches = gpu.launches.get();
      List<Op> mine = checkedEntries();
      if (initiator.issueGroupFromCaller(mine)) {
        taken++;
        assertEquals(launches + 1, gpu.launches.get(), "one launch before the call returned");
      } else {
        initiator.submitGroup(mine);
      }
      for (int e = 0; e < ENTRIES; e++) {
        assertEquals("ok", mine.get(e).await(), "round " + round + ", entry " + e);
        assertLanded(e, mine.get(e), "round " + round);
      }
      assertEquals(launches + 1, gpu.launches.get(), "round " + round + ": one launch");
    }
    assertTrue(taken > 0, "no call in 50 was issued from the caller with the worker idle");
  }

  @Test
  void readsOfMixedSizesWithASingleTransferAmongThemAreOneLaunchAndLandExact() throws Exception {
    // the fused table's other shapes: sources are the remote bases, a size column (entry 5's first block is 100 bytes),
    // and a member without block arrays (entry 3: one transfer)
    setUp(new XgmiSettings(4, 8, 1 << 20, 0, true, true));
    warmUp();
    for (int e = 0; e < ENTRIES; e++) {
      MemorySegment s = seg(remotes[e]);
      for (long i = 0; i < CAP; i += 8) s.set(ValueLayout.JAVA_LONG, i, (7 + e) * 1_000_003L + i);
      seg(locals[e]).fill((byte) 0);
    }
    int launches = gpu.launches.get();
    List<Op> ops = new ArrayList<>();
    for (int e = 0; e < ENTRIES; e++) {
      Op op = new Op();
      if (e == 3) {
        op.initSingle(TransferOp.READ, locals[e], 5 * BLOCK, peer, remotes[e].id(), remotes[e].accessKey(), remotes[e].address(), 2 * BLOCK, BLOCK,
            e + 1);
      } else {
        Op w = entry(e, remotes[e].address(), -1);
        long[] lo = new long[BLOCKS], ro = new long[BLOCKS], sizes = new long[BLOCKS];
        for (int i = 0; i < BLOCKS; i++) {
          lo[i] = w.localOffset(i);
          ro[i] = w.remoteOffset(i);
          sizes[i] = e == 5 && i == 0 ? 100 : BLOCK;
        }
        op.initBatch(TransferOp.READ, locals[e], lo, peer, remotes[e].id(), remotes[e].accessKey(), remotes[e].address(), ro, sizes, e + 1);
      }
      op.remoteData(remoteData[e]);
      ops.add(op);
    }
    initiator.submitGroup(ops);
    for (int e = 0; e < ENTRIES; e++) {
      Op op = ops.get(e);
      assertEquals("ok", op.await(), "entry " + e);
      MemorySegment want = java.lang.foreign.Arena.ofAuto().allocate(CAP);
      for (int i = 0; i < op.blockCount(); i++) MemorySegment.copy(seg(remotes[e]), op.remoteOffset(i), want, op.localOffset(i), op.blockSize(i));
      assertEquals(-1, seg(locals[e]).mismatch(want), "read entry " + e + ": first wrong byte");
    }
    assertEquals(1, gpu.launches.get() - launches, "launches for 12 read entries");
  }

  @Test
  void aForgedEntryFailsAloneWithItsOwnMessageAndTheOthersLand() throws Exception {
    setUp(new XgmiSettings(4, 8, 1 << 20, 0, true, true));
    warmUp();
    fill(5);
    int launches = gpu.launches.get();
    List<Op> ops = entries();
    ops.set(3, entry(3, remotes[3].address(), CAP - 100)); // a block past the region's end
    ops.set(7, entry(7, remotes[7].address() + 4096, -1)); // a forged address
    initiator.submitGroup(ops);
    String outOfBounds = ops.get(3).await();
    assertTrue(outOfBounds.startsWith("INVALID_ARGS: block 7: remote offset " + (CAP - 100)), outOfBounds);
    String forged = ops.get(7).await();
    assertTrue(forged.startsWith("INVALID_ARGS: the descriptor says") && forged.contains("forged or stale descriptor"), forged);
    for (int e = 0; e < ENTRIES; e++) {
      if (e == 3 || e == 7) {
        assertEquals(-1, seg(remotes[e]).mismatch(java.lang.foreign.Arena.ofAuto().allocate(CAP)), "the failed entry " + e + " wrote nothing");
        continue;
      }
      assertEquals("ok", ops.get(e).await(), "entry " + e);
      assertLanded(e, ops.get(e), "beside the forged ones");
    }
    assertEquals(1, gpu.launches.get() - launches, "the 10 good entries are one launch");
  }

  @Test
  void withFusingOffTheDefaultEveryEntryIsItsOwnLaunch() throws Exception {
    setUp(new XgmiSettings(4, 8, 1 << 20, 0));
    warmUp();
    fill(9);
    int launches = gpu.launches.get();
    List<Op> ops = entries();
    assertTrue(!initiator.fusesBatches() && !initiator.issueGroupFromCaller(ops), "fusing is off");
    initiator.submitGroup(ops);
    for (int e = 0; e < ENTRIES; e++) {
      assertEquals("ok", ops.get(e).await(), "entry " + e);
      assertLanded(e, ops.get(e), "unfused");
    }
    assertEquals(ENTRIES, gpu.launches.get() - launches, "one launch per entry");
  }

  private void setUpAgain(XgmiSettings settings) throws Exception {
    closeEverything();
    cleanup.clear();
    setUp(settings);
  }
}
