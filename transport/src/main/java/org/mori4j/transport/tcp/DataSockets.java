package org.mori4j.transport.tcp;

import static org.mori4j.transport.tcp.WireFormat.*;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * Opening a data connection, before any I/O loop owns it: the socket options both ends set, and the initiator's
 * connect and hello (with TLS, the handshake first and the hello inside it), done blocking on the caller's thread
 * within the connect timeout. A refused hello or a peer that speaks TLS where this end does not (or the reverse)
 * fails with a message that says so.
 */
final class DataSockets {
  private DataSockets() {}

  /** Socket options of every data connection, both ends: non-blocking, no Nagle, keep-alive, the buffer size if set. */
  static void configure(SocketChannel ch, TcpSettings settings) throws IOException {
    ch.configureBlocking(false);
    ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
    ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
    if (settings.socketBufferBytes() > 0) {
      ch.setOption(StandardSocketOptions.SO_SNDBUF, settings.socketBufferBytes());
      ch.setOption(StandardSocketOptions.SO_RCVBUF, settings.socketBufferBytes());
    }
  }

  /**
   * Connects {@code ch} and presents the hello; with TLS the handshake comes first and the hello travels inside
   * it, and the returned channel (null without TLS) goes on with the connection, bytes it already read included.
   */
  static TlsChannel openAndHello(SocketChannel ch, InetSocketAddress address, long token, boolean bulk, String engineKey,
                                 TcpSettings settings) throws IOException {
    int timeoutMs = (int) Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis());
    ch.socket().connect(address, timeoutMs);
    byte[] key = engineKey.getBytes(StandardCharsets.UTF_8);
    ByteBuffer hello = ByteBuffer.allocate(REQ_HEADER + ENTRY + key.length);
    WireFormat.putRequest(hello, T_HELLO, bulk ? F_BULK : 0, 1, 1, 0, token, 0, 0, 0, key.length);
    hello.putLong(0).putLong(key.length).put(key).flip();
    if (settings.tls() != null) {
      long deadline = System.nanoTime() + settings.connectTimeout().toNanos();
      configure(ch, settings);
      TlsChannel tls = new TlsChannel(settings.tls().clientEngine(address.getHostString(), address.getPort()), ch);
      try {
        tls.handshakeBlocking(deadline);
      } catch (IOException e) {
        tls.sendAlert(); // the target's log then says why (certificate_unknown, ...) instead of "closed"
        throw e;
      }
      tls.writeFully(hello, deadline);
      ByteBuffer r = ByteBuffer.allocate(RESP_HEADER);
      tls.readFully(r, deadline);
      checkHelloResponse(r, len -> {
        ByteBuffer m = ByteBuffer.allocate(len);
        tls.readFully(m, deadline);
        return m.array();
      });
      return tls;
    }
    ch.socket().setSoTimeout(timeoutMs);
    while (hello.hasRemaining()) ch.write(hello);
    byte[] resp = ch.socket().getInputStream().readNBytes(RESP_HEADER);
    if (resp.length < RESP_HEADER)
      throw new IOException(resp.length >= 2 && resp[0] == 0x15 && resp[1] == 0x03
          ? "the peer answered with a TLS alert and closed (is mori4j.tcp.tls on there and off here?)" : "peer closed during hello");
    InputStream in = ch.socket().getInputStream();
    checkHelloResponse(ByteBuffer.wrap(resp), in::readNBytes);
    ch.socket().setSoTimeout(0);
    return null;
  }

  private interface MessageReader {
    byte[] read(int bytes) throws IOException;
  }

  private static void checkHelloResponse(ByteBuffer r, MessageReader message) throws IOException {
    // a TLS record (an alert: 0x15) where a plain response belongs: the target runs TLS and this end does not
    if (r.get(0) == 0x15 && r.get(1) == 0x03) throw new IOException("the peer answered with TLS (is mori4j.tcp.tls on there and off here?)");
    if (r.getInt(0) != RESP_MAGIC || r.get(5) != T_HELLO_OK) throw new IOException("bad hello response");
    int status = r.get(6) & 0xff;
    if (status != 0) {
      int len = (int) Math.min(MAX_SMALL_PAYLOAD, r.getLong(16));
      throw new IOException("peer refused hello: " + new String(message.read(len), StandardCharsets.UTF_8));
    }
  }
}
