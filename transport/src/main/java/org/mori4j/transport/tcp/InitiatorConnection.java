package org.mori4j.transport.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import org.mori4j.transport.RegionViews;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The initiator's end of a data connection. Ops form one FIFO: {@code head} is the oldest op waiting for
 * its response, {@code sending} the first op not yet fully written. A request is written with one
 * gathering write (frame and payload views together); requests that are only a frame (READs, and WRITEs
 * whose payload rides inline) queued behind each other share one frame buffer and one write, up to
 * {@link RequestFrames#PACK_LIMIT} bytes. Responses arrive in request order and are matched to {@code head} by sequence
 * number. A READ's data is scattered straight into the local region. Encoding and packing: {@link RequestFrames};
 * parsing the responses: {@link ResponseReader}.
 *
 * <p>Cancellation (a deadline, or {@code cancel()}): an op whose outcome is decided before any of its request left
 * is not sent ({@link TransferOp#laneSkipped}). Every system call or copy that touches the caller's memory runs inside
 * the op's landing section ({@link TransferOp#beginLanding()}), so a cancellation never ends a status while its bytes
 * still move: a cancelled READ's data, which still arrives (responses come in request order), is read into scratch
 * memory and dropped; a WRITE cancelled with its payload partly on the wire completes the frame from the copy the
 * cancellation made ({@link TransferOp#payloadCopy()}), so the target sees a whole request and later ones stay framed.
 */
final class InitiatorConnection extends TcpConnection {
  final TcpPeer peer;
  private final int maxEntries;
  TransferOp head;
  TransferOp tail;
  TransferOp sending;
  long nextSeq = 1;
  /** Ops handed to the loop's queue and not yet taken by {@link #enqueue}; the caller-driven path needs none. */
  final java.util.concurrent.atomic.AtomicInteger queued = new java.util.concurrent.atomic.AtomicInteger();
  /** Sends small requests from the caller's thread and lets the caller read their responses (null: off). */
  final CallerRoundTrip callerTrip;
  /** The op sent from a caller's thread whose response that caller may read itself; null when the loop reads. */
  TransferOp callerPending;
  long callerSentNanos;
  /** A caller reads responses ({@link #onReadable} then stops once its own op is complete). */
  boolean callerReading;
  /** The op its driving caller completed; the caller publishes its outcome once it let the connection go. */
  TransferOp callerDone;
  TransportError callerDoneError;
  String callerDoneMessage;
  /** The op at the head sent by a caller, which the loop's in-flight count never included. */
  TransferOp uncounted;

  // write side
  /** The request frame being written and the requests packed into it. */
  final RequestFrames req;
  private final BlockCursor out = new BlockCursor(new RegionViews());
  /** The op being written was cancelled mid-payload: the rest of its payload comes from its copy, not the caller's memory. */
  private boolean fromCopy;
  private org.mori4j.transport.LocalRegion copyRegion;

  // read side
  /** Parses the responses (headers, READ data, error messages) as they arrive. */
  final ResponseReader reader = new ResponseReader(this);
  /** Successes of the read being parsed, published when it is done (see {@link CompletionBatch}). */
  final CompletionBatch done = new CompletionBatch();

  InitiatorConnection(TcpIoLoop loop, SocketChannel channel, TcpPeer peer, int maxEntries) {
    this(loop, channel, peer, maxEntries, TcpLatency.OFF);
  }

  InitiatorConnection(TcpIoLoop loop, SocketChannel channel, TcpPeer peer, int maxEntries, TcpLatency latency) {
    super(loop, channel);
    this.peer = peer;
    this.maxEntries = maxEntries;
    this.req = new RequestFrames(maxEntries);
    this.callerTrip = latency.callerDrive() ? new CallerRoundTrip(this, latency.driveSpinNanos()) : null;
  }

  int maxEntries() {
    return maxEntries;
  }

  @Override
  void enqueue(TransferOp op) {
    queued.decrementAndGet();
    if (dead) {
      op.transferFailed(TransportError.PEER_LOST, "peer " + peer.key + " lost: " + peer.lostReason());
      return;
    }
    op.nextInFlight = null;
    op.laneSeq = nextSeq++;
    loop.inFlight++;
    if (callerTrip != null) callerTrip.taken(op, head == null && queued.get() == 0);
    if (tail == null) head = op;
    else tail.nextInFlight = op;
    tail = op;
    if (sending == null) {
      sending = op;
      loop.flushLater(this);
    }
  }

  @Override
  void flushQueued() {
    if (sending != null && !req.ready) flush();
  }

  @Override
  void onWritable() {
    flush();
  }

  private void flush() {
    try {
      while (sending != null) {
        TransferOp op = sending;
        if (!req.ready) {
          if (!op.beginLanding()) {
            // cancelled before any of it left: not sent, and so no response will come for it
            op.laneSkipped = true;
            sending = op.nextInFlight;
            dropSkippedHead();
            continue;
          }
          try {
            prepare(op); // copies an inline payload from the caller's memory
          } finally {
            op.endLanding();
          }
          req.last = op;
          req.packEnd[0] = req.frame.limit();
          if (RequestFrames.frameOnly(op)) req.pack();
        }
        if (op.kind() == TransferOp.WRITE && op.local().gpu()) {
          if (!sendGpu()) return;
          req.ready = false;
          sending = op.nextInFlight;
          continue;
        }
        int n = 0;
        if (req.frame.hasRemaining()) out.iov[n++] = req.frame;
        boolean landing = false;
        if (op.kind() == TransferOp.WRITE && out.remaining() > 0) {
          if (!fromCopy && !(landing = op.beginLanding())) continueFromCopy(op);
          n += out.fill(n);
        }
        long before = req.frame.remaining();
        long w;
        try {
          w = write(out.iov, n);
        } finally {
          if (landing) op.endLanding();
        }
        long payload = w - (before - req.frame.remaining());
        if (payload > 0) out.advance(payload);
        if (req.frame.hasRemaining() || (op.kind() == TransferOp.WRITE && out.remaining() > 0)) {
          interest(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
          return;
        }
        req.ready = false;
        endCopy();
        // read now, not when packing: an op queued since then follows the last packed one
        sending = req.last.nextInFlight;
      }
      interest(SelectionKey.OP_READ);
    } catch (IOException | RuntimeException e) {
      peer.lost(TransportError.PEER_LOST, "write to " + peer.key + " failed: " + e);
    }
  }

  /**
   * The WRITE being written was cancelled with its payload partly out: its frame is completed from the copy the
   * cancellation made, at the same position, so the target gets a whole request and the connection stays framed. (An
   * op failed by another lane has no copy; its stripe is completed with zeros, and the transfer is reported failed.)
   */
  private void continueFromCopy(TransferOp op) {
    long left = out.remaining();
    java.lang.foreign.MemorySegment copy = op.payloadCopy();
    long at;
    if (copy != null) {
      at = op.payloadCopyOffset() + (op.totalBytes() - left);
    } else {
      copy = java.lang.foreign.Arena.ofAuto().allocate(Math.max(1, left));
      at = 0;
    }
    copyRegion = new org.mori4j.transport.LocalRegion(-1, 0, copy, false, -1);
    out.single(copyRegion, at, left);
    fromCopy = true;
  }

  private void endCopy() {
    if (copyRegion != null) out.forget(copyRegion); // the copy is garbage once its frame is out
    copyRegion = null;
    fromCopy = false;
  }

  /** Unlinks the ops at the head that were never sent: no response will come for them. */
  void dropSkippedHead() {
    while (head != null && head.laneSkipped) {
      TransferOp op = head;
      head = op.nextInFlight;
      if (head == null) tail = null;
      op.nextInFlight = null;
      op.laneSkipped = false;
      loop.inFlight--;
    }
  }

  /**
   * Writes the frame and the staged payload of a WRITE from GPU memory; true when all of it is out, false
   * when it waits for the socket (write interest set) or for a device-to-host copy (GPU poll registered).
   */
  private boolean sendGpu() throws IOException {
    return stageOut(outStager(), req.frame, out.iov, SelectionKey.OP_READ);
  }

  @Override
  void onGpuPoll() {
    if (sending != null) flush();
    if (readBlocked && !dead) onReadable();
  }

  /** Encodes {@code op}'s request into the frame and readies its payload: a cursor over its blocks, or GPU staging. */
  void prepare(TransferOp op) {
    if (tally != null) tally.begin(0, op.local().gpu(), op.kind() == TransferOp.WRITE, op.totalBytes());
    req.encode(op); // copies an inline payload from the caller's memory
    if (op.kind() == TransferOp.WRITE && !RequestFrames.isInline(op)) {
      if (op.local().gpu()) startStager(outStager(), true, op);
      else {
        setCursor(out, op);
        op.payloadStarted(); // from here a cancellation keeps a copy of the payload
      }
    }
  }

  static void setCursor(BlockCursor c, TransferOp op) {
    if (op.blockCount() == 1) c.single(op.local(), op.localOffset(0), op.blockSize(0));
    else {
      long[] lo = new long[op.blockCount()];
      long[] sz = new long[lo.length];
      for (int i = 0; i < lo.length; i++) {
        lo[i] = op.localOffset(i);
        sz[i] = op.blockSize(i);
      }
      c.blocks(op.local(), lo, sz, op.totalBytes());
    }
  }

  @Override
  void onReadable() {
    try {
      reader.read();
    } finally {
      done.publish();
    }
  }

  /** Holder, from the reader: the head op's whole response is in; {@code error} null for a success. */
  void complete(TransportError error, String message) {
    TransferOp op = head;
    head = op.nextInFlight;
    if (head == null) tail = null;
    op.nextInFlight = null;
    if (op == uncounted) uncounted = null;
    else loop.inFlight--;
    if (tally != null) tally.end();
    if (callerTrip != null) callerTrip.completed(op, head == null && queued.get() == 0);
    if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.COMPLETE, op.uid());
    if (op == callerPending) {
      callerPending = null;
      op.callerDrive = null;
      if (callerReading) {
        // completion runs the status's listeners; they must not run while this caller holds the connection
        callerDone = op;
        callerDoneError = error;
        callerDoneMessage = message;
        dropSkippedHead();
        return;
      }
    }
    if (error == null) done.succeeded(op);
    else done.failed(op, error, message);
    dropSkippedHead();
  }

  /** Holder, once it has read {@link #callerDone} and its outcome (error, message): clears them. */
  void clearCallerOutcome() {
    callerDone = null;
    callerDoneError = null;
    callerDoneMessage = null;
  }

  /** The driving caller, after it let the connection go: publishes the outcome it read under the hold. */
  static void publish(TransferOp op, TransportError error, String message) {
    if (error == null) op.transferSucceeded();
    else op.transferFailed(error, message);
  }

  @Override
  void checkProgress(long now) {
    // an op sent from a caller's thread that nobody came to read (its caller never waited): the loop reads it
    if (callerPending != null && callerTrip != null && now - callerSentNanos > CallerRoundTrip.ABANDONED_NANOS) {
      callerTrip.takeBack();
      CallerDriveStats.ABANDONED.increment();
      if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.TIMER_BACK, 0);
      if (buffered()) onReadable();
    }
    if (head != null && now - lastProgressNanos > loop.peerTimeoutNanos)
      peer.lost(TransportError.PEER_LOST, "no progress from " + peer.key + " for "
          + (now - lastProgressNanos) / 1_000_000 + " ms with transfers outstanding");
  }

  @Override
  void fail(TransportError error, String message) {
    if (dead) return;
    closeChannel();
    String text = "peer " + peer.key + " lost: " + message;
    for (TransferOp op = head; op != null; ) {
      TransferOp next = op.nextInFlight;
      op.nextInFlight = null;
      if (op != uncounted) loop.inFlight--;
      op.callerDrive = null;
      op.transferFailed(error, text);
      op = next;
    }
    head = tail = sending = null;
    uncounted = callerPending = null;
    endCopy();
    out.clear();
    reader.reset();
  }
}
