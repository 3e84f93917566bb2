package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;

/**
 * The GPU staging pipeline moving bytes ({@link GpuStagingFixture}): every mix of host and "device" ends, reads and
 * writes, sizes that fall on and off the piece and buffer boundaries (pieces of a quarter of the transfer, 64 KiB to
 * the 256 KiB buffer), striped transfers, batches and pipelined transfers must arrive byte-exact; a short or pooled
 * staging pool changes how many buffers a stager holds, not the bytes; and how pieces are sized and issued.
 * Failures, cancellation and the target's guards are {@link GpuStagingFailureTest}'s.
 */
class GpuStagingPipelineTest extends GpuStagingFixture {
  @Test
  void everyMixOfHostAndDeviceEndsIsByteExactBothWays() throws InterruptedException {
    // one piece; pieces of MIN (a quarter would be smaller); quarters; pieces of a whole buffer; striped over two lanes
    long[] sizes = {1, 4096, MIN - 1, MIN, MIN + 1, 4L * MIN + 1, CHUNK - 1, CHUNK, CHUNK + 1, 4L * CHUNK - 4095, (1 << 20) + 3, (9L << 20) + 5};
    LocalRegion[][] pairs = {{aCpu, bGpu}, {aGpu, bCpu}, {aGpu, bGpu}};
    int seed = 1;
    for (LocalRegion[] p : pairs) {
      for (long size : sizes) {
        long lo = 3, ro = 5;
        String what = (p[0].gpu() ? "gpu" : "cpu") + "->" + (p[1].gpu() ? "gpu" : "cpu") + " " + size + " B";
        fill(p[0], seed++);
        RecordingOp w = single(TransferOp.WRITE, p[0], lo, p[1], ro, size);
        assertNull(w.error, what + " write: " + w.message);
        assertSame(p[0], lo, p[1], ro, size, what + " write");
        fill(p[1], seed++);
        RecordingOp r = single(TransferOp.READ, p[0], lo, p[1], ro, size);
        assertNull(r.error, what + " read: " + r.message);
        assertSame(p[0], lo, p[1], ro, size, what + " read");
      }
    }
    assertTrue(stagingA.copies.get() > 0 && stagingB.copies.get() > 0, "both sides staged through their device");
  }

  /**
   * A staging pool with nothing ready beyond each stager's first buffer: transfers run through one buffer (no
   * allocation beyond it) and stay byte-exact; once the pool has buffers again, the stagers top up.
   */
  @Test
  void aShortPoolMeansFewerBuffersNotAllocationsAndTheBytesStayExact() throws InterruptedException {
    stagingA.ready.set(0);
    stagingB.ready.set(0);
    int seed = 100;
    for (long size : new long[] {MIN + 1, 4L * CHUNK - 4095, (9L << 20) + 5}) {
      for (LocalRegion[] p : new LocalRegion[][] {{aGpu, bGpu}, {aCpu, bGpu}, {aGpu, bCpu}}) {
        fill(p[0], seed++);
        RecordingOp w = single(TransferOp.WRITE, p[0], 3, p[1], 5, size);
        assertNull(w.error, w.message);
        assertSame(p[0], 3, p[1], 5, size, "write " + size + " B with one buffer per stager");
        fill(p[1], seed++);
        RecordingOp r = single(TransferOp.READ, p[0], 3, p[1], 5, size);
        assertNull(r.error, r.message);
        assertSame(p[0], 3, p[1], 5, size, "read " + size + " B with one buffer per stager");
      }
    }
    int oneEach = stagingA.openSlots.get() + stagingB.openSlots.get();
    assertTrue(oneEach > 0 && oneEach <= 8, "one buffer per stager (two lanes, two directions, two sides): " + oneEach);
    stagingA.ready.set(Integer.MAX_VALUE);
    stagingB.ready.set(Integer.MAX_VALUE);
    fill(aGpu, seed);
    RecordingOp w = single(TransferOp.WRITE, aGpu, 0, bGpu, 0, 9L << 20);
    assertNull(w.error, w.message);
    assertSame(aGpu, 0, bGpu, 0, 9L << 20, "write after the pool refilled");
    assertTrue(stagingA.openSlots.get() + stagingB.openSlots.get() > oneEach, "the stagers topped up once buffers were ready");
  }

  /**
   * With a pool (the engine's, prewarm above 0) a stager keeps one buffer and borrows the others per transfer: six
   * pooled buffers per side serve four stagers per side (two lanes, both directions) at full depth one transfer at a
   * time, every borrowed buffer is back in the pool when its transfer ends, and the bytes stay exact. Without the
   * giving back, the first stagers would keep all six and the later ones get one buffer each.
   */
  @Test
  void aPooledStagerKeepsOneBufferAndBorrowsTheOthersPerTransfer() throws InterruptedException {
    for (HostBackedDeviceStaging st : List.of(stagingA, stagingB)) {
      st.pool = true;
      st.ready.set(6);
    }
    int seed = 300;
    long size = (1 << 20) + 5; // six pieces through 256 KiB buffers: every stager wants four buffers
    for (int i = 0; i < 4; i++) {
      fill(aGpu, seed++);
      RecordingOp w = single(TransferOp.WRITE, aGpu, 3, bGpu, 5, size);
      assertNull(w.error, w.message);
      assertSame(aGpu, 3, bGpu, 5, size, "pooled write " + i);
      fill(bGpu, seed++);
      RecordingOp r = single(TransferOp.READ, aGpu, 7, bGpu, 9, size);
      assertNull(r.error, r.message);
      assertSame(aGpu, 7, bGpu, 9, size, "pooled read " + i);
    }
    long deadline = System.nanoTime() + 5_000_000_000L;
    while ((stagingA.ready.get() != 6 || stagingB.ready.get() != 6) && System.nanoTime() < deadline) Thread.sleep(1);
    assertEquals(6, stagingA.ready.get(), "initiator: borrowed buffers back in the pool after the transfers");
    assertEquals(6, stagingB.ready.get(), "target: borrowed buffers back in the pool after the transfers");
    // 16 transfer ends in all (8 per side), each with its stager's three extra buffers borrowed
    assertEquals(48, stagingA.taken.get() + stagingB.taken.get(), "extra buffers borrowed, three per transfer per side");
    int held = stagingA.openSlots.get() + stagingB.openSlots.get();
    assertTrue(held > 0 && held <= 8, "between transfers each stager holds its first buffer only: " + held);
    // a transfer of one piece borrows nothing
    int before = stagingA.taken.get() + stagingB.taken.get();
    fill(aGpu, seed);
    RecordingOp small = single(TransferOp.WRITE, aGpu, 0, bGpu, 0, 4096);
    assertNull(small.error, small.message);
    assertSame(aGpu, 0, bGpu, 0, 4096, "pooled one-piece write");
    assertEquals(before, stagingA.taken.get() + stagingB.taken.get(), "a one-piece transfer borrowed buffers");
  }

  @Test
  void batchesAcrossChunkBoundariesAreByteExact() throws InterruptedException {
    long[] lo = {0, 100_000, 300_001, 1_000_003};
    long[] ro = {7, 200_000, 500_000, 2_000_000};
    long[] sz = {70_000, 150_001, 3, 2_500_000};
    for (LocalRegion[] p : new LocalRegion[][] {{aGpu, bGpu}, {aCpu, bGpu}, {aGpu, bCpu}}) {
      for (byte kind : new byte[] {TransferOp.WRITE, TransferOp.READ}) {
        fill(aGpu, kind * 31 + 1);
        fill(aCpu, kind * 31 + 2);
        fill(bGpu, kind * 31 + 3);
        fill(bCpu, kind * 31 + 4);
        RecordingOp op = new RecordingOp();
        op.initBatch(kind, p[0], lo.clone(), peerOfA, p[1].id(), p[1].accessKey(), p[1].address(), ro.clone(), sz.clone(), 7);
        a.submit(op);
        op.await();
        assertNull(op.error, op.message);
        for (int i = 0; i < lo.length; i++) assertSame(p[0], lo[i], p[1], ro[i], sz[i], "batch block " + i + " kind " + kind);
      }
    }
  }

  @Test
  void pipelinedTransfersOnOneConnectionKeepTheirOrderAndBytes() throws InterruptedException {
    fill(aGpu, 99);
    List<RecordingOp> ops = new ArrayList<>();
    long size = 300_000;
    for (int i = 0; i < 20; i++) {
      RecordingOp op = new RecordingOp();
      byte kind = i % 2 == 0 ? TransferOp.WRITE : TransferOp.READ;
      // writes go from aGpu to bGpu at even slots; reads bring bCpu's odd slots into aGpu's odd slots
      LocalRegion remote = kind == TransferOp.WRITE ? bGpu : bCpu;
      op.initSingle(kind, aGpu, i * size, peerOfA, remote.id(), remote.accessKey(), remote.address(), i * size, size, i);
      ops.add(op);
    }
    fill(bCpu, 5);
    for (RecordingOp op : ops) a.submit(op);
    for (RecordingOp op : ops) assertNull(op.await().error, op.message);
    for (int i = 0; i < 20; i++) {
      if (i % 2 == 0) assertSame(aGpu, i * size, bGpu, i * size, size, "write " + i);
      else assertSame(aGpu, i * size, bCpu, i * size, size, "read " + i);
    }
  }

  @Test
  void piecesAreAQuarterOfTheTransferWithinTheirBounds() {
    assertEquals(1, GpuStager.pieceSize(1, CHUNK));
    assertEquals(MIN - 1, GpuStager.pieceSize(MIN - 1, CHUNK), "a transfer under the minimum is one piece");
    assertEquals(MIN, GpuStager.pieceSize(3L * MIN, CHUNK), "a quarter under the minimum: pieces of the minimum");
    assertEquals(256 << 10, GpuStager.pieceSize(1 << 20, 4 << 20), "1 MiB through 4 MiB buffers: four quarters");
    assertEquals((256 << 10) + 4096, GpuStager.pieceSize((1 << 20) + 1, 4 << 20), "quarters round up to 4 KiB");
    assertEquals(2 << 20, GpuStager.pieceSize(64L << 20, 2 << 20), "never more than a buffer");
    assertEquals(4096, GpuStager.pieceSize(1 << 20, 4096), "nor more than a small buffer");
  }

  @Test
  void piecesAreSmallAtBothEndsAndCoverThePayloadExactly() {
    PiecePlan plan = new PiecePlan();
    plan.plan(1 << 20, 2 << 20);
    long[] mib = new long[plan.count()];
    for (int k = 0; k < mib.length; k++) mib[k] = plan.length(k);
    assertArrayEquals(new long[] {MIN, 224 << 10, 224 << 10, 224 << 10, 224 << 10, MIN}, mib, "1 MiB: 64 KiB ends, the middle in near-equal pieces");
    plan.plan(4L << 20, 2 << 20);
    assertEquals(MIN, plan.length(0));
    assertEquals(4L * MIN, plan.length(1), "the head grows by four");
    assertEquals(MIN, plan.length(plan.count() - 1));
    assertEquals(4L * MIN, plan.length(plan.count() - 2), "the tail mirrors it");
    for (long total : new long[] {1, 4095, MIN - 1, MIN, 3L * MIN + 1, 1 << 20, (3L << 20) + 5, 4L << 20, 64L << 20, (64L << 20) + 12_345}) {
      for (int chunk : new int[] {4096, MIN, CHUNK, 2 << 20}) {
        plan.plan(total, chunk);
        assertEquals(0, plan.start(0));
        assertEquals(total, plan.start(plan.count()), total + " through " + chunk);
        for (int k = 0; k < plan.count(); k++) {
          long len = plan.length(k);
          assertTrue(len > 0 && len <= chunk, "piece " + k + " of " + total + " through " + chunk + ": " + len);
        }
      }
    }
  }

  @Test
  void anOutboundTransferIssuesEveryBuffersCopyAtOnce() throws InterruptedException {
    HostBackedDeviceStaging device = new HostBackedDeviceStaging(0);
    GpuStager st = new GpuStager(device, CHUNK);
    try {
      fill(aGpu, 11);
      // a transfer that fits one buffer: four pieces of a quarter each
      long size = CHUNK;
      st.start(true, aGpu, 5, size);
      assertEquals(CHUNK / 4, st.piece());
      // with nothing sent yet, every buffer already has its piece's device-to-host copy, so the copy of piece k+1
      // runs while piece k is on the socket (the whole buffer as one piece was one copy, and nothing to overlap)
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (device.copies.get() < 4 && System.nanoTime() < deadline) Thread.sleep(1);
      Thread.sleep(20);
      assertEquals(4, device.copies.get(), "device-to-host copies issued before the first byte left");
      // drain it as a socket would and check the bytes come out in order
      MemorySegment out = arena.allocate(size);
      long at = 0;
      while (st.remaining() > 0 && System.nanoTime() < deadline) {
        java.nio.ByteBuffer v = st.next();
        if (v == null) {
          Thread.onSpinWait();
          continue;
        }
        int n = v.remaining();
        MemorySegment.copy(MemorySegment.ofBuffer(v), 0, out, at, n);
        v.position(v.limit());
        at += n;
        st.advance(n);
      }
      assertEquals(-1, out.mismatch(mem(aGpu).asSlice(5, size)), "staged bytes differ from the device's");
      st.finish();
    } finally {
      st.close();
      device.shutdown();
    }
  }
}
