package org.mori4j.transport.tcp.fuzz;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * A hostile or broken peer of the TCP data port: a plain blocking {@link SocketChannel} on loopback that writes
 * whatever frames it is given, built from its own reading of the wire format (it does not share the backend's
 * encoder, so an encoder bug cannot hide a decoder bug). Reads time out, so no test waits for ever.
 */
final class RawClient implements AutoCloseable {
  // the wire format as transport/docs/tcp.md and WireFormat's Javadoc describe it
  static final int REQ_MAGIC = 0x4d344a51;
  static final int RESP_MAGIC = 0x4d344a52;
  static final int VERSION = 1;
  static final int REQ_HEADER = 64;
  static final int RESP_HEADER = 32;
  static final int ENTRY = 16;
  static final int T_HELLO = 1, T_WRITE = 2, T_READ = 3;
  static final int T_HELLO_OK = 0x11, T_WRITE_DONE = 0x12, T_READ_DATA = 0x13;
  static final int F_NOTIFY = 1, F_PART = 2;
  static final int MAX_SMALL_PAYLOAD = 4096;

  /** A response: its type, status (0 ok), sequence number and the bytes that followed it. */
  record Response(int type, int status, long seq, byte[] payload) {
    String text() {
      return new String(payload, StandardCharsets.UTF_8);
    }
  }

  final SocketChannel channel;
  private final InputStream in;

  RawClient(InetSocketAddress target, int readTimeoutMillis) throws IOException {
    channel = SocketChannel.open(target);
    channel.socket().setSoTimeout(readTimeoutMillis);
    in = channel.socket().getInputStream();
  }

  /** A request frame; {@code offsets}/{@code sizes} fill the block list, whose count is {@code entryCount} on the wire. */
  static ByteBuffer request(int magic, int version, int type, int flags, int entryCount, int parts, long seq, long uid,
                            long memId, long accessKey, long baseAddress, long payloadBytes, long[] offsets, long[] sizes,
                            byte[] tail) {
    int blocks = offsets.length;
    ByteBuffer b = ByteBuffer.allocate(REQ_HEADER + ENTRY * blocks + (tail == null ? 0 : tail.length));
    b.putInt(magic).put((byte) version).put((byte) type).putShort((short) flags).putInt(entryCount).putInt(parts)
        .putLong(seq).putLong(uid).putLong(memId).putLong(accessKey).putLong(baseAddress).putLong(payloadBytes);
    for (int i = 0; i < blocks; i++) b.putLong(offsets[i]).putLong(sizes[i]);
    if (tail != null) b.put(tail);
    return b.flip();
  }

  /** A well-formed request of {@code type} with blocks (offsets[i], sizes[i]) and the payload that follows it. */
  static ByteBuffer request(int type, int flags, long seq, long memId, long accessKey, long baseAddress, long payloadBytes,
                            long[] offsets, long[] sizes, byte[] tail) {
    return request(REQ_MAGIC, VERSION, type, flags, offsets.length, 1, seq, 0, memId, accessKey, baseAddress, payloadBytes,
        offsets, sizes, tail);
  }

  static ByteBuffer hello(String key, long token) {
    byte[] k = key.getBytes(StandardCharsets.UTF_8);
    return request(REQ_MAGIC, VERSION, T_HELLO, 0, 1, 1, 0, token, 0, 0, 0, k.length, new long[] {0},
        new long[] {k.length}, k);
  }

  /** Sends {@code frame}; false if the target had already closed the connection. */
  boolean send(ByteBuffer frame) {
    try {
      while (frame.hasRemaining()) channel.write(frame);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  boolean send(byte[] bytes) {
    return send(ByteBuffer.wrap(bytes));
  }

  /** Presents a hello and returns the answer (status 0: accepted), or null if the target closed without one. */
  Response presentHello(String key, long token) throws IOException {
    if (!send(hello(key, token))) return null;
    return response();
  }

  /** The next response, with its payload; null if the connection ended first. */
  Response response() throws IOException {
    byte[] h = readFully(RESP_HEADER);
    if (h == null) return null;
    ByteBuffer r = ByteBuffer.wrap(h);
    if (r.getInt(0) != RESP_MAGIC) throw new IOException(String.format("response magic 0x%08x", r.getInt(0)));
    long len = r.getLong(16);
    if (len < 0 || len > (64L << 20)) throw new IOException("response payload of " + len + " bytes");
    byte[] payload = readFully((int) len);
    if (payload == null) throw new EOFException("closed inside a response's payload");
    return new Response(r.get(5) & 0xff, r.get(6) & 0xff, r.getLong(8), payload);
  }

  private byte[] readFully(int n) throws IOException {
    byte[] b = new byte[n];
    int got = 0;
    while (got < n) {
      int r;
      try {
        r = in.read(b, got, n - got);
      } catch (SocketTimeoutException e) {
        throw e;
      } catch (IOException e) {
        return null; // reset by the target: the connection ended
      }
      if (r < 0) return null;
      got += r;
    }
    return b;
  }

  /**
   * Whether the target closes the connection within {@code millis}: reads (and drops) whatever is still
   * buffered until end of stream or a reset.
   */
  boolean closedWithin(long millis) throws IOException {
    long deadline = System.nanoTime() + millis * 1_000_000;
    byte[] sink = new byte[64 * 1024];
    while (System.nanoTime() < deadline) {
      try {
        if (in.read(sink) < 0) return true;
      } catch (SocketTimeoutException e) {
        // keep waiting until the deadline
      } catch (IOException e) {
        return true;
      }
    }
    return false;
  }

  /** Ends the writing half, as a peer does that has nothing more to say. */
  void shutdownOutput() {
    try {
      channel.shutdownOutput();
    } catch (IOException e) {
      // the target already closed it
    }
  }

  @Override
  public void close() {
    try {
      channel.close();
    } catch (IOException e) {
      // closing is best effort: the test checks the target side
    }
  }
}
