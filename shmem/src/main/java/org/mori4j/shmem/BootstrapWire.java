package org.mori4j.shmem;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;

/**
 * The bootstrap's wire: frames {@code int type, int step, int length, bytes} over one socket per peer, the frame
 * types, and the encoding of a step's result (every rank's bytes in rank order). Lengths are checked before anything
 * is allocated, so that a stray client cannot make a rank allocate gigabytes.
 */
final class BootstrapWire {
  static final int HELLO = 1, WELCOME = 2, REFUSE = 3, CONTRIBUTE = 4, RESULT = 5, ABORT = 6;
  /** Frames above this are refused. */
  private static final int MAX_FRAME = 64 << 20;

  private BootstrapWire() {}

  static byte[] encode(byte[][] parts) {
    int total = 4;
    for (byte[] p : parts) total += 4 + p.length;
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(total).putInt(parts.length);
    for (byte[] p : parts) b.putInt(p.length).put(p);
    return b.array();
  }

  static byte[][] decode(byte[] data) throws IOException {
    java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(data);
    int n = b.getInt();
    if (n < 0 || n > 1 << 16) throw new IOException("a result of " + n + " parts");
    byte[][] parts = new byte[n][];
    for (int i = 0; i < n; i++) {
      int len = b.getInt();
      if (len < 0 || len > b.remaining()) throw new IOException("a result part of " + len + " bytes");
      parts[i] = new byte[len];
      b.get(parts[i]);
    }
    return parts;
  }

  record Frame(int type, int step, byte[] data) {}

  /** A socket to one peer, with framed, synchronised output. */
  static final class Connection {
    final int peer;
    final Socket socket;
    final DataOutputStream out;
    final DataInputStream in;

    Connection(int peer, Socket socket) throws IOException {
      this.peer = peer;
      this.socket = socket;
      this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
      this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
    }

    /** The same socket and streams under the peer's rank, once its hello named it. */
    Connection(int peer, Socket socket, Connection streams) {
      this.peer = peer;
      this.socket = socket;
      this.out = streams.out;
      this.in = streams.in;
    }

    synchronized void write(int type, int step, byte[] data) throws IOException {
      out.writeInt(type);
      out.writeInt(step);
      out.writeInt(data.length);
      out.write(data);
      out.flush();
    }

    Frame read() throws IOException {
      int type = in.readInt();
      int step = in.readInt();
      int length = in.readInt();
      if (length < 0 || length > MAX_FRAME) throw new IOException("frame of " + length + " bytes");
      byte[] data = new byte[length];
      in.readFully(data);
      return new Frame(type, step, data);
    }
  }
}
