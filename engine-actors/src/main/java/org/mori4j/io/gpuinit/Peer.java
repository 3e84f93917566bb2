package org.mori4j.io.gpuinit;

import java.util.HashMap;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The remote end of a connected endpoint, owned by the proxy thread: the peer context's actor, the remote queue
 * pair, the peer's regions by rkey as its lookups answered ({@link #NOT_FOUND} for an rkey it does not know: rkeys
 * are never reused within a context, so the negative answer stays true), and whether the peer is lost.
 */
final class Peer {
  static final Region NOT_FOUND = new Region(0, 1, 1, 1, 0, null, null, -1, null, false);
  static final Region PENDING = new Region(0, 1, 1, 1, 0, null, null, -1, null, false);

  final String path;
  final ActorRef<GpuInitProtocol.Command> ref;
  final int qpn;
  final String engineKey;
  final Map<Integer, Region> keys = new HashMap<>();
  /** When each lookup still {@link #PENDING} was sent (System.nanoTime). */
  final Map<Integer, Long> lookupSince = new HashMap<>();
  boolean dead;
  /** The liveness probe in flight (its correlation id, 0: none) and when it was sent. */
  long pingCorr;
  long pingSentAt;
  /** When the peer last answered a probe (System.nanoTime). */
  long lastPong;
  String deadReason = "";

  Peer(String path, ActorRef<GpuInitProtocol.Command> ref, int qpn, String engineKey) {
    this.path = path;
    this.ref = ref;
    this.qpn = qpn;
    this.engineKey = engineKey;
    this.lastPong = System.nanoTime() - (1L << 40);
  }

  @Override
  public String toString() {
    return "qpn " + qpn + " of engine '" + engineKey + "'";
  }
}
