package org.mori4j.bench.baseline;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The receiving side of the plain-NIO baseline: what the TCP backend would cost with no actors, no framing
 * and no registrations. It runs inside {@code mori4j serve}, so that the baseline crosses processes exactly
 * like the engine does. Protocol ({@link NioBaselineProtocol}): a client sends a header with the message size
 * and the number of buffer slots, then messages back to back; the server reads each message fully into its
 * slot of a direct buffer and answers with an 8-byte ack carrying the message's sequence number. One blocking
 * thread per connection: the simplest fast design on the JVM, and the one the engine must approach.
 */
public final class NioBaselineServer implements AutoCloseable {
  private final ServerSocketChannel server;
  private final long maxBufferBytes;
  private final Set<SocketChannel> open = ConcurrentHashMap.newKeySet();
  private final Thread acceptor;
  private volatile boolean closed;

  private NioBaselineServer(ServerSocketChannel server, long maxBufferBytes) {
    this.server = server;
    this.maxBufferBytes = maxBufferBytes;
    this.acceptor = Thread.ofPlatform().daemon().name("nio-baseline-accept").unstarted(this::acceptLoop);
  }

  /**
   * Binds {@code host} on a free port and starts accepting.
   *
   * @param maxBufferBytes largest receive buffer one connection may allocate (the serve buffer size)
   */
  public static NioBaselineServer start(String host, long maxBufferBytes) throws IOException {
    ServerSocketChannel ch = ServerSocketChannel.open();
    ch.bind(new InetSocketAddress(host, 0));
    NioBaselineServer s = new NioBaselineServer(ch, maxBufferBytes);
    s.acceptor.start();
    return s;
  }

  public int port() {
    try {
      return ((InetSocketAddress) server.getLocalAddress()).getPort();
    } catch (IOException e) {
      throw new IllegalStateException("NIO baseline server is closed", e);
    }
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        SocketChannel c = server.accept();
        open.add(c);
        Thread.ofPlatform().daemon().name("nio-baseline-conn").start(() -> serve(c));
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException e) {
        if (!closed) System.err.println("nio baseline: accept failed: " + e);
      }
    }
  }

  private void serve(SocketChannel c) {
    try (c; Arena arena = Arena.ofConfined()) {
      c.setOption(StandardSocketOptions.TCP_NODELAY, true);
      ByteBuffer header = ByteBuffer.allocateDirect(NioBaselineProtocol.HEADER_BYTES).order(ByteOrder.BIG_ENDIAN);
      if (!readFully(c, header, true)) return;
      header.flip();
      NioBaselineProtocol.Header h = NioBaselineProtocol.Header.decode(header);
      long msg = h.msgSize();
      // the client sized its slots to the same cap; clamp anyway so a bad client cannot make us allocate more
      long slots = Math.max(1, Math.min(Math.min(h.slots(), Integer.MAX_VALUE / msg), Math.max(1, maxBufferBytes / msg)));
      ByteBuffer buf = arena.allocate(msg * slots, 4096).asByteBuffer();
      ByteBuffer ack = ByteBuffer.allocateDirect(8).order(ByteOrder.BIG_ENDIAN);
      for (long seq = 0; ; seq++) {
        int off = (int) ((seq % slots) * msg);
        buf.limit(off + (int) msg).position(off);
        if (!readFully(c, buf, true)) return;
        ack.clear();
        ack.putLong(0, seq);
        while (ack.hasRemaining()) c.write(ack);
      }
    } catch (IOException | IllegalArgumentException e) {
      if (!closed) System.err.println("nio baseline: connection ended: " + e);
    } finally {
      open.remove(c);
    }
  }

  /** Fills {@code b}; false on a clean EOF before the first byte (client finished), EOFException mid-message. */
  static boolean readFully(SocketChannel c, ByteBuffer b, boolean eofOkAtStart) throws IOException {
    boolean first = true;
    while (b.hasRemaining()) {
      int n = c.read(b);
      if (n < 0) {
        if (first && eofOkAtStart) return false;
        throw new EOFException("peer closed mid-message");
      }
      if (n > 0) first = false;
    }
    return true;
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException ignored) {
      // closing a listening socket: nothing left to do
    }
    for (SocketChannel c : open) {
      try {
        c.close();
      } catch (IOException ignored) {
        // the connection thread sees the close and ends
      }
    }
  }
}
