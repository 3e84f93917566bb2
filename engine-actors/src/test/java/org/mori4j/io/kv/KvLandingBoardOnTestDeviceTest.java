package org.mori4j.io.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TestGpuDevice;
import org.mori4j.io.XgmiBackendConfig;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * KV migrations between two engines of this JVM over XGMI on transport's in-memory device, with the receiver's
 * endpoint dropping every sender's {@link KvProtocol.LayersLanded} message: what the receiver hears then came
 * through its landing board. Streams in and out of order and a push are heard once per range, with the bytes in
 * place; board entries that name no write the receiver was told of by that sender (garbage, another sender's id,
 * uids never announced, another incarnation of the sender) report nothing; a cancelled stream is still heard as aborted.
 */
class KvLandingBoardOnTestDeviceTest {
  private static final String MODE = "kv-board-test-device";
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final KvCacheLayout LAYOUT = KvCacheLayout.perLayer(4, 2, 6, 4096);
  private static HostBackedGpuRuntime device;
  private static IoEngine tx, rx;
  private static DeviceBuffer[] srcMem, dstMem;
  private static KvCache src, dst;

  @BeforeAll
  static void start() {
    device = TestGpuDevice.select(MODE, new HostBackedGpuRuntime(2, 0));
    String pid = String.valueOf(ProcessHandle.current().pid());
    tx = engine("kv-board-tx-" + pid);
    rx = engine("kv-board-rx-" + pid);
    tx.registerRemoteEngine(rx.engineDesc());
    rx.registerRemoteEngine(tx.engineDesc());
    srcMem = alloc(0);
    dstMem = alloc(1);
    src = KvCache.createAt(tx, "kv-board-src", LAYOUT, addresses(srcMem), LAYOUT.bufferBytes(), 0, MemoryLocationType.GPU);
    dst = KvCache.createAt(rx, "kv-board-dst", LAYOUT, addresses(dstMem), LAYOUT.bufferBytes(), 1, MemoryLocationType.GPU);
    KvEndpoint.of(rx).ignoreSenderMessages = true;
  }

  @AfterAll
  static void stop() {
    if (src != null) src.close();
    if (dst != null) dst.close();
    if (tx != null) tx.close();
    if (rx != null) rx.close();
    for (DeviceBuffer[] m : new DeviceBuffer[][] {srcMem, dstMem}) if (m != null) for (DeviceBuffer b : m) b.close();
    TestGpuDevice.forget(MODE, device);
  }

  private static IoEngine engine(String key) {
    IoEngine e = IoEngine.create(key, IoEngineConfig.loopback());
    e.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
    return e;
  }

  private static DeviceBuffer[] alloc(int dev) {
    DeviceBuffer[] b = new DeviceBuffer[LAYOUT.buffers()];
    for (int i = 0; i < b.length; i++) b[i] = device.allocDevice(dev, LAYOUT.bufferBytes());
    return b;
  }

  private static long[] addresses(DeviceBuffer[] b) {
    long[] a = new long[b.length];
    for (int i = 0; i < b.length; i++) a[i] = b[i].address();
    return a;
  }

  /** Fresh bytes in every source buffer, zeros in every destination buffer. */
  private static void fill(long seed) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment h = a.allocate(LAYOUT.bufferBytes(), 64);
      Random r = new Random(seed);
      for (DeviceBuffer b : srcMem) {
        for (long o = 0; o < h.byteSize(); o += 8) h.set(ValueLayout.JAVA_LONG, o, r.nextLong());
        device.copyHostToDevice(b.address(), h, h.byteSize());
      }
      h.fill((byte) 0);
      for (DeviceBuffer b : dstMem) device.copyHostToDevice(b.address(), h, h.byteSize());
    }
  }

  /** Every (layer, tensor) slot of {@code from[i]} is in {@code to[i]}. */
  private static void checkBytes(int[] from, int[] to) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment s = a.allocate(LAYOUT.bufferBytes(), 64), d = a.allocate(LAYOUT.bufferBytes(), 64);
      for (int buf = 0; buf < LAYOUT.buffers(); buf++) {
        device.copyDeviceToHost(s, srcMem[buf].address(), s.byteSize());
        device.copyDeviceToHost(d, dstMem[buf].address(), d.byteSize());
        for (int t = 0; t < 2; t++)
          for (int i = 0; i < from.length; i++) {
            long so = t * LAYOUT.blocks() * LAYOUT.blockBytes() + from[i] * LAYOUT.blockBytes();
            long dof = t * LAYOUT.blocks() * LAYOUT.blockBytes() + to[i] * LAYOUT.blockBytes();
            assertArrayEquals(s.asSlice(so, LAYOUT.blockBytes()).toArray(ValueLayout.JAVA_BYTE), d.asSlice(dof, LAYOUT.blockBytes()).toArray(ValueLayout.JAVA_BYTE),
                "buffer " + buf + " tensor " + t + " block " + from[i] + " -> " + to[i]);
          }
      }
    }
  }

  @Test
  void theReceiverOwnsABoardAndTheSenderPostsToIt() {
    assertNotNull(KvEndpoint.of(rx).boards.own(), "an engine with XGMI has a landing board");
    assertNotNull(src.landingBoard(dst.desc()), "XGMI peer on this host: the sender maps its board");
  }

  @Test
  void aStreamInAndOutOfOrderAndAPushAreHeardThroughTheBoardOnce() throws Exception {
    int[] from = {0, 2, 3}, to = {5, 1, 2};
    List<KvLayersLanded> heard = new CopyOnWriteArrayList<>();
    try (AutoCloseable sub = dst.subscribe(heard::add)) {
      fill(1);
      KvMigration m = src.openStream("board-s1", from, dst.desc(), to);
      for (int[] r : new int[][] {{2, 3}, {0, 1}, {3, 4}, {1, 2}})
        assertEquals(StatusCode.SUCCESS, m.sendLayers(r[0], r[1]).toCompletableFuture().get().code());
      assertTrue(dst.awaitLanded("board-s1", 0, 4, WAIT), "every layer heard with the senders' messages dropped");
      assertTrue(m.await(WAIT));
      assertEquals(StatusCode.SUCCESS, m.code(), m.message());
      checkBytes(from, to);

      fill(2);
      KvMigration ranged = src.openStream("board-s2", from, dst.desc(), to);
      assertEquals(StatusCode.SUCCESS, ranged.sendLayers(1, 4).toCompletableFuture().get().code());
      assertEquals(StatusCode.SUCCESS, ranged.sendLayers(0, 1).toCompletableFuture().get().code());
      assertTrue(dst.awaitLanded("board-s2", 0, 4, WAIT), "a range of several layers too");
      checkBytes(from, to);

      fill(3);
      KvMigration push = src.push("board-p", from, dst.desc(), to);
      assertTrue(dst.awaitLanded("board-p", 0, 4, WAIT), "a push is heard through the board as well");
      assertTrue(push.await(WAIT));
      checkBytes(from, to);
      // waiters are completed before subscribers are called (on the board's reader thread): wait for the last event
      for (long end = System.nanoTime() + WAIT.toNanos(); System.nanoTime() < end && heard.stream().noneMatch(e -> e.requestId().equals("board-p")); )
        Thread.sleep(5);
    }
    assertEquals(4, heard.stream().filter(e -> e.requestId().equals("board-s1")).count(), heard.toString());
    for (int l = 0; l < 4; l++) {
      int layer = l;
      assertEquals(1, heard.stream().filter(e -> e.requestId().equals("board-s1") && e.fromLayer() == layer && e.toLayer() == layer + 1).count());
    }
    // each range once, in no promised order (subscribe's Javadoc): a range is published by whichever thread completes
    // it (the board's reader, or the endpoint on an announcement that claims entries read before it)
    assertEquals(List.of("0-1", "1-4"), heard.stream().filter(e -> e.requestId().equals("board-s2")).map(e -> e.fromLayer() + "-" + e.toLayer()).sorted().toList());
    assertEquals(1, heard.stream().filter(e -> e.requestId().equals("board-p")).count(), heard.toString());
    for (String r : List.of("board-s1", "board-s2", "board-p")) dst.forget(r);
  }

  /**
   * A sender that restarts keeps its engine key and counts its uids from the start again, so entries its previous
   * incarnation left on the board can name exactly the uids the new incarnation announces. Such entries, whether read
   * before the announcement (kept as early entries) or after it, must complete nothing: the range stays unlanded
   * although every one of its uids was posted with the sender's own id.
   */
  @Test
  void entriesOfAnotherIncarnationOfTheSenderCompleteNothing() throws Exception {
    List<KvLayersLanded> heard = new CopyOnWriteArrayList<>();
    long txId = KvLandingBoard.hash64(tx.key()), inc = tx.engineDesc().incarnation();
    long first = tx.allocateTransferUid();
    // only this request's events: the sender's fallback message for an earlier test's request can still arrive
    // after that request was forgotten, and is then reported again (KvCache.forget)
    try (AutoCloseable sub = dst.subscribe(e -> { if (e.requestId().equals("board-old-incarnation")) heard.add(e); });
         KvLandingBoard old = KvLandingBoard.open(KvLandingBoard.directory(""), rx.key(), rx.engineDesc().incarnation())) {
      assertNotNull(old);
      // the old incarnation's entries for the uids the stream is about to take, before it announces them
      for (long u = first + 1; u <= first + 64; u++) assertTrue(old.post(KvLandingBoard.KIND_LANDED, txId, inc - 1, u));
      KvMigration m = src.openStream("board-old-incarnation", new int[] {0, 3}, dst.desc(), new int[] {2, 4});
      long last = tx.allocateTransferUid();
      assertTrue(last - first > 1 && last - first <= 64, "the stream's uids lie in the range posted: " + first + ".." + last);
      CompletableFuture<String> landed = dst.whenLanded("board-old-incarnation", 0, 1).toCompletableFuture();
      // and again once the announcement was registered (a local hop), from an incarnation after it too
      Thread.sleep(100);
      for (long u = first + 1; u < last; u++) {
        assertTrue(old.post(KvLandingBoard.KIND_LANDED, txId, inc - 1, u));
        assertTrue(old.post(KvLandingBoard.KIND_LANDED, txId, inc + 1, u));
      }
      Thread.sleep(300);
      assertFalse(landed.isDone(), "another incarnation's entries reported the range landed: " + heard);
      assertTrue(heard.isEmpty(), heard.toString());
      assertTrue(m.cancel());
      assertEquals("cancelled by the sender", landed.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS));
    }
    dst.forget("board-old-incarnation");
  }

  @Test
  void entriesNamingNoAnnouncedWriteOfTheirSenderReportNothing() throws Exception {
    List<KvLayersLanded> heard = new CopyOnWriteArrayList<>();
    long first = tx.allocateTransferUid();
    KvMigration m = src.openStream("board-forged", new int[] {1}, dst.desc(), new int[] {4});
    long last = tx.allocateTransferUid();
    CompletableFuture<String> landed = dst.whenLanded("board-forged", 0, 1).toCompletableFuture();
    try (AutoCloseable sub = dst.subscribe(e -> { if (e.requestId().equals("board-forged")) heard.add(e); });
         KvLandingBoard forger = KvLandingBoard.open(KvLandingBoard.directory(""), rx.key(), rx.engineDesc().incarnation())) {
      assertNotNull(forger);
      Random r = new Random(7);
      long txId = KvLandingBoard.hash64(tx.key()), inc = tx.engineDesc().incarnation();
      for (int i = 0; i < 200; i++) forger.post(KvLandingBoard.KIND_LANDED, r.nextLong(), r.nextLong(), r.nextLong()); // garbage
      for (long u = first; u <= last; u++) forger.post(KvLandingBoard.KIND_LANDED, txId + 1, inc, u); // the stream's uids, another sender's id
      for (long u = last + 1; u < last + 50; u++) forger.post(KvLandingBoard.KIND_LANDED, txId, inc, u); // the sender's id, uids never announced
      Thread.sleep(300);
      assertFalse(landed.isDone(), "nothing was reported landed: " + heard);
      assertTrue(heard.isEmpty(), heard.toString());
      assertTrue(m.cancel());
      // the abort still comes over Pekko remoting
      assertEquals("cancelled by the sender", landed.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS));
    }
    dst.forget("board-forged");
  }
}
