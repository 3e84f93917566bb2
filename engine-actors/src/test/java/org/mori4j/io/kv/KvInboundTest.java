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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mori4j.io.IoEngine;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;

/**
 * The receiver's short cut ({@link KvInbound}): a range announced with {@link KvProtocol.LayersSent} is reported
 * landed from the receiving engine's own record of the writes, with no {@link KvProtocol.LayersLanded} from the
 * sender, whether the announcement comes before or after the data; a range whose writes never come is never
 * reported; the sender's later message for a range already reported changes nothing (subscribers hear it once).
 * Plain engine writes with known uids stand in for a migration, so the sender's message is never sent.
 */
class KvInboundTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  /** The migrations the test's messages stand in for, one per request. */
  private static final long M1 = KvMigrationIds.next(), M2 = KvMigrationIds.next(), M3 = KvMigrationIds.next(), M4 = KvMigrationIds.next();
  static IoEngine sender;
  static IoEngine receiver;
  static Arena arena;

  static TcpEnginePair pair;

  @BeforeAll
  static void start() {
    pair = new TcpEnginePair("kv-in-sender", "kv-in-receiver");
    sender = pair.first;
    receiver = pair.second;
    arena = pair.arena;
  }

  @AfterAll
  static void stop() {
    pair.close();
  }

  @Test
  void announcedWritesAreReportedLandedByTheReceiversOwnBackendInEitherOrderOnce() throws Exception {
    KvCacheLayout layout = KvCacheLayout.perLayer(2, 2, 4, 4096);
    List<MemorySegment> bufs = new ArrayList<>();
    for (int i = 0; i < layout.buffers(); i++) bufs.add(arena.allocate(layout.bufferBytes(), 64));
    MemorySegment src = arena.allocate(layout.bufferBytes(), 64);
    for (long j = 0; j < src.byteSize(); j++) src.set(ValueLayout.JAVA_BYTE, j, (byte) (j * 31 + 7));
    MemoryDesc local = sender.registerMemory(src);
    try (KvCache cache = KvCache.create(receiver, "kv-in", layout, bufs)) {
      List<KvLayersLanded> heard = new CopyOnWriteArrayList<>();
      cache.subscribe(heard::add);
      ActorRef<KvProtocol.Command> endpoint = ActorRefResolver.get(sender.actorSystem()).resolveActorRef(cache.desc().endpoint());
      MemoryDesc layer0 = cache.desc().buffers().get(0), layer1 = cache.desc().buffers().get(1);

      // announced first, then the data: reported when the receiver's backend records the write
      long u1 = sender.allocateTransferUid();
      endpoint.tell(new KvProtocol.LayersSent("kv-in", "r1", M1, 0, 1, sender.key(), new long[] {u1}));
      var r1 = cache.whenLanded("r1", 0, 1).toCompletableFuture();
      assertTrue(sender.write(local, 0, layer0, 0, layout.bufferBytes(), u1).await(WAIT));
      assertNull(r1.get(20, TimeUnit.SECONDS));
      assertArrayEquals(src.toArray(ValueLayout.JAVA_BYTE), bufs.get(0).toArray(ValueLayout.JAVA_BYTE));

      // the data first (two writes), then the announcement: the announcement claims what already landed
      long u2 = sender.allocateTransferUid(), u3 = sender.allocateTransferUid();
      TransferStatus w2 = sender.write(local, 0, layer1, 0, 4096, u2), w3 = sender.write(local, 4096, layer1, 4096, 4096, u3);
      assertEquals(StatusCode.SUCCESS, w2.await().code());
      assertEquals(StatusCode.SUCCESS, w3.await().code());
      endpoint.tell(new KvProtocol.LayersSent("kv-in", "r2", M2, 1, 2, sender.key(), new long[] {u2, u3}));
      assertTrue(cache.awaitLanded("r2", 1, 2, WAIT));
      // popped when claimed: the notification table does not keep them
      assertTrue(receiver.popInboundTransferStatus(sender.key(), u2).isEmpty());

      // one of two announced writes never comes: never reported
      long u4 = sender.allocateTransferUid(), never = sender.allocateTransferUid();
      endpoint.tell(new KvProtocol.LayersSent("kv-in", "r3", M3, 0, 1, sender.key(), new long[] {u4, never}));
      assertTrue(sender.write(local, 0, layer0, 0, 4096, u4).await(WAIT));
      assertFalse(cache.awaitLanded("r3", 0, 1, Duration.ofMillis(500)), "r3 reported with one of its two writes missing");

      // the sender's own message for r1 comes late: subscribers already heard r1 and hear it no second time
      endpoint.tell(new KvProtocol.LayersLanded("kv-in", "r1", M1, 0, 1, sender.key()));
      endpoint.tell(new KvProtocol.LayersLanded("kv-in", "r4", M4, 0, 2, sender.key()));
      assertTrue(cache.awaitLanded("r4", 0, 2, WAIT)); // told after r1's by the same sender: r1's was handled before it
      long r1Events = heard.stream().filter(e -> e.requestId().equals("r1")).count();
      assertEquals(1, r1Events, heard.toString());
      assertEquals(1, heard.stream().filter(e -> e.requestId().equals("r2")).count(), heard.toString());
      // r3's sender gives up: what was announced for it goes
      endpoint.tell(new KvProtocol.RequestAborted("kv-in", "r3", M3, sender.key(), "test"));
      assertEquals("test", cache.whenLanded("r3", 0, 1).toCompletableFuture().get(20, TimeUnit.SECONDS));
    }
  }

  @Test
  void layersSentSurvivesTheWireAndMalformedFramesAreRefused() throws Exception {
    KvMessageSerializer ser = new KvMessageSerializer((org.apache.pekko.actor.ExtendedActorSystem) org.apache.pekko.actor.typed.javadsl.Adapter
        .toClassic(sender.actorSystem()));
    KvProtocol.LayersSent m = new KvProtocol.LayersSent("c", "req", 0x5eedL, 3, 5, "eng", new long[] {1, 2, Long.MAX_VALUE});
    byte[] b = ser.toBinary(m);
    KvProtocol.LayersSent back = (KvProtocol.LayersSent) ser.fromBinary(b, ser.manifest(m));
    assertEquals(List.of("c", "req", 0x5eedL, 3, 5, "eng"),
        List.of(back.cacheName(), back.requestId(), back.migration(), back.fromLayer(), back.toLayer(), back.fromEngine()));
    assertArrayEquals(m.uids(), back.uids());
    // one uid short, and a count past the frame
    byte[] cut = java.util.Arrays.copyOf(b, b.length - 8);
    assertTrue(assertThrowsNotSerializable(() -> ser.fromBinary(cut, "KS2")).contains("uid count"));
    byte[] bad = b.clone();
    java.nio.ByteBuffer.wrap(bad).putInt(b.length - 3 * 8 - 4, 1 << 30);
    assertTrue(assertThrowsNotSerializable(() -> ser.fromBinary(bad, "KS2")).contains("uid count"));
    assertFalse(back.board(), "a frame without the flag: no landing board");
    // the landing board's flag: one trailing byte, 1; anything else there is refused
    KvProtocol.LayersSent withBoard = new KvProtocol.LayersSent("c", "req", 0x5eedL, 3, 5, "eng", new long[] {7}, true, 0x1234_5678_9abcL);
    byte[] wb = ser.toBinary(withBoard);
    KvProtocol.LayersSent wbBack = (KvProtocol.LayersSent) ser.fromBinary(wb, "KS2");
    assertTrue(wbBack.board());
    assertEquals(0x1234_5678_9abcL, wbBack.fromIncarnation(), "the sender's incarnation travels with the board flag");
    byte[] noIncarnation = java.util.Arrays.copyOf(wb, wb.length - 8);
    assertTrue(assertThrowsNotSerializable(() -> ser.fromBinary(noIncarnation, "KS2")).contains("sender incarnation"));
    byte[] badFlag = wb.clone();
    badFlag[badFlag.length - 9] = 2;
    assertTrue(assertThrowsNotSerializable(() -> ser.fromBinary(badFlag, "KS2")).contains("board flag"));
  }

  private interface Parse {
    Object run() throws Exception;
  }

  private static String assertThrowsNotSerializable(Parse p) {
    try {
      p.run();
    } catch (java.io.NotSerializableException e) {
      return e.getMessage();
    } catch (Exception e) {
      throw new AssertionError("expected NotSerializableException, got " + e, e);
    }
    throw new AssertionError("a malformed frame was accepted");
  }
}
