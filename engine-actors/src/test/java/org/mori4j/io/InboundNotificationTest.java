package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Target side: popInboundTransferStatus reports each write that landed, once. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InboundNotificationTest {
  private static final long MiB = 1L << 20;
  private EnginePair p;
  private String initiatorKey;

  @BeforeAll
  void start() {
    p = new EnginePair(20 * MiB);
    initiatorKey = p.initiator.key();
  }

  @AfterAll
  void stop() {
    if (p != null) p.close();
  }

  private void assertNotifiedOnce(long uid) {
    Optional<TransferStatus> first = p.target.popInboundTransferStatus(initiatorKey, uid);
    assertTrue(first.isPresent(), "uid " + uid + " should be recorded on the target");
    assertTrue(first.get().succeeded(), "uid " + uid + ": " + first.get());
    assertFalse(first.get().inProgress());
    assertTrue(p.target.popInboundTransferStatus(initiatorKey, uid).isEmpty(), "uid " + uid + " popped twice");
  }

  @Test
  void writeIsReportedToTheTargetExactlyOnce() {
    long uid = p.initiator.allocateTransferUid();
    assertSucceeds(p.initiator.write(p.local, 0, p.remote, 0, 4096, uid));
    assertNotifiedOnce(uid);
  }

  @Test
  void unknownUidIsNotReported() {
    assertTrue(p.target.popInboundTransferStatus(initiatorKey, 987_654_321L).isEmpty());
    assertTrue(p.target.popInboundTransferStatus(initiatorKey, -1).isEmpty());
    assertTrue(p.target.popInboundTransferStatus("no-such-engine", 1).isEmpty());
    assertTrue(p.target.popInboundTransferStatus(null, 1).isEmpty());
  }

  @Test
  void uidIsReportedUnderTheInitiatorsKeyOnly() {
    long uid = p.initiator.allocateTransferUid();
    assertSucceeds(p.initiator.write(p.local, 0, p.remote, 0, 100, uid));
    assertTrue(p.target.popInboundTransferStatus(p.target.key(), uid).isEmpty(), "reported under the wrong key");
    assertTrue(p.initiator.popInboundTransferStatus(p.target.key(), uid).isEmpty(), "reported on the initiator");
    assertNotifiedOnce(uid);
  }

  @Test
  void stripedWriteIsReportedOnceAfterAllStripes() {
    long uid = p.initiator.allocateTransferUid();
    assertSucceeds(p.initiator.write(p.local, 1, p.remote, 2, 17 * MiB, uid)); // above the 16 MiB stripe threshold
    assertNotifiedOnce(uid);
  }

  @Test
  void everyEntryOfABatchWriteIsReportedUnderItsUid() {
    long[] uids = {p.initiator.allocateTransferUid(), p.initiator.allocateTransferUid(), p.initiator.allocateTransferUid()};
    long[] lo = {0, 5000, 9000}, ro = {100, 20_000, 40_000}, s = {10, 300, 4096};
    List<TransferStatus> st = p.initiator.batchWrite(List.of(p.local, p.local, p.local), List.of(lo, lo, lo),
        List.of(p.remote, p.remote, p.remote), List.of(ro, new long[] {1_000_000, 1_100_000, 1_200_000}, new long[] {2_000_000, 2_100_000, 2_200_000}),
        List.of(s, s, s), uids);
    assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(st, Duration.ofSeconds(30)));
    for (long u : uids) assertNotifiedOnce(u);
  }

  @Test
  void sessionWriteIsReported() {
    IoEngineSession s = p.initiator.createSession(p.local, p.remote).orElseThrow();
    long uid = s.allocateTransferUid();
    assertSucceeds(s.write(0, 0, 64, uid));
    assertNotifiedOnce(uid);
  }

  @Test
  void manyWritesAreEachReportedOnce() {
    List<TransferStatus> st = new ArrayList<>();
    long[] uids = new long[500];
    for (int i = 0; i < uids.length; i++) {
      uids[i] = p.initiator.allocateTransferUid();
      st.add(p.initiator.write(p.local, i * 64L, p.remote, i * 64L, 64, uids[i]));
    }
    assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(st, Duration.ofSeconds(30)));
    for (long u : uids) assertNotifiedOnce(u);
  }

  @Test
  void refusedWriteIsNotReportedAsLanded() {
    MemoryDesc forged = new MemoryDesc(p.remote.engineKey(), p.remote.id(), p.remote.deviceId(), p.remote.address(),
        p.remote.size(), p.remote.location(), p.remote.accessKey() ^ 1, null, p.remote.ownerIncarnation());
    long uid = p.initiator.allocateTransferUid();
    assertFailsWith(p.initiator.write(p.local, 0, forged, 0, 64, uid), "forged write", StatusCode.ERR_NOT_FOUND);
    Optional<TransferStatus> n = p.target.popInboundTransferStatus(initiatorKey, uid);
    n.ifPresent(st -> assertTrue(st.failed(), "a refused write must not be reported as landed: " + st));
  }

  @Test
  void targetWithNotificationDisabledRecordsNothing() {
    // TcpBackendConfig.enableNotification = false: MORI's enable_notification off, nothing is kept for popping
    try (EnginePair q = new EnginePair(1 << 20, TcpBackendConfig.defaults().withEnableNotification(false))) {
      long uid = q.initiator.allocateTransferUid();
      assertSucceeds(q.initiator.write(q.local, 0, q.remote, 0, 4096, uid));
      assertTrue(q.target.popInboundTransferStatus(q.initiator.key(), uid).isEmpty(),
          "enableNotification=false, yet the target recorded the write");
    }
  }
}
