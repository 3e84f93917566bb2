package org.mori4j.transport.tcp;

import java.io.IOException;

/**
 * A peer broke the data-plane protocol, seen from the target's end: the connection closes and the
 * {@link RefusalLog} writes one rate-limited WARN under {@link #reason}. The constants are those reasons, the
 * keys of that log; an operator sees each kind of trouble once per interval however many connections show it.
 */
final class PeerFault extends IOException {
  static final String MALFORMED = "malformed frame";
  static final String BEFORE_HELLO = "request before hello";
  static final String REFUSED_HELLO = "refused hello";
  static final String NO_HELLO = "no hello in time";
  static final String TRUNCATED = "closed mid-request";
  static final String STALLED = "no progress for peer-timeout";
  static final String IO_ERROR = "I/O error";
  static final String REVOKED = "token revoked";
  static final String REVOKED_DETAIL = "a newer handshake of its engine (a reconnection or a new incarnation)"
      + " replaced the token of its hello, or the engine was disconnected";

  final String reason;

  PeerFault(String reason, String detail) {
    super(detail);
    this.reason = reason;
  }
}
