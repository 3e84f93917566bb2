package org.mori4j.io.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The block-list to transfer conversion against a per-block reference, and the layout checks. */
class KvTransferPlanTest {

  @Test
  void coalescedPlanMovesExactlyWhatThePerBlockReferenceMoves() {
    SplittableRandom rnd = new SplittableRandom(0x6b76L);
    int cases = 600;
    for (int c = 0; c < cases; c++) {
      int layers = 1 + rnd.nextInt(6);
      int tensors = 1 + rnd.nextInt(2);
      long blockBytes = 1 + rnd.nextInt(24);
      KvCacheLayout src = randomLayout(rnd, layers, tensors, 1 + rnd.nextInt(20), blockBytes);
      KvCacheLayout dst = randomLayout(rnd, layers, tensors, 1 + rnd.nextInt(20), blockBytes);
      int n = 1 + rnd.nextInt(Math.min(src.blocks(), dst.blocks()));
      int[] sb = pick(rnd, src.blocks(), n);
      int[] db = pick(rnd, dst.blocks(), n);
      int from = rnd.nextInt(layers);
      int to = from + 1 + rnd.nextInt(layers - from);
      String what = "case " + c + ": " + src + " -> " + dst + " blocks " + java.util.Arrays.toString(sb) + " -> "
          + java.util.Arrays.toString(db) + " layers [" + from + ", " + to + ")";

      byte[][] srcBufs = buffers(src, rnd, false);
      byte[][] viaPlan = buffers(dst, rnd, true);
      byte[][] reference = new byte[viaPlan.length][];
      for (int i = 0; i < viaPlan.length; i++) reference[i] = viaPlan[i].clone();

      KvTransferPlan plan = KvTransferPlan.build(src, sb, dst, db, from, to);
      Set<Long> pairs = new HashSet<>();
      for (KvTransferPlan.Batch b : plan.batches()) {
        assertTrue(pairs.add(((long) b.srcBuffer() << 32) | b.dstBuffer()), "one batch per buffer pair: " + what);
        for (int j = 0; j < b.count(); j++)
          System.arraycopy(srcBufs[b.srcBuffer()], (int) b.srcOffsets()[j], viaPlan[b.dstBuffer()], (int) b.dstOffsets()[j], (int) b.sizes()[j]);
      }
      for (int l = from; l < to; l++)
        for (int t = 0; t < tensors; t++)
          for (int i = 0; i < n; i++)
            System.arraycopy(srcBufs[src.bufferOf(l, t)], (int) src.offset(l, t, sb[i]), reference[dst.bufferOf(l, t)],
                (int) dst.offset(l, t, db[i]), (int) blockBytes);
      for (int i = 0; i < reference.length; i++) assertArrayEquals(reference[i], viaPlan[i], "buffer " + i + ", " + what);
      assertEquals((long) n * (to - from) * tensors * blockBytes, plan.bytes(), what);
      assertEquals(n * (to - from) * tensors, plan.blockSlots(), what);
      assertTrue(plan.transfers() <= plan.blockSlots(), what);

      // cut for TCP's connections: the same bytes to the same places, each batch cut in up to k parts of >= minPart
      int k = 1 + rnd.nextInt(4);
      long minPart = 1 + rnd.nextLong(Math.max(1, plan.bytes()));
      KvTransferPlan cut = plan.split(k, minPart);
      byte[][] viaCut = new byte[viaPlan.length][];
      for (int i = 0; i < viaCut.length; i++) viaCut[i] = viaPlan[i].clone();
      for (int i = 0; i < viaCut.length; i++)
        for (int j = 0; j < viaCut[i].length; j++) viaCut[i][j] ^= (byte) 0x5a; // land again over known other bytes
      byte[][] cutReference = new byte[viaCut.length][];
      for (int i = 0; i < viaCut.length; i++) cutReference[i] = viaCut[i].clone();
      for (KvTransferPlan.Batch b : plan.batches())
        for (int j = 0; j < b.count(); j++)
          System.arraycopy(srcBufs[b.srcBuffer()], (int) b.srcOffsets()[j], cutReference[b.dstBuffer()], (int) b.dstOffsets()[j], (int) b.sizes()[j]);
      for (KvTransferPlan.Batch b : cut.batches()) {
        boolean whole = plan.batches().stream().anyMatch(x -> x == b); // a batch too small to cut stays as it was
        assertTrue(b.count() > 0 && (whole || b.bytes() >= minPart), "part of " + b.bytes() + " bytes, min " + minPart + ": " + what);
        for (int j = 0; j < b.count(); j++)
          System.arraycopy(srcBufs[b.srcBuffer()], (int) b.srcOffsets()[j], viaCut[b.dstBuffer()], (int) b.dstOffsets()[j], (int) b.sizes()[j]);
      }
      for (int i = 0; i < viaCut.length; i++) assertArrayEquals(cutReference[i], viaCut[i], "cut in " + k + ", buffer " + i + ", " + what);
      assertEquals(plan.bytes(), cut.bytes(), what);
      assertTrue(cut.batches().size() <= plan.batches().size() * k, what);
    }
  }

  @Test
  void aLayerCutForTcpGivesEqualPartsInOrder() {
    KvCacheLayout a = KvCacheLayout.perLayer(2, 2, 64, 1024);
    int[] sb = {5, 9, 1, 30, 2, 17, 44, 8};
    int[] db = {3, 60, 12, 7, 21, 40, 0, 33};
    KvTransferPlan one = KvTransferPlan.build(a, sb, a, db, 1, 2);
    assertEquals(1, one.batches().size());
    long bytes = one.bytes(); // 8 blocks x K, V x 1 KiB
    KvTransferPlan two = one.split(2, 1024);
    assertEquals(2, two.batches().size());
    assertEquals(bytes / 2, two.batches().get(0).bytes());
    assertEquals(bytes / 2, two.batches().get(1).bytes());
    assertEquals(one.batches().get(0).srcOffsets()[0], two.batches().get(0).srcOffsets()[0]);
    assertEquals(one, one.split(1, 1024), "one part: the plan itself");
    assertEquals(one, one.split(4, bytes), "smaller than two parts of minPart: not cut");
    assertEquals(3, one.split(3, 1).batches().size());
    assertThrows(IllegalArgumentException.class, () -> one.split(2, 0));
  }

  @Test
  void consecutiveBlocksOnBothSidesBecomeOneEntryPerTensor() {
    KvCacheLayout a = KvCacheLayout.perLayer(4, 2, 64, 1024);
    KvCacheLayout b = KvCacheLayout.perLayer(4, 2, 128, 1024);
    int[] sb = {10, 11, 12, 13, 20, 21};
    int[] db = {50, 51, 52, 53, 54, 55};
    KvTransferPlan p = KvTransferPlan.build(a, sb, b, db, 0, 4);
    assertEquals(4, p.batches().size());
    // two runs on the source ({10..13}, {20, 21}) break the destination's one run in two
    assertEquals(4 * 2 * 2, p.transfers());
    assertEquals(4 * 2 * 6, p.blockSlots());
    // whole cache, same blocks, one buffer: a single copy
    KvCacheLayout s = KvCacheLayout.singleBuffer(4, 2, 8, 64);
    int[] all = {0, 1, 2, 3, 4, 5, 6, 7};
    KvTransferPlan whole = KvTransferPlan.build(s, all, s, all, 0, 4);
    assertEquals(1, whole.transfers());
    assertEquals(s.bufferBytes(), whole.bytes());
  }

  @Test
  void blockIdsOutOfRangeAndMismatchedLayoutsAreRefused() {
    KvCacheLayout a = KvCacheLayout.perLayer(4, 2, 16, 256);
    String m = assertThrows(IllegalArgumentException.class, () -> KvTransferPlan.build(a, new int[] {1, 16}, a, new int[] {0, 1}, 0, 4)).getMessage();
    assertTrue(m.contains("srcBlocks[1] = 16"), m);
    m = assertThrows(IllegalArgumentException.class, () -> KvTransferPlan.build(a, new int[] {1}, a, new int[] {-1}, 0, 4)).getMessage();
    assertTrue(m.contains("dstBlocks[0] = -1"), m);
    m = assertThrows(IllegalArgumentException.class, () -> KvTransferPlan.build(a, new int[] {1, 2}, a, new int[] {3, 3}, 0, 4)).getMessage();
    assertTrue(m.contains("dstBlocks[1] = 3 appears twice"), m);
    m = assertThrows(IllegalArgumentException.class, () -> KvTransferPlan.build(a, new int[] {1}, a, new int[] {1, 2}, 0, 4)).getMessage();
    assertTrue(m.contains("same length"), m);
    m = assertThrows(IllegalArgumentException.class, () -> KvTransferPlan.build(a, new int[] {1}, KvCacheLayout.perLayer(4, 2, 16, 512), new int[] {1}, 0, 4)).getMessage();
    assertTrue(m.contains("block bytes 256 vs 512"), m);
    m = assertThrows(IllegalArgumentException.class, () -> KvTransferPlan.build(a, new int[] {1}, KvCacheLayout.perLayer(3, 2, 16, 256), new int[] {1}, 0, 3)).getMessage();
    assertTrue(m.contains("layer count 4 vs 3"), m);
    m = assertThrows(IllegalArgumentException.class, () -> KvTransferPlan.build(a, new int[] {1}, a, new int[] {1}, 2, 2)).getMessage();
    assertTrue(m.contains("layer range [2, 2)"), m);
  }

  @Test
  void layoutsThatOverlapOrAreMalformedAreRefused() {
    String m = assertThrows(IllegalArgumentException.class, () -> new KvCacheLayout(2, 2, 8, 64, 1, 0, 64 * 4, 32)).getMessage();
    assertTrue(m.contains("blockStride 32"), m);
    m = assertThrows(IllegalArgumentException.class, () -> new KvCacheLayout(2, 2, 8, 64, 1, 0, 64 * 7, 64)).getMessage();
    assertTrue(m.contains("tensorStride 448"), m);
    m = assertThrows(IllegalArgumentException.class, () -> new KvCacheLayout(4, 2, 8, 64, 4, 1000, 512, 64)).getMessage();
    assertTrue(m.contains("layerStride 1000"), m);
    m = assertThrows(IllegalArgumentException.class, () -> new KvCacheLayout(4, 2, 8, 64, 3, 1024, 512, 64)).getMessage();
    assertTrue(m.contains("layersPerBuffer must divide layers (4): 3"), m);
    m = assertThrows(IllegalArgumentException.class, () -> KvCacheLayout.perLayer(0, 2, 8, 64)).getMessage();
    assertTrue(m.contains("layers must be at least 1: 0"), m);
    m = assertThrows(IllegalArgumentException.class, () -> KvCacheLayout.perLayer(2, 2, 8, 0)).getMessage();
    assertTrue(m.contains("blockBytes must be positive: 0"), m);
    // padded strides are fine, and the buffer size follows them
    KvCacheLayout padded = new KvCacheLayout(2, 2, 8, 64, 2, 4096, 1024, 100);
    assertEquals(4096 + 1024 + 7 * 100 + 64, padded.bufferBytes());
    KvCacheLayout v = KvCacheLayout.perLayer(80, 2, 1000, 16 * 8 * 128 * 2);
    assertEquals(KvCacheLayout.fromBytes(v.toBytes()), v);
    // a buffer per layer and tensor (SGLang's k_buffer / v_buffer)
    KvCacheLayout kv = KvCacheLayout.perLayerTensor(80, 2, 1000, 4096);
    assertEquals(160, kv.buffers());
    assertEquals(1000 * 4096, kv.bufferBytes());
    assertEquals(2 * 7 + 1, kv.bufferOf(7, 1));
    assertEquals(5 * 4096, kv.offset(7, 1, 5));
    assertEquals(KvCacheLayout.fromBytes(kv.toBytes()), kv);
    assertTrue(!kv.equals(KvCacheLayout.perLayer(80, 2, 1000, 4096)), "split and side-by-side tensors differ");
    assertEquals(null, kv.mismatch(KvCacheLayout.perLayer(80, 2, 10, 4096)), "split and combined caches exchange blocks");
    m = assertThrows(IllegalArgumentException.class, () -> new KvCacheLayout(4, 2, 8, 64, 1, 0, 512, 64, true)).getMessage();
    assertTrue(m.contains("tensorStride must be 0") && m.contains("512"), m);
    m = assertThrows(IllegalArgumentException.class, () -> new KvCacheLayout(4, 2, 8, 64, 2, 100, 0, 64, true)).getMessage();
    assertTrue(m.contains("layerStride 100"), m);
    assertThrows(IllegalArgumentException.class, () -> KvCacheLayout.fromBytes(new byte[] {1, 2, 3}));
  }

  /**
   * A migration issued in calls ({@link KvChunks}) must move what one call moves with the same entries: the plans of
   * the calls' layer ranges, put end to end, are the whole range's plan, batch for batch (no buffer pair cut in two,
   * so no run is split and no batch is added).
   */
  @Test
  void theCallsOfAChunkedRangeHaveExactlyTheBatchesOfOneCall() {
    SplittableRandom rnd = new SplittableRandom(0x63686bL);
    for (int c = 0; c < 400; c++) {
      int layers = 1 + rnd.nextInt(12);
      int tensors = 1 + rnd.nextInt(2);
      long blockBytes = 1 + rnd.nextInt(24);
      KvCacheLayout src = randomLayout(rnd, layers, tensors, 1 + rnd.nextInt(20), blockBytes);
      KvCacheLayout dst = randomLayout(rnd, layers, tensors, 1 + rnd.nextInt(20), blockBytes);
      int n = 1 + rnd.nextInt(Math.min(src.blocks(), dst.blocks()));
      int[] sb = pick(rnd, src.blocks(), n), db = pick(rnd, dst.blocks(), n);
      int from = rnd.nextInt(layers);
      int to = from + 1 + rnd.nextInt(layers - from);
      String what = "case " + c + ": " + src + " -> " + dst + " layers [" + from + ", " + to + ")";
      KvTransferPlan.Prepared p = KvTransferPlan.prepare(src, sb, dst, db);
      int unit = p.layerUnit();
      assertEquals(0, src.layers() % unit, what);
      assertEquals(0, unit % src.layersPerBuffer(), what);
      assertEquals(0, unit % dst.layersPerBuffer(), what);
      KvTransferPlan whole = p.plan(from, to);
      KvChunks calls = new KvChunks(from, to, rnd.nextInt(4), unit);
      List<KvTransferPlan.Batch> joined = new ArrayList<>();
      int slots = 0;
      for (int a = from, b; a < to; a = b) {
        b = calls.next(a);
        assertTrue(b > a && b <= to, what + ": call [" + a + ", " + b + ")");
        if (b < to) assertEquals(0, b % unit, what + ": call [" + a + ", " + b + ") ends inside a buffer group");
        KvTransferPlan part = p.plan(a, b);
        joined.addAll(part.batches());
        slots += part.blockSlots();
      }
      assertEquals(whole.blockSlots(), slots, what);
      assertEquals(whole.batches().size(), joined.size(), what);
      for (int k = 0; k < joined.size(); k++) {
        KvTransferPlan.Batch x = whole.batches().get(k), y = joined.get(k);
        assertEquals(x.srcBuffer(), y.srcBuffer(), what);
        assertEquals(x.dstBuffer(), y.dstBuffer(), what);
        assertArrayEquals(x.srcOffsets(), y.srcOffsets(), what);
        assertArrayEquals(x.dstOffsets(), y.dstOffsets(), what);
        assertArrayEquals(x.sizes(), y.sizes(), what);
      }
    }
  }

  @Test
  void chunksStartSmallDoubleAndEndOnBufferGroups() {
    List<Integer> ends = new ArrayList<>();
    KvChunks k = new KvChunks(0, 80, 1, 1);
    for (int a = 0; a < 80; a = ends.get(ends.size() - 1)) ends.add(k.next(a));
    assertEquals(List.of(1, 3, 7, 15, 31, 63, 80), ends);
    assertEquals(80, new KvChunks(0, 80, 0, 1).next(0), "0: one call");
    KvChunks g = new KvChunks(3, 20, 1, 4);
    assertEquals(4, g.next(3));
    assertEquals(8, g.next(4));
    assertEquals(12, g.next(8));
    assertEquals(20, g.next(12));
    assertThrows(IllegalArgumentException.class, () -> new KvChunks(2, 2, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> new KvChunks(0, 4, -1, 1));
  }

  private static KvCacheLayout randomLayout(SplittableRandom rnd, int layers, int tensors, int blocks, long bb) {
    switch (rnd.nextInt(6)) {
      case 0: return KvCacheLayout.perLayer(layers, tensors, blocks, bb);
      case 4: return KvCacheLayout.perLayerTensor(layers, tensors, blocks, bb);
      case 5: {
        // a buffer per tensor holding several layers (one K pool and one V pool per group of layers), padded
        List<Integer> divisors = new ArrayList<>();
        for (int d = 1; d <= layers; d++) if (layers % d == 0) divisors.add(d);
        int lpb = divisors.get(rnd.nextInt(divisors.size()));
        long blockStride = bb + rnd.nextInt(3);
        long layerStride = blockStride * (blocks - 1) + bb + rnd.nextInt(7);
        return new KvCacheLayout(layers, tensors, blocks, bb, lpb, layerStride, 0, blockStride, true);
      }
      case 1: return KvCacheLayout.singleBuffer(layers, tensors, blocks, bb);
      case 2: return KvCacheLayout.blockMajor(layers, tensors, blocks, bb);
      default: {
        // padded layer-major with a random number of layers per buffer
        List<Integer> divisors = new ArrayList<>();
        for (int d = 1; d <= layers; d++) if (layers % d == 0) divisors.add(d);
        int lpb = divisors.get(rnd.nextInt(divisors.size()));
        long blockStride = bb + rnd.nextInt(3);
        long tensorStride = blockStride * (blocks - 1) + bb + rnd.nextInt(5);
        long layerStride = tensorStride * (tensors - 1) + blockStride * (blocks - 1) + bb + rnd.nextInt(7);
        return new KvCacheLayout(layers, tensors, blocks, bb, lpb, layerStride, tensorStride, blockStride);
      }
    }
  }

  /** {@code n} distinct ids: either a shuffled free list or a few consecutive runs. */
  private static int[] pick(SplittableRandom rnd, int blocks, int n) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < blocks; i++) ids.add(i);
    int[] out = new int[n];
    if (rnd.nextBoolean()) {
      Collections.shuffle(ids, new java.util.Random(rnd.nextLong()));
      for (int i = 0; i < n; i++) out[i] = ids.get(i);
    } else {
      int start = rnd.nextInt(blocks - n + 1);
      for (int i = 0; i < n; i++) out[i] = start + i;
    }
    return out;
  }

  private static byte[][] buffers(KvCacheLayout l, SplittableRandom rnd, boolean canary) {
    byte[][] b = new byte[l.buffers()][(int) l.bufferBytes() + 3];
    for (byte[] x : b) for (int i = 0; i < x.length; i++) x[i] = canary ? (byte) (0xA5 ^ i) : (byte) rnd.nextInt();
    return b;
  }

  @Test
  void pooledPlansEqualFreshOnesAndReuseTheirArrays() {
    SplittableRandom rnd = new SplittableRandom(0x706f6fL);
    KvPlanArrays pool = new KvPlanArrays(1 << 20);
    for (int c = 0; c < 200; c++) {
      int layers = 1 + rnd.nextInt(4);
      KvCacheLayout src = KvCacheLayout.perLayer(layers, 2, 24, 64), dst = KvCacheLayout.perLayer(layers, 2, 24, 64);
      int n = 1 + rnd.nextInt(24);
      // half the cases sorted on both sides, so that runs join and the builder trims into exact-length arrays
      int[] sb = pick(rnd, 24, n), db = pick(rnd, 24, n);
      if (c % 2 == 0) {
        java.util.Arrays.sort(sb);
        java.util.Arrays.sort(db);
      }
      KvTransferPlan.Prepared p = KvTransferPlan.prepare(src, sb, dst, db);
      int from = rnd.nextInt(layers), to = from + 1 + rnd.nextInt(layers - from);
      KvTransferPlan fresh = p.plan(from, to), pooled = p.plan(from, to, pool);
      assertEquals(fresh.batches().size(), pooled.batches().size(), "case " + c);
      for (int b = 0; b < fresh.batches().size(); b++) {
        KvTransferPlan.Batch x = fresh.batches().get(b), y = pooled.batches().get(b);
        assertEquals(x.srcBuffer(), y.srcBuffer());
        assertEquals(x.dstBuffer(), y.dstBuffer());
        assertEquals(x.bytes(), y.bytes());
        assertArrayEquals(x.srcOffsets(), y.srcOffsets(), "case " + c + " batch " + b);
        assertArrayEquals(x.dstOffsets(), y.dstOffsets(), "case " + c + " batch " + b);
        assertArrayEquals(x.sizes(), y.sizes(), "case " + c + " batch " + b);
        // stale contents must never show through in a later plan
        java.util.Arrays.fill(y.srcOffsets(), -7);
        java.util.Arrays.fill(y.dstOffsets(), -7);
        java.util.Arrays.fill(y.sizes(), -7);
      }
      pooled.release(pool);
      assertTrue(pool.pooledBytes() <= 1 << 20);
    }
    long[] tr = pool.takenAndReused();
    assertTrue(tr[1] > tr[0] / 2, "most takes served by the pool: " + tr[1] + " of " + tr[0]);
    KvPlanArrays none = new KvPlanArrays(0);
    none.give(new long[8]);
    assertEquals(0, none.pooledBytes());
    assertThrows(IllegalArgumentException.class, () -> new KvPlanArrays(-1));
  }
}
