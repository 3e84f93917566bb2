package org.mori4j.transport.tcp;

import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.TransportError;

/**
 * A remote engine as the TCP backend sees it: its data connections (one initiator-side connection per
 * lane, spread over the I/O loops) and whether it is still reachable. The first connection failure loses
 * the whole peer: every connection closes and fails its transfers, and later transfers fail at once.
 */
final class TcpPeer {
  final String key;
  /** Every lane: first the regular ones (small ops round-robin), then the bulk lanes (stripes only, on the bulk loop). */
  final InitiatorConnection[] lanes;
  /** How many of {@link #lanes} are regular. */
  final int regular;
  private final AtomicInteger next = new AtomicInteger();
  private final BackendListener listener;
  private volatile String lostReason;

  TcpPeer(String key, int lanes, BackendListener listener) {
    this(key, lanes, 0, listener);
  }

  TcpPeer(String key, int lanes, int bulkLanes, BackendListener listener) {
    this.key = key;
    this.lanes = new InitiatorConnection[lanes + bulkLanes];
    this.regular = lanes;
    this.listener = listener;
  }

  boolean alive() {
    return lostReason == null;
  }

  String lostReason() {
    return lostReason;
  }

  /** The peer as {@link TcpBackend#describePeer} names it: its lanes, where they go, and why it was lost. */
  String describe() {
    String to = "?";
    for (InitiatorConnection c : lanes) {
      if (c == null) continue;
      try {
        to = String.valueOf(c.channel.getRemoteAddress());
      } catch (java.io.IOException | RuntimeException e) {
        to = "closed";
      }
      break;
    }
    return "TCP, " + regular + " connection(s)" + (lanes.length > regular ? " + " + (lanes.length - regular) + " bulk" : "")
        + " to " + to + (alive() ? "" : " (lost: " + lostReason() + ")");
  }

  /** Round-robin choice of a regular lane. */
  InitiatorConnection lane() {
    int n = regular;
    return n == 1 ? lanes[0] : lanes[Math.floorMod(next.getAndIncrement(), n)];
  }

  /**
   * How many stripes a large transfer is cut into: one per lane without bulk lanes; with them, one for the first
   * regular lane and one per bulk lane, so that the stripes are written and read by two threads on each side.
   */
  int stripes() {
    return lanes.length == regular ? regular : 1 + lanes.length - regular;
  }

  /** The lane of stripe {@code i} (see {@link #stripes()}). */
  InitiatorConnection stripeLane(int i) {
    return lanes.length == regular || i == 0 ? lanes[i] : lanes[regular + i - 1];
  }

  /** Any thread: the peer is gone; closes every lane on its own loop and tells the listener once. */
  void lost(TransportError error, String reason) {
    synchronized (this) {
      if (lostReason != null) return;
      lostReason = reason;
    }
    for (InitiatorConnection c : lanes) {
      if (c == null) continue;
      try {
        c.loop.execute(() -> c.failOnLoop(error, reason));
      } catch (IllegalStateException loopClosed) {
        // the loop already failed everything it held
      }
    }
    listener.peerLost(key, error, reason);
  }
}
