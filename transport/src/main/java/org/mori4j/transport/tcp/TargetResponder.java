package org.mori4j.transport.tcp;

import static org.mori4j.transport.tcp.PeerFault.*;
import static org.mori4j.transport.tcp.WireFormat.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import org.mori4j.transport.TransportError;

/**
 * The response half of a target connection ({@link TargetConnection} is the request half and extends it): the
 * stage the connection is in, the request being served, and the writing of its answer. Responses without data (a
 * WRITE's, any refusal) collect in {@code acks} and go out together once no further request is already read; a
 * READ's data response (from host memory through a {@link BlockCursor}, or from GPU memory through the out
 * {@link GpuStager}) goes out after them, in order; a refused hello is answered with its reason before the close.
 * It is a separate class because writing and its backpressure (a connection stops reading while a response or a
 * full {@code acks} waits for the socket) are a concern of their own beside parsing and checking requests; as a
 * superclass it costs the hot path no indirection.
 */
abstract class TargetResponder extends TcpConnection {
  static final int S_HEADER = 0, S_ENTRIES = 1, S_PAYLOAD = 2, S_DISCARD = 3, S_RESPOND = 4, S_HELLO = 5, S_GPU_PAYLOAD = 6,
      S_ACKS = 7;
  /** Room for {@code acks}: it is written out early once less than one refusal (header and message) fits. */
  private static final int ACKS_CAPACITY = 16 * 1024;
  private static final byte[] NO_TEXT = new byte[0];
  private static final ByteBuffer NO_ACKS = ByteBuffer.allocateDirect(0);

  int stage = S_HEADER;
  /** Inside {@link #onReadable}: a response that completes there must not re-enter it. */
  boolean inReadable;
  final ByteBuffer resp = direct(RESP_HEADER);
  /**
   * Responses without data not yet written, in request order (fill mode: position is the end). Empty until
   * the first response after the hello, so that a connection that never gets that far costs little memory.
   */
  ByteBuffer acks = NO_ACKS;
  /** A hello's key as it is read, then a refused hello's reason as it is written. */
  final ByteBuffer message = direct(MAX_SMALL_PAYLOAD);
  private final ByteBuffer[] iov2 = new ByteBuffer[2];
  /** The READ response header and up to one staged piece per staging buffer (GpuStager.fill). */
  private final ByteBuffer[] gpuIov = new ByteBuffer[1 + GpuStager.SLOTS];
  /** The request being served: its fields, block list and verdict. */
  final TargetRequest rq = new TargetRequest();
  boolean closeAfterResponse;

  TargetResponder(TcpIoLoop loop, SocketChannel channel) {
    super(loop, channel);
  }

  /** Closes a connection whose peer misbehaved, with one rate-limited WARN per reason. */
  abstract void closeFor(String reason, String detail);

  /** Queues the response to the current request, which carries no data, and readies for the next request. */
  final void ack() {
    if (acks == NO_ACKS) acks = direct(ACKS_CAPACITY);
    byte[] text = rq.error == null ? NO_TEXT : rq.errorBytes();
    WireFormat.appendResponse(acks, rq.type == T_WRITE ? T_WRITE_DONE : T_READ_DATA, rq.error == null ? 0 : rq.error.wire(), rq.seq, text.length);
    acks.put(text);
    if (tally != null) tally.end();
    rq.done();
    stage = S_HEADER;
    if (acks.remaining() < RESP_HEADER + MAX_SMALL_PAYLOAD) {
      // the next refusal might not fit: write them now, and read no further until they are out
      stage = S_ACKS;
      writeAcks();
    }
  }

  /**
   * Writes queued responses; once all are out, a connection that waited for that ({@code S_ACKS}) reads on.
   * What the socket does not take waits for it to be writable.
   */
  final void writeAcks() {
    try {
      acks.flip();
      if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.ACK_WRITE, 0);
      write(acks);
      boolean done = !acks.hasRemaining();
      acks.compact();
      // reading goes on only between requests or inside one, not while a response or a full acks waits
      boolean reading = stage != S_ACKS && stage != S_RESPOND;
      if (!done) {
        interest(reading ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_WRITE);
        return;
      }
      if (stage == S_RESPOND) return; // the response in progress goes next
      interest(SelectionKey.OP_READ);
      if (stage == S_ACKS) {
        stage = S_HEADER;
        if (buffered() && !inReadable) onReadable();
      }
    } catch (IOException | RuntimeException e) {
      fail(TransportError.TRANSPORT, e.toString());
    }
  }

  /** Answers a refused hello with its reason; the connection closes once that is out. */
  final void refuseHello() {
    byte[] text = rq.errorBytes();
    message.clear();
    message.put(text).flip();
    WireFormat.putResponse(resp, T_HELLO_OK, rq.error.wire(), rq.seq, text.length);
    resp.flip();
    sendResponse(null);
  }

  private BlockCursor responding;
  /** The response's data comes from GPU memory through the out stager. */
  boolean respondingGpu;

  final void sendResponse(BlockCursor data) {
    responding = data;
    stage = S_RESPOND;
    onWritable();
  }

  @Override
  void onWritable() {
    if (dead) return;
    if (stage != S_RESPOND || acks.position() > 0) {
      // queued responses go before the one in progress
      if (acks.position() > 0) writeAcks();
      if (stage != S_RESPOND || acks.position() > 0 || dead) return;
    }
    try {
      int n;
      if (respondingGpu) {
        if (!sendGpu()) return;
        respondingGpu = false;
      } else if (responding != null) {
        n = 0;
        if (resp.hasRemaining()) responding.iov[n++] = resp;
        n += responding.fill(n);
        long before = resp.remaining();
        long w = write(responding.iov, n);
        long payload = w - (before - resp.remaining());
        if (payload > 0) responding.advance(payload);
      } else {
        iov2[0] = resp;
        iov2[1] = message;
        n = message.hasRemaining() && rq.error != null ? 2 : 1;
        write(iov2, n);
      }
      boolean done = !resp.hasRemaining() && (responding == null ? !(rq.error != null && message.hasRemaining()) : responding.remaining() == 0);
      if (!done) {
        interest(SelectionKey.OP_WRITE);
        return;
      }
      if (responding != null) responding.clear();
      responding = null;
      if (closeAfterResponse) {
        closeFor(REFUSED_HELLO, rq.errorText);
        return;
      }
      if (tally != null) tally.end();
      rq.done();
      stage = S_HEADER;
      interest(SelectionKey.OP_READ);
      // the next request may already sit in the stash, where the selector cannot see it
      if (buffered() && !inReadable) onReadable();
    } catch (IOException | RuntimeException e) {
      fail(TransportError.TRANSPORT, e.toString());
    }
  }

  /** Writes the READ response header and the staged GPU data; false while waiting for the socket or a copy. */
  private boolean sendGpu() throws IOException {
    return stageOut(outStager(), resp, gpuIov, 0);
  }
}
