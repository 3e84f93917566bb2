package org.mori4j.transport.tcp;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;

/**
 * The TCP backend's half of the engines' handshake: the reply a target gives (its data address, whether it speaks
 * TLS, and a fresh token for that initiator), the parsing of such a reply on the initiator's side, and the table of
 * tokens issued, which every target connection's HELLO and every request after it are checked against. It is separate
 * from {@link TcpBackend} because it is a wire format and a bookkeeping table of its own, apart from running loops
 * and lanes; the token check it answers is one map lookup, as before.
 */
final class TcpHandshake {
  /** A target's handshake reply as the initiator reads it. */
  record Reply(InetSocketAddress address, boolean tls, long token) {}

  private final ConcurrentHashMap<String, Long> tokens = new ConcurrentHashMap<>();
  private final SecureRandom random = new SecureRandom();

  /** Issues {@code initiatorKey} a new token (replacing any older one) and encodes the reply that carries it. */
  byte[] accept(String initiatorKey, byte[] request, InetSocketAddress bound, boolean tls) {
    String claimed = new String(request, StandardCharsets.UTF_8);
    if (!claimed.equals(initiatorKey))
      throw new TransportException(TransportError.INVALID_ARGS, "handshake names engine '" + claimed + "' but came from '" + initiatorKey + "'");
    long token = random.nextLong();
    tokens.put(initiatorKey, token);
    byte[] host = bound.getAddress().getHostAddress().getBytes(StandardCharsets.UTF_8);
    // whether this target speaks TLS, so that an initiator of the other kind refuses at once instead of
    // failing inside a handshake one of them does not expect
    return ByteBuffer.allocate(2 + host.length + 4 + 1 + 8).putShort((short) host.length).put(host)
        .putInt(bound.getPort()).put((byte) (tls ? 1 : 0)).putLong(token).array();
  }

  boolean acceptsToken(String initiatorKey, long token) {
    Long t = tokens.get(initiatorKey);
    return t != null && t == token;
  }

  /** Forgets {@code initiatorKey}'s token: its target connections move no further byte and are closed. */
  void revoke(String initiatorKey) {
    tokens.remove(initiatorKey);
  }

  /** Reads {@code peerKey}'s reply; a malformed one is {@link TransportError#INVALID_ARGS}. */
  static Reply parse(String peerKey, byte[] reply) {
    try {
      ByteBuffer b = ByteBuffer.wrap(reply);
      int hl = b.getShort() & 0xffff;
      if (hl > 255) throw new IllegalArgumentException("host length " + hl);
      byte[] host = new byte[hl];
      b.get(host);
      InetSocketAddress address = new InetSocketAddress(new String(host, StandardCharsets.UTF_8), b.getInt());
      boolean peerTls = b.get() != 0;
      long token = b.getLong();
      return new Reply(address, peerTls, token);
    } catch (RuntimeException e) {
      throw new TransportException(TransportError.INVALID_ARGS, "malformed TCP handshake reply from " + peerKey, e);
    }
  }
}
