package org.mori4j.io.internal.metrics;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * A JDK Flight Recorder event per change of a backend's connection to a peer engine: connected, failed (the
 * handshake or the connect did not succeed), disconnected, lost, reconnect (the backend asked for a new
 * handshake), fallback (a faster backend could not connect and the others carry the peer's transfers) and
 * reroute (an op handed from one backend to another at transfer time).
 */
@Name("org.mori4j.Connection")
@Label("mori4j Connection")
@Category({"mori4j", "Connections"})
@Description("A backend of a mori4j engine connected to, lost or dropped a peer engine")
@StackTrace(false)
final class ConnectionEvent extends jdk.jfr.Event {
  @Label("Engine")
  String engine;
  @Label("Backend")
  String backend;
  @Label("Peer")
  String peer;
  @Label("Event")
  String event;
  @Label("Reason")
  String reason;
}
