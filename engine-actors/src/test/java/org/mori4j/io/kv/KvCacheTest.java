package org.mori4j.io.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.BackendType;

/** KV caches on two engines of this JVM over TCP on loopback: push, pull, streaming, refusals, cancellation, a lost peer. */
class KvCacheTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  static IoEngine prefill;
  static IoEngine decode;
  static Arena arena;
  static int seq;

  static TcpEnginePair pair;

  @BeforeAll
  static void start() {
    pair = new TcpEnginePair("kv-prefill", "kv-decode");
    prefill = pair.first;
    decode = pair.second;
    arena = pair.arena;
  }

  @AfterAll
  static void stop() {
    pair.close();
  }

  /** A cache with its buffers filled: random bytes, or a canary pattern. */
  static KvCache cache(IoEngine e, KvCacheLayout l, long seed) {
    List<MemorySegment> bufs = new ArrayList<>();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < l.buffers(); i++) {
      MemorySegment s = arena.allocate(l.bufferBytes() + 64, 64);
      for (long j = 0; j < s.byteSize(); j++) s.set(ValueLayout.JAVA_BYTE, j, seed < 0 ? (byte) (0x5A ^ j) : (byte) r.nextInt());
      bufs.add(s);
    }
    KvCache c = KvCache.create(e, "cache-" + (++seq), l, bufs);
    // every TCP batch of these small caches cut in three requests (two lanes), as a 16 MiB layer is cut in two by
    // default: pushes, pulls, streams, cancellations and a lost peer all go through the cut path
    c.cutForTcp(3, 64);
    SEGMENTS.put(c, bufs);
    return c;
  }

  static final java.util.Map<KvCache, List<MemorySegment>> SEGMENTS = new java.util.concurrent.ConcurrentHashMap<>();

  static byte[][] snapshot(KvCache c) {
    List<MemorySegment> s = SEGMENTS.get(c);
    byte[][] out = new byte[s.size()][];
    for (int i = 0; i < out.length; i++) out[i] = s.get(i).toArray(ValueLayout.JAVA_BYTE);
    return out;
  }

  /** What {@code dst} must hold after blocks moved for layers [from, to): computed block by block. */
  static byte[][] expected(KvCache src, int[] sb, KvCache dst, int[] db, int from, int to, byte[][] dstBefore) {
    byte[][] s = snapshot(src);
    byte[][] out = new byte[dstBefore.length][];
    for (int i = 0; i < out.length; i++) out[i] = dstBefore[i].clone();
    KvCacheLayout a = src.layout(), b = dst.layout();
    for (int l = from; l < to; l++)
      for (int t = 0; t < a.tensorsPerLayer(); t++)
        for (int i = 0; i < sb.length; i++)
          System.arraycopy(s[a.bufferOf(l, t)], (int) a.offset(l, t, sb[i]), out[b.bufferOf(l, t)], (int) b.offset(l, t, db[i]), (int) a.blockBytes());
    return out;
  }

  static void assertBytes(byte[][] want, KvCache c) {
    byte[][] got = snapshot(c);
    for (int i = 0; i < want.length; i++) assertArrayEquals(want[i], got[i], "buffer " + i + " of " + c.name());
  }

  static int[] scattered(int blocks, int n, long seed) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < blocks; i++) ids.add(i);
    Collections.shuffle(ids, new java.util.Random(seed));
    int[] out = new int[n];
    for (int i = 0; i < n; i++) out[i] = ids.get(i);
    return out;
  }

  @Test
  void pushMovesEveryBlockIntoTheReceiversBlockTableAndTellsIt() throws Exception {
    try (KvCache src = cache(prefill, KvCacheLayout.perLayer(4, 2, 32, 256), 1);
         KvCache dst = cache(decode, KvCacheLayout.singleBuffer(4, 2, 48, 256), -1)) {
      src.cutForTcp(1, 1); // whole batches: the entry count below is the coalescing's alone
      int[] sb = {3, 4, 5, 6, 20, 9, 10, 31};
      int[] db = {10, 11, 12, 13, 40, 2, 3, 47};
      byte[][] want = expected(src, sb, dst, db, 0, 4, snapshot(dst));
      var landed = dst.whenLanded("r1", 0, 4).toCompletableFuture();
      KvMigration m = src.push("r1", sb, KvCacheDesc.fromBytes(dst.desc().toBytes()), db);
      assertTrue(m.await(WAIT));
      assertEquals(StatusCode.SUCCESS, m.code(), m.message());
      assertNull(landed.get(20, TimeUnit.SECONDS));
      assertBytes(want, dst);
      assertEquals(8L * 4 * 2 * 256, m.bytes());
      // runs 3..6 -> 10..13 and 9..10 -> 2..3 coalesce: 4 entries per (layer, tensor) instead of 8
      assertEquals(4 * 2 * 4, m.transfers());
      assertEquals(4 * 2 * 8, m.blockSlots());
    }
  }

  @Test
  void aPushIssuedInSeveralCallsMovesWhatOneCallMoves() {
    int[] sb = scattered(32, 20, 21), db = scattered(40, 20, 22);
    long[] entries = new long[2];
    for (int first : new int[] {1, 0}) {
      try (KvCache src = cache(prefill, KvCacheLayout.perLayer(8, 2, 32, 256), 20);
           KvCache dst = cache(decode, KvCacheLayout.perLayer(8, 2, 40, 256), -1)) {
        src.chunkLayers(first); // 1: calls of layers [0,1) [1,3) [3,7) [7,8); 0: one call
        byte[][] want = expected(src, sb, dst, db, 0, 8, snapshot(dst));
        KvMigration m = src.push("chunks-" + first, sb, dst.desc(), db);
        assertTrue(m.await(WAIT));
        assertEquals(StatusCode.SUCCESS, m.code(), m.message());
        assertBytes(want, dst);
        assertEquals(20L * 8 * 2 * 256, m.bytes());
        entries[first] = m.transfers();
      }
    }
    assertEquals(entries[0], entries[1], "the same coalesced entries in several calls as in one");
  }

  @Test
  void pullReadsTheRemoteBlocksIntoThisCache() {
    try (KvCache src = cache(prefill, KvCacheLayout.blockMajor(3, 1, 40, 576 * 2), 2);
         KvCache dst = cache(decode, KvCacheLayout.perLayer(3, 1, 24, 576 * 2), -1)) {
      int[] sb = scattered(40, 24, 3);
      int[] db = scattered(24, 24, 4);
      byte[][] want = expected(src, sb, dst, db, 0, 3, snapshot(dst));
      KvMigration m = dst.pull("r2", sb, src.desc(), db);
      assertTrue(m.await(WAIT));
      assertEquals(StatusCode.SUCCESS, m.code(), m.message());
      assertTrue(dst.awaitLanded("r2", 0, 3, WAIT));
      assertBytes(want, dst);
    }
  }

  @Test
  void aCacheWithABufferPerLayerAndTensorExchangesBlocksWithAPerLayerCache() {
    // SGLang-style k_buffer/v_buffer pools on one side, vLLM's per-layer [2, blocks, ...] buffers on the other
    try (KvCache sglang = cache(prefill, KvCacheLayout.perLayerTensor(3, 2, 20, 384), 13);
         KvCache vllm = cache(decode, KvCacheLayout.perLayer(3, 2, 28, 384), -1)) {
      assertEquals(6, sglang.desc().buffers().size());
      int[] sb = scattered(20, 12, 14);
      int[] db = scattered(28, 12, 15);
      byte[][] want = expected(sglang, sb, vllm, db, 0, 3, snapshot(vllm));
      KvMigration m = sglang.push("r-split", sb, vllm.desc(), db);
      assertTrue(m.await(WAIT));
      assertEquals(StatusCode.SUCCESS, m.code(), m.message());
      assertBytes(want, vllm);
      // and back: the split cache pulls the blocks it sent from the per-layer cache into other blocks of its own
      int[] back = {19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8};
      byte[][] wantBack = expected(vllm, db, sglang, back, 0, 3, snapshot(sglang));
      KvMigration p = sglang.pull("r-split-back", db, vllm.desc(), back);
      assertTrue(p.await(WAIT));
      assertEquals(StatusCode.SUCCESS, p.code(), p.message());
      assertBytes(wantBack, sglang);
    }
  }

  @Test
  void streamedLayersLandInAnyOrderAndTheReceiverHearsEachRange() throws Exception {
    try (KvCache src = cache(prefill, KvCacheLayout.perLayer(6, 2, 16, 512), 5);
         KvCache dst = cache(decode, KvCacheLayout.perLayer(6, 2, 16, 512), -1)) {
      int[] sb = scattered(16, 10, 8);
      int[] db = scattered(16, 10, 9);
      byte[][] before = snapshot(dst);
      List<KvLayersLanded> heard = new CopyOnWriteArrayList<>();
      try (AutoCloseable sub = dst.subscribe(heard::add)) {
        KvMigration m = src.openStream("r3", sb, dst.desc(), db);
        // in order first
        assertEquals(StatusCode.SUCCESS, src.sendLayers("r3", 0, 2).toCompletableFuture().get(20, TimeUnit.SECONDS).code());
        assertTrue(dst.awaitLanded("r3", 0, 2, WAIT));
        assertBytes(expected(src, sb, dst, db, 0, 2, before), dst);
        assertFalse(dst.awaitLanded("r3", 0, 3, Duration.ofMillis(50)));
        // then out of order
        var c5 = m.sendLayers(5, 6);
        var c2 = m.sendLayers(2, 5);
        assertEquals(StatusCode.SUCCESS, c5.toCompletableFuture().get(20, TimeUnit.SECONDS).code());
        assertEquals(StatusCode.SUCCESS, c2.toCompletableFuture().get(20, TimeUnit.SECONDS).code());
        assertTrue(m.await(WAIT));
        assertEquals(StatusCode.SUCCESS, m.code(), m.message());
        assertTrue(dst.awaitLanded("r3", 0, 6, WAIT));
        assertBytes(expected(src, sb, dst, db, 0, 6, before), dst);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (heard.size() < 3 && System.nanoTime() < deadline) Thread.sleep(5);
        assertEquals(3, heard.size(), heard.toString());
        java.util.BitSet layers = new java.util.BitSet();
        for (KvLayersLanded e : heard) {
          assertEquals("r3", e.requestId());
          assertEquals("kv-prefill", e.fromEngine());
          layers.set(e.fromLayer(), e.toLayer());
        }
        assertEquals(6, layers.cardinality());
        // a finished stream takes no more layers
        assertEquals(StatusCode.ERR_NOT_FOUND, src.sendLayers("r3", 0, 1).toCompletableFuture().get().code());
      }
    }
  }

  @Test
  void forgedBlockIdsAndMismatchedLayoutsAreRefusedBeforeAByteMoves() throws Exception {
    try (KvCache src = cache(prefill, KvCacheLayout.perLayer(2, 2, 8, 128), 6);
         KvCache dst = cache(decode, KvCacheLayout.perLayer(2, 2, 8, 128), -1);
         KvCache other = cache(decode, KvCacheLayout.perLayer(2, 2, 8, 256), -1);
         KvCache shallow = cache(decode, KvCacheLayout.perLayer(3, 2, 8, 128), -1)) {
      byte[][] before = snapshot(dst);
      KvMigration m = src.push("bad1", new int[] {1, 2}, dst.desc(), new int[] {3, 8});
      assertEquals(StatusCode.ERR_INVALID_ARGS, m.code());
      assertTrue(m.message().contains("bad1") && m.message().contains("dstBlocks[1] = 8"), m.message());
      m = src.push("bad2", new int[] {-1}, dst.desc(), new int[] {3});
      assertTrue(m.message().contains("srcBlocks[0] = -1"), m.message());
      m = src.push("bad3", new int[] {1}, other.desc(), new int[] {1});
      assertTrue(m.message().contains("block bytes 128 vs 256"), m.message());
      m = dst.pull("bad4", new int[] {1}, shallow.desc(), new int[] {1});
      assertTrue(m.message().contains("layer count 2 vs 3"), m.message());
      KvMigration s = src.openStream("bad5", new int[] {1}, dst.desc(), new int[] {1});
      assertEquals(StatusCode.ERR_INVALID_ARGS, s.sendLayers(1, 3).toCompletableFuture().get().code());
      assertEquals(StatusCode.SUCCESS, s.sendLayers(1, 2).toCompletableFuture().get(20, TimeUnit.SECONDS).code());
      KvMigration.Chunk again = s.sendLayers(1, 2).toCompletableFuture().get();
      assertEquals(StatusCode.ERR_INVALID_ARGS, again.code());
      assertTrue(again.message().contains("layer 1 was already sent"), again.message());
      assertTrue(s.cancel());
      assertBytes(expected(src, new int[] {1}, dst, new int[] {1}, 1, 2, before), dst);
    }
  }

  @Test
  void cancellingAStreamRefusesTheRestAndTellsTheReceiver() throws Exception {
    try (KvCache src = cache(prefill, KvCacheLayout.perLayer(4, 2, 8, 128), 9);
         KvCache dst = cache(decode, KvCacheLayout.perLayer(4, 2, 8, 128), -1)) {
      var waiting = dst.whenLanded("r5", 0, 4).toCompletableFuture();
      KvMigration m = src.openStream("r5", new int[] {0, 1}, dst.desc(), new int[] {2, 3});
      assertEquals(StatusCode.SUCCESS, m.sendLayers(0, 1).toCompletableFuture().get(20, TimeUnit.SECONDS).code());
      assertTrue(m.cancel());
      assertFalse(m.cancel());
      // the code a cancelled TransferStatus has (TransferStatus.cancel(): ERR_TIMEOUT, "cancelled by the caller")
      assertEquals(StatusCode.ERR_TIMEOUT, m.code());
      assertTrue(m.message().contains("r5") && m.message().contains("cancelled by the caller"), m.message());
      assertEquals(StatusCode.ERR_BAD_STATE, m.sendLayers(1, 2).toCompletableFuture().get().code());
      String why = waiting.get(20, TimeUnit.SECONDS);
      assertTrue(why != null && why.contains("cancelled"), String.valueOf(why));
    }
  }

  @Test
  void cancellingAPullCancelsItsIssuedTransfersSoNoByteLandsAfterwards() throws Exception {
    // 8 layers x 2 tensors x 48 blocks of 64 KiB = 48 MiB: long enough on loopback for cancel() to find reads under way
    try (KvCache src = cache(prefill, KvCacheLayout.perLayer(8, 2, 48, 64 * 1024), 16);
         KvCache dst = cache(decode, KvCacheLayout.perLayer(8, 2, 48, 64 * 1024), -1)) {
      int[] sb = scattered(48, 48, 17), db = scattered(48, 48, 18);
      KvMigration m = null;
      boolean cancelled = false;
      for (int attempt = 0; attempt < 5 && !cancelled; attempt++) {
        m = dst.pull("r-cancel-" + attempt, sb, src.desc(), db);
        cancelled = m.cancel();
        if (!cancelled) assertTrue(m.await(WAIT));
      }
      assertTrue(cancelled, "5 pulls of 48 MiB all ended before cancel(): " + m);
      assertEquals(StatusCode.ERR_TIMEOUT, m.code());
      assertTrue(m.message().contains(m.requestId()) && m.message().contains("cancelled by the caller"), m.message());
      // every issued transfer ended with the cancel, and none of them writes into this cache any more
      assertEquals(0, m.transfersInFlight());
      byte[][] after = snapshot(dst);
      Thread.sleep(300);
      byte[][] later = snapshot(dst);
      for (int i = 0; i < after.length; i++) assertArrayEquals(after[i], later[i], "buffer " + i + " changed after cancel() returned");
      assertFalse(dst.awaitLanded(m.requestId(), 0, 8, Duration.ofMillis(200)), "a cancelled pull never reports its layers landed");
      // the engines still work: the same blocks pulled again arrive whole
      byte[][] want = expected(src, sb, dst, db, 0, 8, snapshot(dst));
      KvMigration again = dst.pull("r-cancel-again", sb, src.desc(), db);
      assertTrue(again.await(WAIT));
      assertEquals(StatusCode.SUCCESS, again.code(), again.message());
      assertBytes(want, dst);
    }
  }

  @Test
  void aMigrationToALostPeerFailsWithPeerLostNamingTheRequest() {
    IoEngine lonely = IoEngine.create("kv-lonely", IoEngineConfig.loopback());
    try {
      lonely.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      lonely.registerRemoteEngine(decode.engineDesc());
      try (KvCache src = cache(lonely, KvCacheLayout.perLayer(2, 1, 8, 128), 11);
           KvCache dst = cache(decode, KvCacheLayout.perLayer(2, 1, 8, 128), -1)) {
        lonely.markPeerLost("kv-decode", "test: member left");
        KvMigration m = src.push("r6", new int[] {1}, dst.desc(), new int[] {1});
        assertTrue(m.await(WAIT));
        assertEquals(StatusCode.ERR_PEER_LOST, m.code(), m.message());
        assertTrue(m.message().contains("request 'r6'"), m.message());
      }
    } finally {
      lonely.close();
    }
  }

  @Test
  void descriptorsTravelAsBytesAndNamesAreUniquePerEngine() {
    try (KvCache c = cache(prefill, KvCacheLayout.singleBuffer(2, 2, 4, 64), 12)) {
      KvCacheDesc d = KvCacheDesc.fromBytes(c.desc().toBytes());
      assertEquals(c.desc(), d);
      var ex = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
          () -> KvCache.create(prefill, c.name(), c.layout(), List.of(arena.allocate(c.layout().bufferBytes()))));
      assertTrue(ex.getMessage().contains("already open"), ex.getMessage());
      var small = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
          () -> KvCache.create(prefill, "small", c.layout(), List.of(arena.allocate(16))));
      assertTrue(small.getMessage().contains("buffer 0 has 16 bytes"), small.getMessage());
    }
  }
}
