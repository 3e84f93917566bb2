package org.mori4j.transport;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class InboundNotificationsTest {
  @Test
  void recordedSuccessIsPoppedExactlyOnce() {
    InboundNotifications n = new InboundNotifications();
    n.peer("a").record(42, null, null);
    InboundNotifications.Outcome o = n.pop("a", 42);
    assertNotNull(o);
    assertTrue(o.succeeded());
    assertNull(n.pop("a", 42), "second pop");
  }

  @Test
  void unknownUidAndUnknownInitiatorPopNull() {
    InboundNotifications n = new InboundNotifications();
    assertNull(n.pop("nobody", 1));
    n.peer("a").record(1, null, null);
    assertNull(n.pop("a", 2));
    assertNull(n.pop("b", 1), "uids are per initiator");
    assertNotNull(n.pop("a", 1));
  }

  @Test
  void recordedFailureKeepsItsErrorAndMessage() {
    InboundNotifications n = new InboundNotifications();
    n.peer("a").record(7, TransportError.NOT_FOUND, "memory id 3 is not registered");
    InboundNotifications.Outcome o = n.pop("a", 7);
    assertNotNull(o);
    assertFalse(o.succeeded());
    assertEquals(TransportError.NOT_FOUND, o.error());
    assertEquals("memory id 3 is not registered", o.message());
    assertNull(n.pop("a", 7));
  }

  @Test
  void sameUidFromTwoInitiatorsIsKeptApart() {
    InboundNotifications n = new InboundNotifications();
    n.peer("a").record(5, null, null);
    n.peer("b").record(5, TransportError.INVALID_ARGS, "bad");
    assertTrue(n.pop("a", 5).succeeded());
    assertEquals(TransportError.INVALID_ARGS, n.pop("b", 5).error());
  }

  @Test
  void extremeUidsAreRecorded() {
    InboundNotifications n = new InboundNotifications();
    long[] uids = {0, -1, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 40};
    for (long u : uids) n.peer("a").record(u, null, null);
    for (long u : uids) assertNotNull(n.pop("a", u), "uid " + u);
    for (long u : uids) assertNull(n.pop("a", u), "uid " + u + " popped twice");
  }

  @Test
  void manyEntriesSurviveGrowthAndRandomOrderPops() {
    InboundNotifications n = new InboundNotifications();
    InboundNotifications.PeerLog log = n.peer("a");
    Map<Long, TransportError> model = new HashMap<>();
    SplittableRandom r = new SplittableRandom(5);
    for (int i = 0; i < 50_000; i++) {
      long uid = r.nextInt(4) == 0 ? r.nextLong() : i;
      TransportError e = r.nextInt(10) == 0 ? TransportError.INVALID_ARGS : null;
      log.record(uid, e, e == null ? null : "failed " + uid);
      model.put(uid, e);
    }
    List<Long> keys = new ArrayList<>(model.keySet());
    Collections.shuffle(keys, new java.util.Random(9));
    // pop half, check the rest are all still there (backward-shift deletion must keep probe chains intact)
    for (int i = 0; i < keys.size() / 2; i++) {
      long u = keys.get(i);
      InboundNotifications.Outcome o = n.pop("a", u);
      assertNotNull(o, "uid " + u);
      assertEquals(model.get(u), o.error(), "uid " + u);
      if (o.error() != null) assertEquals("failed " + u, o.message());
    }
    for (int i = 0; i < keys.size() / 2; i++) assertNull(n.pop("a", keys.get(i)));
    for (int i = keys.size() / 2; i < keys.size(); i++) {
      long u = keys.get(i);
      InboundNotifications.Outcome o = n.pop("a", u);
      assertNotNull(o, "uid " + u + " lost");
      assertEquals(model.get(u), o.error());
    }
  }

  @Test
  void stripedTransferIsRecordedOnlyWhenItsLastPartArrives() {
    InboundNotifications n = new InboundNotifications();
    InboundNotifications.PeerLog log = n.peer("a");
    log.recordPart(9, 3, null, null);
    assertNull(n.pop("a", 9), "after 1 of 3 parts");
    log.recordPart(9, 3, null, null);
    assertNull(n.pop("a", 9), "after 2 of 3 parts");
    log.recordPart(9, 3, null, null);
    InboundNotifications.Outcome o = n.pop("a", 9);
    assertNotNull(o);
    assertTrue(o.succeeded());
    assertNull(n.pop("a", 9));
  }

  @Test
  void stripedTransferWithOneFailedPartIsRecordedAsFailed() {
    InboundNotifications n = new InboundNotifications();
    InboundNotifications.PeerLog log = n.peer("a");
    log.recordPart(4, 3, null, null);
    log.recordPart(4, 3, TransportError.INVALID_ARGS, "block 0 outside");
    log.recordPart(4, 3, TransportError.NOT_FOUND, "second failure");
    InboundNotifications.Outcome o = n.pop("a", 4);
    assertNotNull(o);
    assertEquals(TransportError.INVALID_ARGS, o.error(), "the first failure wins");
    assertEquals("block 0 outside", o.message());
  }

  @Test
  void partsOfDifferentUidsDoNotMix() {
    InboundNotifications n = new InboundNotifications();
    InboundNotifications.PeerLog log = n.peer("a");
    log.recordPart(1, 2, null, null);
    log.recordPart(2, 2, null, null);
    assertNull(n.pop("a", 1));
    assertNull(n.pop("a", 2));
    log.recordPart(2, 2, null, null);
    assertNull(n.pop("a", 1));
    assertTrue(n.pop("a", 2).succeeded());
    log.recordPart(1, 2, null, null);
    assertTrue(n.pop("a", 1).succeeded());
  }

  @Test
  void entriesPastTheCapAreDroppedAndCounted() {
    InboundNotifications n = new InboundNotifications();
    InboundNotifications.PeerLog log = n.peer("a");
    for (long u = 0; u < InboundNotifications.MAX_PENDING; u++) log.record(u, null, null);
    assertEquals(0, log.dropped());
    log.record(-5, null, null);
    log.record(-6, null, null);
    assertEquals(2, log.dropped());
    assertNull(n.pop("a", -5), "a dropped entry cannot be popped");
    assertNotNull(n.pop("a", 0));
    // popping made room again
    log.record(-7, null, null);
    assertNotNull(n.pop("a", -7));
  }

  @Test
  void concurrentRecordersAndPoppersLoseNothing() throws Exception {
    InboundNotifications n = new InboundNotifications();
    int threads = 4, per = 20_000;
    List<Thread> ts = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int me = t;
      Thread th = new Thread(() -> {
        InboundNotifications.PeerLog log = n.peer("a");
        for (int i = 0; i < per; i++) log.record((long) me * per + i, null, null);
      });
      th.start();
      ts.add(th);
    }
    for (Thread t : ts) t.join();
    for (long u = 0; u < (long) threads * per; u++) assertNotNull(n.pop("a", u), "uid " + u);
  }
}
