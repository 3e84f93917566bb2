package org.mori4j.transport.tcp;

import static org.mori4j.transport.tcp.WireFormat.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.mori4j.transport.RegionViews;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The read side of one initiator connection: parses the responses that arrive (in request order) against the oldest
 * op in flight, scatters a READ's data straight into its local blocks (or into scratch memory once it was cancelled,
 * or through GPU staging), reads a failure's message, and hands each finished response to
 * {@link InitiatorConnection#complete}. A malformed or unexpected response, or the peer's close, loses the peer. Runs
 * on whoever holds the connection: the loop, or a caller reading its own response ({@link CallerRoundTrip#drive}),
 * which stops once its op is complete.
 */
final class ResponseReader {
  private final InitiatorConnection c;
  final ByteBuffer resp = TcpConnection.direct(RESP_HEADER);
  private final ByteBuffer message = TcpConnection.direct(MAX_SMALL_PAYLOAD);
  private final BlockCursor in = new BlockCursor(new RegionViews());
  /** 0 header, 1 data, 2 error message, 3 data for GPU memory. */
  int stage;
  /** The READ whose data arrives was cancelled: the rest of its data goes to {@code scratch}. */
  private boolean discarding;
  private ByteBuffer scratch;
  private int respStatus;

  ResponseReader(InitiatorConnection c) {
    this.c = c;
  }

  /** The connection failed: nothing of a response is in progress any more. */
  void reset() {
    discarding = false;
    in.clear();
  }

  private void complete(TransportError error, String text) {
    stage = 0;
    c.complete(error, text);
  }

  /** Holder: reads and parses what has arrived, completing ops (through the connection) as their responses end. */
  void read() {
    try {
      boolean first = true;
      while (true) {
        // a caller reading for its own op leaves the responses behind it to the loop
        if (c.callerReading && c.callerPending == null) return;
        if (stage == 0) {
          // with nothing in flight no response is due: leave the next read to the selector instead of a
          // read that would find nothing (only after the first read, which also notices a closed peer)
          if (!first && c.head == null && resp.position() == 0 && !c.buffered()) return;
          first = false;
          // with the responses behind it: a burst's acknowledgements arrive together
          if (c.readAhead(resp) < 0) throw new IOException("connection closed by peer");
          if (resp.hasRemaining()) return;
          resp.flip();
          if (!startResponse()) return;
        } else if (stage == 3) {
          if (!receiveGpu()) return;
        } else if (stage == 1) {
          long r;
          if (!discarding && !c.head.beginLanding()) discarding = true; // cancelled: the rest is not the caller's any more
          if (discarding) {
            if (scratch == null) scratch = TcpConnection.direct(64 * 1024);
            scratch.clear().limit((int) Math.min(scratch.capacity(), in.remaining()));
            r = c.in(scratch);
          } else {
            try {
              r = c.in(in.iov, in.fill(0));
            } finally {
              c.head.endLanding();
            }
          }
          if (r < 0) throw new IOException("connection closed by peer");
          if (r > 0) in.advance(r);
          if (in.remaining() > 0) return;
          in.clear();
          discarding = false;
          complete(null, null);
        } else {
          if (c.in(message) < 0) throw new IOException("connection closed by peer");
          if (message.hasRemaining()) return;
          message.flip();
          String text = StandardCharsets.UTF_8.decode(message).toString();
          complete(TransportError.fromWire(respStatus), "peer " + c.peer.key + ": " + text);
        }
      }
    } catch (IOException | RuntimeException e) {
      c.done.publish(); // the responses read before the failure were successes, and are published before it
      c.peer.lost(TransportError.PEER_LOST, "connection to " + c.peer.key + " lost: " + e.getMessage());
    }
  }

  /** Parses a response header; false when the connection had to be failed. */
  private boolean startResponse() throws IOException {
    c.dropSkippedHead();
    int magic = resp.getInt(0);
    int version = resp.get(4);
    int type = resp.get(5);
    respStatus = resp.get(6) & 0xff;
    long seq = resp.getLong(8);
    long payload = resp.getLong(16);
    resp.clear();
    TransferOp op = c.head;
    if (magic != RESP_MAGIC || version != VERSION) throw new IOException("bad response frame (magic/version)");
    if (op == null || op.laneSeq != seq || !c.req.fullyWritten(op, c.sending))
      throw new IOException("response for seq " + seq + " does not match the oldest request in flight");
    if (respStatus != 0) {
      if (payload < 0 || payload > MAX_SMALL_PAYLOAD) throw new IOException("error message of " + payload + " bytes");
      message.clear().limit((int) payload);
      stage = 2;
      return true;
    }
    if (type == T_WRITE_DONE && op.kind() == TransferOp.WRITE && payload == 0) {
      complete(null, null);
      return true;
    }
    if (type == T_READ_DATA && op.kind() == TransferOp.READ && payload == op.totalBytes()) {
      if (op.local().gpu()) {
        TcpConnection.startStager(c.inStager(), false, op);
        stage = 3;
      } else {
        InitiatorConnection.setCursor(in, op);
        stage = 1;
      }
      return true;
    }
    throw new IOException("unexpected response type " + type + " with " + payload + " bytes");
  }

  /**
   * Reads READ data bound for GPU memory into the staging buffers; true once every byte is on the device
   * (the op is then complete), false while it waits for the socket or for a host-to-device copy.
   */
  private boolean receiveGpu() throws IOException {
    GpuStager st = c.inStager();
    if (!c.stageIn(st, "connection closed by peer")) return false;
    String failure = st.failure();
    st.finish();
    complete(failure == null ? null : TransportError.GPU_OP, failure);
    return true;
  }
}
