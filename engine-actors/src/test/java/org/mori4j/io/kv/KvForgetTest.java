package org.mori4j.io.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.mori4j.io.IoEngine;
import org.mori4j.io.StatusCode;

/**
 * Two engines of this JVM over TCP on loopback: after the receiver forgot a pushed request, the late notices of that
 * push (the sender's message, an announcement the receiver's own backend completes, an abort) reach its KV endpoint
 * over remoting and report nothing, while a new push under the same request id is heard. The late notices are the
 * push's own, re-sent by the test after the forget; a message the test sends after them from the same actor system
 * (Pekko keeps one sender's order) says when the endpoint has handled them. Also: the notices' wire format and the
 * refusal of frames and descriptors of a build before migration ids.
 */
class KvForgetTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  static IoEngine sender;
  static IoEngine receiver;
  static Arena arena;

  static TcpEnginePair pair;

  @BeforeAll
  static void start() {
    pair = new TcpEnginePair("kv-forget-sender", "kv-forget-receiver");
    sender = pair.first;
    receiver = pair.second;
    arena = pair.arena;
  }

  @AfterAll
  static void stop() {
    pair.close();
  }

  private static KvCache cache(IoEngine e, String name, KvCacheLayout l) {
    List<MemorySegment> bufs = new ArrayList<>();
    for (int i = 0; i < l.buffers(); i++) {
      MemorySegment s = arena.allocate(l.bufferBytes(), 64);
      for (long j = 0; j < s.byteSize(); j++) s.set(ValueLayout.JAVA_BYTE, j, (byte) (j * 13 + i));
      bufs.add(s);
    }
    return KvCache.create(e, name, l, bufs);
  }

  @Test
  void lateNoticesOfAForgottenPushReportNothingAndAPushUnderTheSameIdIsHeard() throws Exception {
    KvCacheLayout layout = KvCacheLayout.perLayer(3, 2, 8, 256);
    int[] blocks = {1, 4, 5, 7};
    try (KvCache src = cache(sender, "kv-forget-src", layout); KvCache dst = cache(receiver, "kv-forget-dst", layout)) {
      // waiters are completed before subscribers are called: the test waits for the events themselves
      BlockingQueue<KvLayersLanded> heard = new LinkedBlockingQueue<>();
      dst.subscribe(e -> {
        if (e.requestId().equals("r")) heard.add(e);
      });
      KvMigration first = src.push("r", blocks, dst.desc(), blocks);
      assertTrue(first.await(WAIT));
      assertEquals(StatusCode.SUCCESS, first.code(), first.message());
      KvLayersLanded landed = heard.poll(20, TimeUnit.SECONDS);
      assertTrue(landed != null && !landed.failed() && landed.toLayer() == 3, String.valueOf(landed));
      // whatever of the push's own two notices is still in flight is dropped from here on too
      dst.forget("r");
      var waiter = dst.whenLanded("r", 0, 3).toCompletableFuture();

      // the push's notices, late: a write it announces (the receiver's own backend records it), its message, an abort
      ActorRef<KvProtocol.Command> endpoint = ActorRefResolver.get(sender.actorSystem()).resolveActorRef(dst.desc().endpoint());
      long m = first.migrationId(), uid = sender.allocateTransferUid();
      assertEquals(StatusCode.SUCCESS, sender.write(src.bufferDesc(0), 0, dst.desc().buffers().get(0), 0, 256, uid).await().code());
      endpoint.tell(new KvProtocol.LayersSent(dst.name(), "r", m, 0, 1, sender.key(), new long[] {uid}));
      endpoint.tell(new KvProtocol.LayersLanded(dst.name(), "r", m, 0, 3, sender.key()));
      endpoint.tell(new KvProtocol.RequestAborted(dst.name(), "r", m, sender.key(), "late"));
      // the write had landed before its announcement, so the endpoint claims it while handling the announcement and
      // tells itself the range landed: handled before "after-2", which is told once "after-1" (behind the announcement) was heard
      handled(endpoint, dst, "after-1");
      handled(endpoint, dst, "after-2");
      assertTrue(receiver.popInboundTransferStatus(sender.key(), uid).isEmpty(), "the announced write was claimed");
      assertEquals(List.of(), List.copyOf(heard));
      assertFalse(waiter.isDone(), "a late notice of the forgotten push completed a waiter: " + waiter);

      // a retry under the same request id is a new migration: heard once (of its two notices), and the waiter completes
      KvMigration retry = src.push("r", blocks, dst.desc(), blocks);
      assertNotEquals(m, retry.migrationId());
      assertTrue(retry.await(WAIT));
      assertEquals(StatusCode.SUCCESS, retry.code(), retry.message());
      assertNull(waiter.get(20, TimeUnit.SECONDS));
      KvLayersLanded again = heard.poll(20, TimeUnit.SECONDS);
      assertTrue(again != null && !again.failed() && again.toLayer() == 3, String.valueOf(again));
      handled(endpoint, dst, "after-3"); // behind the retry's message, which the push told before it completed
      assertEquals(List.of(), List.copyOf(heard));
    }
  }

  @Test
  void noticesCarryTheirMigrationOnTheWireAndFramesOfAnOlderBuildAreRefusedSayingSo() throws Exception {
    KvMessageSerializer ser = new KvMessageSerializer((ExtendedActorSystem) Adapter.toClassic(sender.actorSystem()));
    long m = KvMigrationIds.next();
    var landed = new KvProtocol.LayersLanded("c", "req", m, 1, 3, "eng");
    assertEquals(landed, ser.fromBinary(ser.toBinary(landed), ser.manifest(landed)));
    var aborted = new KvProtocol.RequestAborted("c", "req", m, "eng", "why");
    assertEquals(aborted, ser.fromBinary(ser.toBinary(aborted), ser.manifest(aborted)));
    var sent = new KvProtocol.LayersSent("c", "req", m, 1, 3, "eng", new long[] {9});
    assertEquals(m, ((KvProtocol.LayersSent) ser.fromBinary(ser.toBinary(sent), ser.manifest(sent))).migration());

    // a migration id of 0 is never drawn, so a frame with one is refused
    var zero = new KvProtocol.LayersLanded("c", "req", 0, 1, 3, "eng");
    assertTrue(notSerializable(() -> ser.fromBinary(ser.toBinary(zero), ser.manifest(zero))).contains("migration id 0"));
    // the earlier manifests: an older build's frames, refused naming the cause and not read as something else
    for (String old : List.of("KL", "KS", "KA")) {
      String why = notSerializable(() -> ser.fromBinary(ser.toBinary(landed), old));
      assertTrue(why.contains("older") && why.contains(old + "2") && why.contains("same mori4j build"), why);
    }
    // and the cache descriptor an older build hands out (version 2) is refused before anything is sent to it
    try (KvCache c = cache(receiver, "kv-forget-desc", KvCacheLayout.perLayer(2, 2, 4, 64))) {
      byte[] b = c.desc().toBytes();
      assertEquals(c.desc(), KvCacheDesc.fromBytes(b));
      java.nio.ByteBuffer.wrap(b).putShort(4, (short) 2);
      var ex = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> KvCacheDesc.fromBytes(b));
      assertTrue(ex.getMessage().contains("version 2") && ex.getMessage().contains("migration id"), ex.getMessage());
    }
  }

  /** Tells {@code endpoint} a notice of a fresh request {@code name} and waits until it was heard: what was told before it was handled. */
  private static void handled(ActorRef<KvProtocol.Command> endpoint, KvCache dst, String name) {
    endpoint.tell(new KvProtocol.LayersLanded(dst.name(), name, KvMigrationIds.next(), 0, 1, sender.key()));
    assertTrue(dst.awaitLanded(name, 0, 1, WAIT), name);
  }

  private interface Parse {
    Object run() throws Exception;
  }

  private static String notSerializable(Parse p) {
    try {
      p.run();
    } catch (java.io.NotSerializableException e) {
      return e.getMessage();
    } catch (Exception e) {
      throw new AssertionError("expected NotSerializableException, got " + e, e);
    }
    throw new AssertionError("the frame was accepted");
  }
}
