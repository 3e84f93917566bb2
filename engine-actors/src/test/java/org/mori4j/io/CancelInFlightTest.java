package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@code cancel()} and short deadlines on the suite's data backend (TCP; RDMA over the software provider in the rdma
 * executions) with a peer that keeps going: large writes and reads, a batch, a session call and 1 ms deadlines, each
 * cancelled while in flight. Each ends exactly once: with ERR_TIMEOUT when the cancellation won, else with its own
 * outcome; a second {@code cancel()} returns false, and no late completion changes a status afterwards. The transfers
 * that follow on the same connections are byte-exact, and the target holds at most one notification per cancelled
 * write. (A target that stalls is {@code TransferDeadlineTest}'s, on TCP.)
 */
class CancelInFlightTest {
  private static final long MIB = 1L << 20;
  private static final Duration WAIT = Duration.ofSeconds(30);

  @Test
  void cancelledTransfersEndOnceAndLaterTransfersOnTheSameConnectionsAreExact() throws Exception {
    // the software RDMA device moves bytes far slower than loopback TCP: a quarter of the sizes keeps the three
    // executions short, and its transfers still last long enough to be cancelled in flight
    long unit = TestBackends.rdma() ? MIB / 4 : MIB;
    try (EnginePair p = new EnginePair(16 * unit)) {
      EnginePair.fill(p.localBuf, 1);
      IoEngineSession session = p.initiator.createSession(p.local, p.remote).orElseThrow();
      List<TransferStatus> all = new ArrayList<>();
      List<Boolean> cancelledByCall = new ArrayList<>();
      List<Long> writeUids = new ArrayList<>();
      for (int round = 0; round < 3; round++) {
        long wu = p.initiator.allocateTransferUid();
        writeUids.add(wu);
        TransferStatus w = p.initiator.write(p.local, 0, p.remote, 0, 6 * unit, wu);
        TransferStatus r = p.initiator.read(p.local, 8 * unit, p.remote, 8 * unit, 3 * unit, p.initiator.allocateTransferUid());
        long bu = p.initiator.allocateTransferUid();
        writeUids.add(bu);
        TransferStatus b = p.initiator.batchWrite(List.of(p.local), List.of(new long[] {6 * unit, 6 * unit + unit / 2 + 4096}), List.of(p.remote),
            List.of(new long[] {6 * unit, 6 * unit + unit / 2 + 4096}), List.of(new long[] {unit / 2, 4096}), new long[] {bu}).get(0);
        long su = session.allocateTransferUid();
        writeUids.add(su);
        TransferStatus s = session.write(7 * unit, 7 * unit, unit / 2, su);
        long du = p.initiator.allocateTransferUid();
        writeUids.add(du);
        TransferStatus d = p.initiator.write(p.local, 7 * unit + unit / 2, p.remote, 7 * unit + unit / 2, unit / 2, du, TransferOptions.deadline(Duration.ofMillis(1)));
        for (TransferStatus t : List.of(w, r, b, s)) {
          all.add(t);
          cancelledByCall.add(t.cancel());
        }
        all.add(d);
        cancelledByCall.add(false);
      }
      List<StatusCode> first = new ArrayList<>();
      int won = 0;
      for (int i = 0; i < all.size(); i++) {
        TransferStatus t = all.get(i);
        assertTrue(t.await(WAIT), "transfer " + i + " never ended");
        if (cancelledByCall.get(i)) {
          won++;
          assertEquals(StatusCode.ERR_TIMEOUT, t.code(), "transfer " + i + ": " + t.message());
          assertTrue(t.message().contains("cancelled by the caller"), t.message());
        } else {
          assertTrue(t.code() == StatusCode.SUCCESS || t.code() == StatusCode.ERR_TIMEOUT, "transfer " + i + ": " + t.code() + " " + t.message());
          if (t.code() == StatusCode.ERR_TIMEOUT) assertTrue(t.message().contains("deadline"), t.message());
        }
        assertFalse(t.cancel(), "a second cancel() finds transfer " + i + " ended");
        first.add(t.code());
      }
      // what was still on the wire or the device completes late; it must change nothing
      TransferStatus fence = p.initiator.write(p.local, 0, p.remote, 0, 6 * unit, p.initiator.allocateTransferUid());
      assertTrue(fence.await(WAIT) && fence.succeeded(), "a transfer behind the cancelled ones: " + fence);
      for (int i = 0; i < all.size(); i++) assertEquals(first.get(i), all.get(i).code(), "transfer " + i + " changed after it ended");

      // later transfers on the same connections are byte-exact both ways
      for (int round = 0; round < 2; round++) {
        EnginePair.fill(p.localBuf.asSlice(12 * unit, 2 * unit), 100 + round);
        TransferStatus w = p.initiator.write(p.local, 12 * unit, p.remote, 12 * unit, 2 * unit, p.initiator.allocateTransferUid());
        assertTrue(w.await(WAIT) && w.succeeded(), w.toString());
        assertEquals(-1, EnginePair.mismatch(p.localBuf, 12 * unit, p.remoteBuf, 12 * unit, 2 * unit), "write round " + round);
        TransferStatus r = p.initiator.read(p.local, 14 * unit, p.remote, 12 * unit, 2 * unit, p.initiator.allocateTransferUid());
        assertTrue(r.await(WAIT) && r.succeeded(), r.toString());
        assertEquals(-1, EnginePair.mismatch(p.localBuf, 14 * unit, p.remoteBuf, 12 * unit, 2 * unit), "read round " + round);
      }
      // at most one notification per cancelled write (one that landed is notified once, one that did not never)
      int notified = 0;
      for (long uid : writeUids) {
        Optional<TransferStatus> n = p.target.popInboundTransferStatus(p.initiator.key(), uid);
        if (n.isPresent()) notified++;
        assertTrue(p.target.popInboundTransferStatus(p.initiator.key(), uid).isEmpty(), "uid " + uid + " notified twice");
      }
      System.out.printf("CancelInFlightTest on %s: %d of %d cancel() calls won; %d of %d writes notified%n", TestBackends.describe(), won,
          all.size() - 3, notified, writeUids.size());
    }
  }
}
