package org.mori4j.transport;

/** Events a backend reports to its owner (the engine): a peer went away. Called from backend threads. */
public interface BackendListener {
  void peerLost(String peerKey, TransportError error, String reason);

  BackendListener NONE = (k, e, r) -> {};
}
