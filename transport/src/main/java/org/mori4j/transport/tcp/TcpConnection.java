package org.mori4j.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the two ends of a data connection share: the channel, its selection key on the owning I/O loop,
 * interest bookkeeping, the progress clock used to notice a silent peer, and the read-ahead stash. Every
 * method runs on the loop's thread. Who may touch that state at a time (the loop or a caller driving its own round
 * trip) is the hold of its superclass {@link ConnectionHold}.
 */
abstract class TcpConnection extends ConnectionHold {
  static final Logger log = LoggerFactory.getLogger(TcpConnection.class);

  /**
   * The loop that owns this connection. Fixed for an initiator's; a target's bulk lane moves once, from the loop that
   * accepted it to the backend's bulk loop, right after its hello ({@link TcpBackend#toBulkLoop}); the new loop's task
   * queue orders that write before the new loop's use of it.
   */
  TcpIoLoop loop;
  final SocketChannel channel;
  SelectionKey key;
  long lastProgressNanos = System.nanoTime();
  boolean dead;
  /** Reading is paused until a GPU copy frees a staging buffer (or the last one lands). */
  boolean readBlocked;
  /** Already on the loop's list of connections that wait for a GPU copy. */
  boolean gpuWaiting;
  /**
   * Bytes read ahead with a header (read mode: position..limit unread). A small request or response arrives
   * with the ones behind it in one system call; every read drains this before it touches the socket.
   */
  final ByteBuffer stash = direct(2 * WireFormat.INLINE_MAX).flip();
  private final ByteBuffer[] headerIov = new ByteBuffer[2];
  /** The staged pieces one socket read fills ({@link GpuStager#fill}: one, or one per free buffer with scatter). */
  private final ByteBuffer[] stageIov = new ByteBuffer[GpuStager.SLOTS];
  /** Staging for GPU payloads, opened on first use: device to socket, and socket to device. */
  private GpuStager outStager;
  private GpuStager inStager;
  /** TLS under this connection's reads and writes; null on the plain path, which then costs one null check per call. */
  TlsChannel tls;
  /** This end's socket-call counts per transfer ({@link TcpCallTrace}); null unless that trace is on. */
  final TcpCallTrace.Tally tally = TcpCallTrace.tally();

  TcpConnection(TcpIoLoop loop, SocketChannel channel) {
    this.loop = loop;
    this.channel = channel;
  }

  /** Loop thread, from a task: fails the connection once whoever holds it lets go. */
  final void failOnLoop(TransportError error, String message) {
    enterWaiting(LOOP);
    try {
      fail(error, message);
    } finally {
      exit();
    }
  }

  /** Loop thread: registers for reads. */
  void attach() throws IOException {
    key = channel.register(loop.selector(), SelectionKey.OP_READ, this);
    loop.add(this);
  }

  /** Loop thread: takes {@code op}; what it writes goes out at {@link #flushQueued} (the loop calls it after draining its queue). */
  abstract void enqueue(TransferOp op);

  /** Loop thread: writes what {@link #enqueue} took since the last call, several requests per write where it can. */
  void flushQueued() {}

  abstract void onReadable();

  abstract void onWritable();

  abstract void checkProgress(long now);

  /** Closes the connection and fails whatever it holds. Idempotent. */
  abstract void fail(TransportError error, String message);

  /** The loop polls this while the connection waits for a GPU copy (see {@link TcpIoLoop#awaitGpu}). */
  void onGpuPoll() {}

  final void interest(int ops) {
    if (readBlocked) ops &= ~SelectionKey.OP_READ;
    if (tls != null && tls.hasPendingOut()) ops |= SelectionKey.OP_WRITE;
    if (key != null && key.isValid() && key.interestOps() != ops) key.interestOps(ops);
  }

  /** Stops reading until {@link #resumeRead()}; the loop polls the GPU for this connection meanwhile. */
  final void pauseReadForGpu() {
    readBlocked = true;
    if (key != null && key.isValid()) interest(key.interestOps());
    loop.awaitGpu(this);
  }

  final void resumeRead() {
    if (!readBlocked) return;
    readBlocked = false;
    if (key != null && key.isValid()) interest(key.interestOps() | SelectionKey.OP_READ);
  }

  final GpuStager outStager() {
    if (outStager == null) outStager = loop.newStager();
    return outStager;
  }

  final GpuStager inStager() {
    if (inStager == null) inStager = loop.newStager();
    return inStager;
  }

  /** Starts staging {@code op}'s local blocks in one direction. */
  static void startStager(GpuStager st, boolean outbound, TransferOp op) {
    if (op.blockCount() == 1) {
      st.start(outbound, op.local(), op.localOffset(0), op.blockSize(0));
    } else {
      long[] lo = new long[op.blockCount()];
      long[] sz = new long[lo.length];
      for (int i = 0; i < lo.length; i++) {
        lo[i] = op.localOffset(i);
        sz[i] = op.blockSize(i);
      }
      st.start(outbound, op.local(), lo, sz, op.totalBytes());
    }
  }

  /**
   * Writes what is left of {@code header} and the rest of {@code st}'s staged payload, several ready pieces per call
   * ({@link GpuStager#fill}) through {@code iov}; true once all of it is out (the stager finished), false while it
   * waits for the socket (interest {@code idleOps} plus write) or for a device-to-host copy (interest {@code idleOps},
   * the loop's GPU poll registered). The sending twin of {@link #stageIn}: an initiator's WRITE payload, a target's
   * READ response.
   */
  final boolean stageOut(GpuStager st, ByteBuffer header, ByteBuffer[] iov, int idleOps) throws IOException {
    while (true) {
      int n = 0;
      if (header.hasRemaining()) iov[n++] = header;
      int views = n;
      if (st.remaining() > 0) n = st.fill(iov, n);
      boolean staged = n > views;
      if (n == 0) {
        if (st.remaining() == 0) {
          st.finish();
          return true;
        }
        interest(idleOps);
        loop.awaitGpu(this);
        return false;
      }
      long before = header.remaining();
      long w = write(iov, n);
      long payload = w - (before - header.remaining());
      if (payload > 0) st.advance(payload);
      if (header.hasRemaining() || (staged && iov[n - 1].hasRemaining())) {
        interest(idleOps | SelectionKey.OP_WRITE);
        return false;
      }
    }
  }

  /**
   * Reads the rest of {@code st}'s payload from the socket into its staging buffers, pausing reads while every
   * buffer waits for its host-to-device copy; true once every byte is on the device (reads resumed), false
   * while it waits for the socket or the GPU. {@code closed} is the message when the peer closes mid-payload.
   */
  final boolean stageIn(GpuStager st, String closed) throws IOException {
    while (st.remaining() > 0) {
      int n = st.fill(stageIov, 0);
      if (n == 0) {
        pauseReadForGpu();
        return false;
      }
      long r = in(stageIov, n);
      if (r < 0) throw new IOException(closed);
      if (r > 0) st.advance(r);
      if (stageIov[n - 1].hasRemaining()) {
        resumeRead();
        return false;
      }
    }
    if (!st.drained()) {
      pauseReadForGpu();
      return false;
    }
    resumeRead();
    return true;
  }

  /** Reads into {@code header}, and whatever follows it that fits into the stash, in one system call when nothing is stashed. */
  final long readAhead(ByteBuffer header) throws IOException {
    if (stash.hasRemaining()) return in(header);
    stash.clear();
    headerIov[0] = header;
    headerIov[1] = stash;
    try {
      return read(headerIov, 2);
    } finally {
      stash.flip();
    }
  }

  /** Moves stashed bytes into {@code dst}, then reads from the socket if {@code dst} still has room; -1 at end of stream. */
  final int in(ByteBuffer dst) throws IOException {
    int n = drain(dst);
    if (!dst.hasRemaining()) return n;
    int r = read(dst);
    return r < 0 ? (n > 0 ? n : -1) : n + r;
  }

  /** {@link #in(ByteBuffer)} for the first {@code count} buffers of {@code iov}. */
  final long in(ByteBuffer[] iov, int count) throws IOException {
    long n = 0;
    for (int i = 0; i < count && stash.hasRemaining(); i++) n += drain(iov[i]);
    if (stash.hasRemaining() || !iov[count - 1].hasRemaining()) return n;
    long r = read(iov, count);
    return r < 0 ? (n > 0 ? n : -1) : n + r;
  }

  private int drain(ByteBuffer dst) {
    int n = Math.min(stash.remaining(), dst.remaining());
    if (n == 0) return 0;
    int limit = stash.limit();
    stash.limit(stash.position() + n);
    dst.put(stash);
    stash.limit(limit);
    return n;
  }

  /**
   * Bytes wait to be read where the selector cannot see them: in the stash, or (TLS) already received and not
   * yet handed out. Code that would otherwise leave the next read to the selector checks this first.
   */
  final boolean buffered() {
    return stash.hasRemaining() || (tls != null && tls.hasBuffered());
  }

  /** Reads into {@code b}; -1 on end of stream. */
  final int read(ByteBuffer b) throws IOException {
    long offered = tally != null ? b.remaining() : 0;
    int n = tls == null ? channel.read(b) : tlsRead(b);
    if (tally != null) tally.read(offered, n);
    if (n > 0) lastProgressNanos = System.nanoTime();
    return n;
  }

  final long read(ByteBuffer[] iov, int count) throws IOException {
    long offered = tally != null ? TcpCallTrace.remaining(iov, count) : 0;
    // the JDK's vectored calls allocate a releaser per buffer of a memory segment; one buffer needs none
    long n = tls != null ? tlsRead(iov, count) : count == 1 ? channel.read(iov[0]) : channel.read(iov, 0, count);
    if (tally != null) tally.read(offered, n);
    if (n > 0) lastProgressNanos = System.nanoTime();
    return n;
  }

  final int write(ByteBuffer b) throws IOException {
    long offered = tally != null ? b.remaining() : 0;
    int n = tls == null ? channel.write(b) : (int) tls.write(b);
    if (tally != null) tally.write(offered, n);
    if (n > 0) lastProgressNanos = System.nanoTime();
    return n;
  }

  final long write(ByteBuffer[] iov, int count) throws IOException {
    long offered = tally != null ? TcpCallTrace.remaining(iov, count) : 0;
    long n = tls != null ? tls.write(iov, count) : count == 1 ? channel.write(iov[0]) : channel.write(iov, 0, count);
    if (tally != null) tally.write(offered, n);
    if (n > 0) lastProgressNanos = System.nanoTime();
    return n;
  }

  private int tlsRead(ByteBuffer b) throws IOException {
    int n = tls.read(b);
    // a post-handshake message (a key update) may have left an answer to send
    if (tls.hasPendingOut()) wantWrite();
    return n;
  }

  private long tlsRead(ByteBuffer[] iov, int count) throws IOException {
    long n = tls.read(iov, count);
    if (tls.hasPendingOut()) wantWrite();
    return n;
  }

  private void wantWrite() {
    if (key != null && key.isValid() && (key.interestOps() & SelectionKey.OP_WRITE) == 0)
      key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
  }

  /**
   * TLS, loop thread, for each ready key: drives the handshake until it completes and flushes pending
   * ciphertext when the socket is writable; returns the ready operations the connection itself handles. A
   * failed handshake closes the connection with one log line before the connection ever reads a byte, so a
   * peer without a valid certificate never reaches the hello and its token check.
   */
  final int tlsReady(int ready) {
    TlsChannel t = tls;
    try {
      if (!t.established()) {
        if (t.taskRunning()) return 0;
        int want = t.handshake();
        if (want < 0) {
          key.interestOps(0);
          t.runTasks(this::tlsTasksDone);
          return 0;
        }
        if (want > 0) {
          key.interestOps(want);
          return 0;
        }
        lastProgressNanos = System.nanoTime();
        key.interestOps(SelectionKey.OP_READ | (t.hasPendingOut() ? SelectionKey.OP_WRITE : 0));
        // what came with the peer's last handshake message (its hello, say) is already here
        return t.hasBuffered() ? SelectionKey.OP_READ : 0;
      }
      if ((ready & SelectionKey.OP_WRITE) != 0 && t.hasPendingOut()) {
        if (!t.flush()) return ready & ~SelectionKey.OP_WRITE;
        // the connection's own write, if any, sets write interest again
        key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
      }
      return ready;
    } catch (IOException | RuntimeException e) {
      if (!t.established()) {
        // the peer learns why (bad certificate, ...); the connection's close is the one log line
        t.sendAlert();
        fail(TransportError.TRANSPORT, "TLS handshake failed: " + e.getMessage());
      } else {
        fail(TransportError.TRANSPORT, "TLS: " + e.getMessage());
      }
      return 0;
    }
  }

  /** Any thread: the handshake's delegated tasks are done; the loop takes the handshake up again. */
  private void tlsTasksDone() {
    try {
      loop.execute(() -> {
        enterWaiting(LOOP);
        try {
          tls.tasksDone();
          if (dead) return;
          int ready = tlsReady(0);
          if ((ready & SelectionKey.OP_READ) != 0) onReadable();
        } finally {
          exit();
        }
      });
    } catch (IllegalStateException loopClosed) {
      // the loop closed and failed this connection already
    }
  }

  /** Loop thread: takes the connection off its loop (selector key and timer list) so that another loop can attach it. */
  final void detach() {
    loop.remove(this);
    if (key != null) key.cancel();
    key = null;
  }

  final void closeChannel() {
    dead = true;
    loop.remove(this);
    if (key != null) key.cancel();
    try {
      channel.close();
    } catch (IOException e) {
      log.debug("close", e);
    }
    if (outStager != null) outStager.close();
    if (inStager != null) inStager.close();
  }

  static ByteBuffer direct(int size) {
    return ByteBuffer.allocateDirect(size);
  }
}
