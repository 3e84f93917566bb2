package org.mori4j.transport.rdma;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportException;

/**
 * The RDMA connection's replacement and bring-up limits, on two backends without an engine ({@link RdmaBackendTest}'s
 * harness, software provider): ops that waited on a failed queue pair for a free slot ride out the replacement like the
 * ops held for it; a replacement that never comes ends the held ops after {@code replaceTimeout}; queue pairs of a
 * handshake that gets no reply close after {@code connectTimeout}. Short limits, so each case takes well under a second.
 */
class RdmaReplacementTest {
  /** One queue pair of depth 4, 4 KiB work requests; the given limits for a connection and for its replacement. */
  private static RdmaSettings settings(Duration connect, Duration replace) {
    return new RdmaSettings(1, 16, 1, false, true, "", 4, 1024, 32, 4096, 64 * 1024, connect, replace);
  }

  @Test
  void opsWaitingForASlotOnAFailedQueuePairGoToTheNewConnection() throws Exception {
    try (RdmaBackendTest.Pair p = new RdmaBackendTest.Pair(settings(Duration.ofSeconds(5), Duration.ofSeconds(5)))) {
      // the first confirmation hands out a wrong rkey: the NIC refuses the first write and the queue pair fails
      p.forgedRkeys = new int[] {RdmaMemoryData.rkey(p.targetData, 0) ^ 0x5a5a};
      p.forgeOnce = true;
      p.autoReconnect = true;
      CompletableFuture<Void> gate = new CompletableFuture<>();
      p.confirmGate = gate;
      // all 32 wait for the confirmation, then are issued at once: 4 posted (the queue's depth), 28 wait for slots
      List<RdmaBackendTest.Op> ops = new ArrayList<>();
      for (int i = 0; i < 32; i++) ops.add(p.single(TransferOp.WRITE, i * 4096L, i * 4096L, 4096, 100 + i));
      p.confirmGate = null;
      gate.complete(null);
      int refused = 0;
      for (int i = 0; i < ops.size(); i++) {
        String r = ops.get(i).await();
        if (r.equals("ok")) continue;
        // only what was posted meets the refusal (or its flush); the owner, asked again, now gives other keys than the
        // forged ones, so the refusal reads as a re-registration (NOT_FOUND), which is what it looks like from here
        assertTrue(r.contains("IBV_WC_REM_ACCESS_ERR"), "write " + i + ": " + r);
        refused++;
      }
      assertTrue(refused >= 1 && refused <= 4, refused + " of 32 writes failed; at most the 4 posted on the failed queue pair may");
      assertEquals(1, p.reconnects.size(), "one replacement: " + p.reconnects);
    }
  }

  @Test
  void aReplacementThatNeverComesEndsTheHeldOpsAfterTheLimit() throws Exception {
    try (RdmaBackendTest.Pair p = new RdmaBackendTest.Pair(settings(Duration.ofSeconds(5), Duration.ofMillis(300)))) {
      p.forgedRkeys = new int[] {RdmaMemoryData.rkey(p.targetData, 0) ^ 0x5a5a};
      assertTrue(p.single(TransferOp.WRITE, 0, 0, 4096, 1).await().contains("IBV_WC_REM_ACCESS_ERR"));
      // the engine is asked to connect again and never does (autoReconnect off): what is submitted now is held
      long t0 = System.nanoTime();
      String held = p.single(TransferOp.WRITE, 0, 0, 4096, 2).await();
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertTrue(held.startsWith("PEER_LOST") && held.contains("no new RDMA connection to engine 'target' within 300 ms"), held);
      assertTrue(ms < 5_000, "held for " + ms + " ms with a 300 ms limit");
      assertFalse(p.init.connected("target"));
      String after = p.single(TransferOp.WRITE, 0, 0, 4096, 3).await();
      assertTrue(after.startsWith("PEER_LOST"), "the peer stays lost until connected again: " + after);
    }
  }

  @Test
  void queuePairsOfAHandshakeWithoutAReplyCloseAfterTheConnectTimeout() throws Exception {
    try (RdmaBackendTest.Pair p = new RdmaBackendTest.Pair(settings(Duration.ofMillis(200), Duration.ofSeconds(5)))) {
      byte[] reply = p.target.acceptHandshake("init", p.init.handshakeRequest("target"));
      Thread.sleep(600); // the reply is late: the initiator's queue pairs of that handshake are gone
      TransportException e = assertThrows(TransportException.class, () -> p.init.connect("target", reply));
      assertTrue(e.getMessage().contains("after connect-timeout (200 ms"), e.getMessage());
      // a handshake answered in time still connects (the late one's target side was replaced by it)
      p.peer = p.init.connect("target", p.target.acceptHandshake("init", p.init.handshakeRequest("target")));
      assertEquals("ok", p.single(TransferOp.WRITE, 0, 0, 4096, 2).await());
    }
  }
}
