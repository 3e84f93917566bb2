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
  final InitiatorConnection[] lanes;
  private final AtomicInteger next = new AtomicInteger();
  private final BackendListener listener;
  private volatile String lostReason;

  TcpPeer(String key, int lanes, BackendListener listener) {
    this.key = key;
    this.lanes = new InitiatorConnection[lanes];
    this.listener = listener;
  }

  boolean alive() {
    return lostReason == null;
  }

  String lostReason() {
    return lostReason;
  }

  /** Round-robin choice of lane. */
  InitiatorConnection lane() {
    int n = lanes.length;
    return n == 1 ? lanes[0] : lanes[Math.floorMod(next.getAndIncrement(), n)];
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
