package org.mori4j.transport.xgmi;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;

/**
 * The XGMI backend's handshake messages: the initiator's request (its engine key and its host's identity), the
 * target's checks of it (the key is the one the request came from, the host is this one), and the initiator's check of
 * the reply (the target's host identity). It is separate from {@link XgmiBackend} because it is a wire format with its
 * own checks, apart from moving GPU memory; it holds no state.
 */
final class XgmiHandshake {
  private XgmiHandshake() {}

  /** The request {@code engineKey} sends: its key, then this host's identity. */
  static byte[] request(String engineKey) {
    byte[] key = engineKey.getBytes(StandardCharsets.UTF_8);
    byte[] host = XgmiHost.local().encode();
    return ByteBuffer.allocate(2 + key.length + host.length).putShort((short) key.length).put(key).put(host).array();
  }

  /** Checks {@code initiatorKey}'s request; a malformed one, another key or another host is {@code INVALID_ARGS}. */
  static void checkRequest(String initiatorKey, byte[] request) {
    XgmiHost host;
    try {
      ByteBuffer b = ByteBuffer.wrap(request);
      int n = b.getShort() & 0xffff;
      if (n > b.remaining()) throw new IllegalArgumentException("key length " + n);
      byte[] key = new byte[n];
      b.get(key);
      String claimed = new String(key, StandardCharsets.UTF_8);
      if (!claimed.equals(initiatorKey))
        throw new TransportException(TransportError.INVALID_ARGS, "XGMI handshake names engine '" + claimed + "' but came from '" + initiatorKey + "'");
      byte[] rest = new byte[b.remaining()];
      b.get(rest);
      host = XgmiHost.decode(rest);
    } catch (RuntimeException e) {
      if (e instanceof TransportException te) throw te;
      throw new TransportException(TransportError.INVALID_ARGS, "malformed XGMI handshake from '" + initiatorKey + "': " + e.getMessage(), e);
    }
    if (!XgmiHost.local().sameHost(host))
      throw new TransportException(TransportError.INVALID_ARGS, "engine '" + initiatorKey + "' runs on " + host + ", not on this host ("
          + XgmiHost.local() + "): XGMI reaches only engines of one host");
  }

  /** The host of {@code peerKey}'s reply, which must be this one; otherwise {@code INVALID_ARGS}. */
  static XgmiHost replyHost(String peerKey, byte[] handshakeReply) {
    XgmiHost host;
    try {
      host = XgmiHost.decode(handshakeReply);
    } catch (IllegalArgumentException e) {
      throw new TransportException(TransportError.INVALID_ARGS, "malformed XGMI handshake reply from '" + peerKey + "': " + e.getMessage(), e);
    }
    if (!XgmiHost.local().sameHost(host))
      throw new TransportException(TransportError.INVALID_ARGS, "engine '" + peerKey + "' runs on " + host + ", not on this host");
    return host;
  }
}
