package org.mori4j.transport.tcp;

import static org.mori4j.transport.tcp.PeerFault.*;
import static org.mori4j.transport.tcp.WireFormat.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import org.mori4j.transport.InboundNotifications;
import org.mori4j.transport.RegionViews;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The target's end of a data connection. The first frame must be a HELLO carrying the initiator's key and
 * the token its handshake obtained. After that, each request is checked against this engine's
 * registrations before a byte moves ({@link TargetRequest}); a frame that breaks the protocol closes the
 * connection ({@link PeerFault}). A refused WRITE's payload is read into a scratch buffer and dropped, so the
 * region stays untouched and the stream stays framed. Requests are handled one at a time. Responses without
 * data (a WRITE's, any refusal) collect in {@code acks} and go out together once no further request is
 * already read, so a burst of small writes is answered in a few system calls; a READ's data response
 * goes out after them, in order. While a response is being written, or while {@code acks} is full and
 * the socket will not take it, the connection stops reading, which is the backpressure. This class reads and
 * checks requests; writing the responses is its superclass {@link TargetResponder}'s part.
 */
final class TargetConnection extends TargetResponder {
  private final TcpBackend backend;
  private final int maxEntries;
  private String peerKey;
  private InboundNotifications.PeerLog notifications;
  private final ByteBuffer header = direct(REQ_HEADER + ENTRY);
  /** Handed to the bulk loop after its hello: this loop no longer touches it. */
  private boolean moved;
  /** Requests whose whole request was in by the end of the last {@link #onReadable} call (the loop's serve-spin reads it). */
  int servedInCall;
  /** Where a refused WRITE's payload is drained; allocated on the first refusal. */
  private ByteBuffer scratch;
  private final BlockCursor cursor = new BlockCursor(new RegionViews());

  private long discardLeft;
  /** When the connection was accepted: it must present a valid hello within the connect timeout. */
  private final long openedNanos = System.nanoTime();
  /**
   * The token its hello presented. A later handshake of the same engine key (a new incarnation, a reconnection)
   * replaces it, and {@code disconnect} removes it: from then on this connection moves no byte and is closed.
   */
  private long helloToken;
  private String remote;

  TargetConnection(TcpIoLoop loop, SocketChannel channel, TcpBackend backend, int maxEntries) {
    super(loop, channel);
    this.backend = backend;
    this.maxEntries = maxEntries;
  }

  @Override
  void enqueue(TransferOp op) {
    op.transferFailed(TransportError.BAD_STATE, "internal: op queued on a target connection");
  }

  @Override
  void onReadable() {
    inReadable = true;
    servedInCall = 0;
    try {
      boolean first = true;
      while (!dead && !moved) {
        switch (stage) {
          case S_HEADER -> {
            // after a request, the next one is usually not there yet: let the selector say when it is rather
            // than try a read that finds nothing (the first read of a call also notices a closed peer)
            if (!first && header.position() == 0 && !buffered()) return;
            first = false;
            if (readAhead(header) < 0) {
              if (header.position() > 0) throw new PeerFault(TRUNCATED, "closed after " + header.position() + " bytes of a request header");
              closeQuietly("initiator closed the connection");
              return;
            }
            if (header.hasRemaining()) return;
            startRequest();
          }
          case S_ENTRIES -> {
            if (in(rq.entries) < 0) throw new PeerFault(TRUNCATED, "closed inside a request's block list");
            if (rq.entries.hasRemaining()) return;
            rq.entries.flip();
            checkRequest();
          }
          case S_HELLO -> {
            if (in(message) < 0) throw new PeerFault(TRUNCATED, "closed inside its hello");
            if (message.hasRemaining()) return;
            message.flip();
            hello(StandardCharsets.UTF_8.decode(message).toString());
          }
          case S_PAYLOAD -> {
            int n = cursor.fill(0);
            long r = in(cursor.iov, n);
            if (r < 0) throw new PeerFault(TRUNCATED, "closed inside a write's payload");
            if (r > 0) cursor.advance(r);
            if (cursor.remaining() > 0) return;
            cursor.clear();
            respond();
          }
          case S_GPU_PAYLOAD -> {
            if (!receiveGpu()) return;
          }
          case S_DISCARD -> {
            if (scratch == null) scratch = direct(64 * 1024);
            scratch.clear();
            if (discardLeft < scratch.capacity()) scratch.limit((int) discardLeft);
            int r = in(scratch);
            if (r < 0) throw new PeerFault(TRUNCATED, "closed inside a write's payload");
            discardLeft -= r;
            if (discardLeft > 0) {
              if (r == 0) return;
            } else respond();
          }
          default -> {
            return; // S_RESPOND: wait for the response to drain
          }
        }
      }
    } catch (PeerFault e) {
      closeFor(e.reason, e.getMessage());
    } catch (IOException | RuntimeException e) {
      fail(TransportError.TRANSPORT, e.toString());
    } finally {
      inReadable = false;
      // nothing more to answer without a read: what is answered goes out now (a response in progress writes it first)
      if (!dead && acks.position() > 0 && stage != S_RESPOND && stage != S_ACKS) writeAcks();
    }
  }

  private void startRequest() throws IOException {
    header.flip();
    rq.decode(header, maxEntries);
    if (rq.type == T_HELLO) {
      if (peerKey != null) throw new PeerFault(MALFORMED, "a second hello");
      message.clear().limit(rq.helloKeyBytes());
      stage = S_HELLO;
      return;
    }
    if (peerKey == null) throw new PeerFault(BEFORE_HELLO, "request type " + rq.type);
    if (!backend.acceptsToken(peerKey, helloToken)) throw new PeerFault(REVOKED, REVOKED_DETAIL);
    if (rq.startBlocks()) checkRequest();
    else stage = S_ENTRIES;
  }

  private void checkRequest() {
    rq.check(backend.regions());
    if (tally != null) tally.begin(1, rq.error == null && rq.region.gpu(), rq.type == T_WRITE, rq.payloadBytes);
    if (rq.type == T_WRITE) {
      if (rq.error == null && rq.region.gpu()) {
        GpuStager st = inStager();
        if (rq.entryCount == 1) st.start(false, rq.region, rq.entries.getLong(0), rq.entries.getLong(8));
        else st.start(false, rq.region, rq.offsets(0), rq.offsets(8), rq.payloadBytes);
        stage = S_GPU_PAYLOAD;
      } else if (rq.error == null) {
        if (rq.entryCount == 1) cursor.single(rq.region, rq.entries.getLong(0), rq.entries.getLong(8));
        else cursor.blocks(rq.region, rq.offsets(0), rq.offsets(8), rq.payloadBytes);
        stage = S_PAYLOAD;
      } else {
        discardLeft = rq.payloadBytes;
        stage = discardLeft > 0 ? S_DISCARD : S_RESPOND;
        if (discardLeft == 0) respond();
      }
    } else {
      respond();
    }
  }

  /**
   * Reads a WRITE's payload for GPU memory through the staging buffers; true once the last host-to-device
   * copy finished and the response is under way, false while it waits for the socket or the GPU.
   */
  private boolean receiveGpu() throws IOException {
    GpuStager st = inStager();
    if (!stageIn(st, "closed mid-payload")) return false;
    String failure = st.failure();
    st.finish();
    if (failure != null) {
      log.warn("write into GPU memory id {} from {} failed: {}", rq.memId, peerKey, failure);
      rq.refuse(TransportError.GPU_OP, "memory id " + rq.memId + ": " + failure);
    }
    respond();
    return true;
  }

  @Override
  void onGpuPoll() {
    if (stage == S_GPU_PAYLOAD) onReadable();
    else if (stage == S_RESPOND && respondingGpu) onWritable();
  }

  private void hello(String key) {
    long token = rq.uid;
    if (backend.acceptsToken(key, token)) {
      peerKey = key;
      helloToken = token;
      notifications = backend.inbound().peer(key);
      WireFormat.putResponse(resp, T_HELLO_OK, 0, rq.seq, 0);
      resp.flip();
      sendResponse(null);
      // a bulk lane (stripes only) is read by the bulk loop's thread, beside the loop that reads the other lanes; the
      // initiator sends nothing before the answer to its hello, so no request is half read here
      if ((rq.flags & F_BULK) != 0 && stage == S_HEADER && !dead) {
        moved = true; // before the hand-over: this thread reads it until it lets the connection go
        if (!backend.toBulkLoop(this)) moved = false;
      }
    } else {
      rq.error = TransportError.NOT_FOUND;
      rq.errorText = "no handshake on record for engine '" + key + "' with that token";
      closeAfterResponse = true;
      refuseHello();
    }
  }

  /**
   * The bulk loop's thread, from the task {@link TcpBackend#toBulkLoop} queued: takes the connection over. It waits
   * for the old loop to let go of it first, so the old loop's last steps come before anything done here.
   */
  void arriveOn(TcpIoLoop bulk) {
    enterWaiting(LOOP);
    try {
      loop = bulk;
      moved = false;
      attach();
      interest(SelectionKey.OP_READ);
      if (buffered()) onReadable();
    } catch (IOException | RuntimeException e) {
      fail(TransportError.TRANSPORT, "cannot move to the bulk I/O loop: " + e);
    } finally {
      exit();
    }
  }

  private void respond() {
    servedInCall++;
    if (rq.type == T_WRITE && (rq.flags & F_NOTIFY) != 0 && backend.notificationsEnabled()) record();
    if (rq.type == T_WRITE || rq.error != null) {
      ack();
      return;
    }
    if (rq.region.gpu()) {
      GpuStager st = outStager();
      if (rq.entryCount == 1) st.start(true, rq.region, rq.entries.getLong(0), rq.entries.getLong(8));
      else st.start(true, rq.region, rq.offsets(0), rq.offsets(8), rq.payloadBytes);
      WireFormat.putResponse(resp, T_READ_DATA, 0, rq.seq, rq.payloadBytes);
      resp.flip();
      respondingGpu = true;
      sendResponse(null);
    } else {
      if (rq.entryCount == 1) cursor.single(rq.region, rq.entries.getLong(0), rq.entries.getLong(8));
      else cursor.blocks(rq.region, rq.offsets(0), rq.offsets(8), rq.payloadBytes);
      WireFormat.putResponse(resp, T_READ_DATA, 0, rq.seq, rq.payloadBytes);
      resp.flip();
      sendResponse(cursor);
    }
  }

  private void record() {
    if ((rq.flags & F_PART) != 0) notifications.recordPart(rq.uid, rq.parts, rq.error, rq.errorText);
    else notifications.record(rq.uid, rq.error, rq.errorText);
  }


  /**
   * An authenticated initiator idle between requests is not an error (its lanes stay open for later
   * transfers). A connection without a valid hello after the connect timeout (the initiator's own limit for
   * its hello exchange) is closed, and so is one that stopped for the peer timeout inside a request or while
   * a response waits for it to read: neither may hold the target's buffers for ever. A connection whose hello
   * token is no longer current (see {@code helloToken}) is closed too.
   */
  @Override
  void checkProgress(long now) {
    if (dead) return;
    if (peerKey == null) {
      if (now - openedNanos > backend.helloTimeoutNanos())
        closeFor(NO_HELLO, "no valid hello within " + backend.helloTimeoutNanos() / 1_000_000 + " ms of connecting");
      return;
    }
    if (!backend.acceptsToken(peerKey, helloToken)) {
      closeFor(REVOKED, REVOKED_DETAIL);
      return;
    }
    boolean midExchange = stage != S_HEADER || header.position() > 0 || acks.position() > 0;
    if (midExchange && !gpuWaiting && now - lastProgressNanos > loop.peerTimeoutNanos) {
      boolean responding = stage == S_RESPOND || stage == S_ACKS || acks.position() > 0;
      closeFor(STALLED, (responding ? "stopped reading a response" : "stopped inside a request") + " for "
          + loop.peerTimeoutNanos / 1_000_000 + " ms");
    }
  }

  private String from() {
    if (remote == null) {
      try {
        remote = String.valueOf(channel.getRemoteAddress());
      } catch (IOException | RuntimeException e) {
        remote = "an unknown address";
      }
    }
    return peerKey == null ? remote + " (before hello)" : remote + " (engine '" + peerKey + "')";
  }

  @Override
  void closeFor(String reason, String detail) {
    if (dead) return;
    String who = from();
    closeChannel();
    cursor.clear();
    backend.refusals().closed(reason, who, detail);
  }

  private void closeQuietly(String why) {
    log.debug("target connection from {} closed: {}", from(), why);
    closeChannel();
  }

  @Override
  void fail(TransportError error, String message) {
    if (dead) return;
    if (error == TransportError.TRANSPORT) {
      closeFor(IO_ERROR, message);
      return;
    }
    log.debug("target connection from {} failed: {}", from(), message);
    closeChannel();
    cursor.clear();
  }
}
