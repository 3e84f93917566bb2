package org.mori4j.transport.tcp;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

/**
 * TLS under one data connection: an {@link SSLEngine} between the connection's reads and writes and its
 * non-blocking socket. {@link TcpConnection} sends every read and write through here when the backend runs
 * TLS, so the request/response logic above is the same code for both; the plain path never touches this
 * class. Writes encrypt into {@code netOut} (many records per system call) and report the plaintext they
 * took; ciphertext the socket did not take stays pending and goes out when the socket is writable (the
 * connection keeps write interest while {@link #hasPendingOut()}). Reads decrypt straight into the caller's
 * buffers (registered memory for payloads) and go through {@code appIn} only when the room left is smaller
 * than a record. A read that leaves room in its buffers has left no complete record behind, so the selector
 * tells when more comes; otherwise {@link #hasBuffered()} says bytes are waiting that no selector sees.
 * The handshake is driven by whoever owns the socket: the I/O loop on a target (delegated tasks on
 * {@link #TASKS}, the connection idle meanwhile), the caller's thread with a private selector on an
 * initiator ({@link #handshakeBlocking}).
 */
final class TlsChannel {
  /** Certificate checks and signatures of the handshakes: off the I/O loops, one virtual thread per task. */
  static final Executor TASKS = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("mori4j-tls-task-", 0).factory());
  private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
  /** Ciphertext buffered per direction: 16 records of 16 KiB, so a bulk transfer makes one system call per ~256 KiB. */
  static final int NET_BUFFER = 256 * 1024;

  final SSLEngine engine;
  private final SocketChannel channel;
  private final int packetSize;
  /** Read mode: received ciphertext not yet decrypted. */
  private final ByteBuffer netIn;
  /** Read mode: ciphertext not yet written. */
  private final ByteBuffer netOut;
  /** Read mode: plaintext decrypted but not yet handed to the connection. */
  private final ByteBuffer appIn;
  private final ByteBuffer[] one = new ByteBuffer[1];
  private boolean established;
  /** A delegated task runs on {@link #TASKS}; the handshake waits for it. Loop thread only. */
  private boolean taskRunning;

  TlsChannel(SSLEngine engine, SocketChannel channel) throws SSLException {
    this.engine = engine;
    this.channel = channel;
    this.packetSize = engine.getSession().getPacketBufferSize();
    int net = Math.max(NET_BUFFER, 2 * packetSize);
    this.netIn = ByteBuffer.allocateDirect(net).flip();
    this.netOut = ByteBuffer.allocateDirect(net).flip();
    this.appIn = ByteBuffer.allocateDirect(engine.getSession().getApplicationBufferSize()).flip();
    engine.beginHandshake();
  }

  boolean established() {
    return established;
  }

  boolean taskRunning() {
    return taskRunning;
  }

  /** Ciphertext waits for the socket. */
  boolean hasPendingOut() {
    return netOut.hasRemaining();
  }

  /** Plaintext or ciphertext already read from the socket waits here, where no selector sees it. */
  boolean hasBuffered() {
    return appIn.hasRemaining() || netIn.hasRemaining();
  }

  /** Writes pending ciphertext; true once none is left. */
  boolean flush() throws IOException {
    while (netOut.hasRemaining()) {
      if (channel.write(netOut) == 0) return false;
    }
    return true;
  }

  /**
   * Drives the handshake as far as the socket allows: 0 once it is complete, else the interest it waits for
   * ({@code OP_READ} or {@code OP_WRITE}), or -1 when a delegated task must run first ({@link #runTasks}).
   * A failure throws (an {@link SSLException} for a refused peer); {@link #sendAlert()} then tells the peer why.
   */
  int handshake() throws IOException {
    while (true) {
      if (netOut.hasRemaining() && !flush()) return SelectionKey.OP_WRITE;
      SSLEngineResult.HandshakeStatus hs = engine.getHandshakeStatus();
      switch (hs) {
        case NEED_WRAP -> {
          netOut.compact();
          SSLEngineResult r;
          try {
            r = engine.wrap(EMPTY, netOut);
          } finally {
            netOut.flip();
          }
          if (r.getStatus() == SSLEngineResult.Status.CLOSED && !netOut.hasRemaining())
            throw new SSLException("TLS session closed during the handshake");
        }
        case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
          if (netIn.hasRemaining()) {
            SSLEngineResult r = unwrapIntoApp();
            if (r.getStatus() == SSLEngineResult.Status.CLOSED) throw new SSLException("peer closed the TLS session during the handshake");
            if (r.getStatus() == SSLEngineResult.Status.OK && (r.bytesConsumed() > 0 || r.bytesProduced() > 0)) continue;
            if (r.getStatus() == SSLEngineResult.Status.OK && r.getHandshakeStatus() != hs) continue;
          }
          int n = readSocket();
          if (n < 0) throw new EOFException("peer closed the connection during the TLS handshake (does it run TLS on this data path?)");
          if (n == 0) return SelectionKey.OP_READ;
        }
        case NEED_TASK -> {
          return -1;
        }
        default -> {
          // FINISHED or NOT_HANDSHAKING: what is still pending goes out when the socket takes it
          established = true;
          flush();
          return 0;
        }
      }
    }
  }

  /** Runs the pending delegated tasks on {@link #TASKS}, then {@code resume} (on the task's thread). */
  void runTasks(Runnable resume) {
    taskRunning = true;
    TASKS.execute(() -> {
      try {
        Runnable t;
        while ((t = engine.getDelegatedTask()) != null) t.run();
      } finally {
        resume.run();
      }
    });
  }

  /** Loop thread: the tasks of {@link #runTasks} are done. */
  void tasksDone() {
    taskRunning = false;
  }

  /** Best effort after a failed handshake: the alert the engine queued (bad certificate, ...) goes to the peer. */
  void sendAlert() {
    try {
      engine.closeOutbound();
      netOut.compact();
      try {
        engine.wrap(EMPTY, netOut);
      } finally {
        netOut.flip();
      }
      channel.write(netOut);
    } catch (IOException | RuntimeException ignored) {
      // the connection closes anyway; the peer then sees the close instead of the alert
    }
  }

  /** Encrypts from {@code srcs[0..count)} and writes; returns the plaintext bytes taken (their ciphertext may still be pending). */
  long write(ByteBuffer[] srcs, int count) throws IOException {
    if (!flush()) return 0;
    long want = 0;
    for (int i = 0; i < count; i++) want += srcs[i].remaining();
    long consumed = 0;
    while (consumed < want) {
      netOut.compact();
      try {
        while (consumed < want && netOut.remaining() >= packetSize) {
          SSLEngineResult r = engine.wrap(srcs, 0, count, netOut);
          if (r.getStatus() == SSLEngineResult.Status.CLOSED) throw new SSLException("TLS session closed");
          consumed += r.bytesConsumed();
          if (r.getStatus() != SSLEngineResult.Status.OK || r.bytesConsumed() == 0) break;
        }
      } finally {
        netOut.flip();
      }
      if (!flush()) break;
    }
    return consumed;
  }

  long write(ByteBuffer src) throws IOException {
    one[0] = src;
    try {
      return write(one, 1);
    } finally {
      one[0] = null;
    }
  }

  /**
   * Decrypts into {@code dsts[0..count)}, reading the socket while they have room and it has bytes; -1 when
   * the peer closed (TLS close or end of stream) before anything was delivered.
   */
  long read(ByteBuffer[] dsts, int count) throws IOException {
    long room = 0;
    for (int i = 0; i < count; i++) room += dsts[i].remaining();
    long n = drainApp(dsts, count);
    room -= n;
    while (room > 0) {
      if (netIn.hasRemaining()) {
        SSLEngineResult r = engine.unwrap(netIn, dsts, 0, count);
        switch (r.getStatus()) {
          case OK -> {
            n += r.bytesProduced();
            room -= r.bytesProduced();
            afterUnwrap(r.getHandshakeStatus());
            if (r.bytesConsumed() > 0 || r.bytesProduced() > 0) continue;
          }
          case BUFFER_OVERFLOW -> {
            // less room than a record: decrypt it aside and hand out what fits. The JDK checks the room before
            // it checks that the record is complete, so a partial record lands here too and needs more bytes.
            SSLEngineResult a = unwrapIntoApp();
            if (a.getStatus() == SSLEngineResult.Status.CLOSED) return n > 0 ? n : -1;
            if (a.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) throw new SSLException("TLS record larger than the application buffer");
            if (a.getStatus() == SSLEngineResult.Status.OK) {
              afterUnwrap(a.getHandshakeStatus());
              long d = drainApp(dsts, count);
              n += d;
              room -= d;
              continue;
            }
          }
          case CLOSED -> {
            return n > 0 ? n : -1;
          }
          case BUFFER_UNDERFLOW -> {
            // a partial record: read on
          }
        }
      }
      int r = readSocket();
      if (r < 0) return n > 0 ? n : -1;
      if (r == 0) return n;
    }
    return n;
  }

  int read(ByteBuffer dst) throws IOException {
    one[0] = dst;
    try {
      return (int) read(one, 1);
    } finally {
      one[0] = null;
    }
  }

  /** Initiator: completes the handshake on the caller's thread, tasks included, by {@code deadlineNanos}. */
  void handshakeBlocking(long deadlineNanos) throws IOException {
    try (Selector sel = Selector.open()) {
      SelectionKey k = channel.register(sel, 0);
      int want;
      while ((want = handshake()) != 0) {
        if (want < 0) {
          Runnable t;
          while ((t = engine.getDelegatedTask()) != null) t.run();
        } else await(sel, k, want, deadlineNanos, "TLS handshake");
      }
      while (!flush()) await(sel, k, SelectionKey.OP_WRITE, deadlineNanos, "TLS handshake");
    }
  }

  /** Initiator, before the connection goes to its loop: writes all of {@code b} by {@code deadlineNanos}. */
  void writeFully(ByteBuffer b, long deadlineNanos) throws IOException {
    try (Selector sel = Selector.open()) {
      SelectionKey k = channel.register(sel, 0);
      while (b.hasRemaining() || hasPendingOut()) {
        write(b);
        if (b.hasRemaining() || hasPendingOut()) await(sel, k, SelectionKey.OP_WRITE, deadlineNanos, "hello");
      }
    }
  }

  /** Initiator, before the connection goes to its loop: fills {@code b} by {@code deadlineNanos}. */
  void readFully(ByteBuffer b, long deadlineNanos) throws IOException {
    try (Selector sel = Selector.open()) {
      SelectionKey k = channel.register(sel, 0);
      while (b.hasRemaining()) {
        if (read(b) < 0) throw new EOFException("peer closed during hello");
        if (b.hasRemaining()) await(sel, k, SelectionKey.OP_READ, deadlineNanos, "hello");
      }
    }
  }

  private static void await(Selector sel, SelectionKey k, int ops, long deadlineNanos, String what) throws IOException {
    long left = deadlineNanos - System.nanoTime();
    if (left <= 0) throw new SocketTimeoutException(what + " did not finish within the connect timeout");
    k.interestOps(ops);
    sel.select(Math.max(1, left / 1_000_000));
    sel.selectedKeys().clear();
  }

  private void afterUnwrap(SSLEngineResult.HandshakeStatus hs) throws IOException {
    // after the handshake only TLS 1.3's post-handshake messages get here: a key update may need an answer
    if (hs == SSLEngineResult.HandshakeStatus.NEED_TASK) {
      Runnable t;
      while ((t = engine.getDelegatedTask()) != null) t.run();
      hs = engine.getHandshakeStatus();
    }
    if (hs == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
      netOut.compact();
      try {
        engine.wrap(EMPTY, netOut);
      } finally {
        netOut.flip();
      }
      flush();
    }
  }

  private SSLEngineResult unwrapIntoApp() throws SSLException {
    appIn.compact();
    try {
      return engine.unwrap(netIn, appIn);
    } finally {
      appIn.flip();
    }
  }

  private long drainApp(ByteBuffer[] dsts, int count) {
    long n = 0;
    for (int i = 0; i < count && appIn.hasRemaining(); i++) {
      ByteBuffer d = dsts[i];
      int k = Math.min(d.remaining(), appIn.remaining());
      if (k == 0) continue;
      int limit = appIn.limit();
      appIn.limit(appIn.position() + k);
      d.put(appIn);
      appIn.limit(limit);
      n += k;
    }
    return n;
  }

  private int readSocket() throws IOException {
    netIn.compact();
    try {
      return channel.read(netIn);
    } finally {
      netIn.flip();
    }
  }
}
