package org.mori4j.transport.tcp;

import static org.mori4j.transport.tcp.WireFormat.*;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.mori4j.transport.TransferOp;

/**
 * The request frame of one initiator connection: a direct buffer that holds the encoded request (header, block
 * entries, and the payload when it rides inline) of the op being sent, and of the frame-only ops queued behind it
 * packed into the same buffer so that a burst leaves in few writes. It also answers whether a response may already
 * come for an op ({@link #fullyWritten}). Encoding only: the connection writes the frame and any payload views. Used
 * by whoever holds the connection ({@link TcpConnection#enter}).
 */
final class RequestFrames {
  /** Most bytes of requests packed into one frame (a burst of 4 KiB writes: 15 per system call). */
  static final int PACK_LIMIT = 64 * 1024;

  ByteBuffer frame = TcpConnection.direct(PACK_LIMIT);
  private MemorySegment segment = MemorySegment.ofBuffer(frame);
  /** The last op whose request is in {@code frame} (the op being sent when nothing was packed behind it). */
  TransferOp last;
  /** Where the request of the i-th op in {@code frame} ends: a response may come for it once that much is out. */
  final int[] packEnd = new int[PACK_LIMIT / (REQ_HEADER + 2 * ENTRY)];
  /** {@code frame} holds requests not yet fully written. */
  boolean ready;
  private final int maxEntries;

  RequestFrames(int maxEntries) {
    this.maxEntries = maxEntries;
  }

  /** Whether {@code op}'s request is all frame: a READ, or a WRITE of host memory small enough to ride inline. */
  static boolean frameOnly(TransferOp op) {
    return op.kind() == TransferOp.READ || isInline(op);
  }

  /** GPU memory is not addressable from here: its payload always goes through the staging buffers. */
  static boolean isInline(TransferOp op) {
    return op.kind() == TransferOp.WRITE && op.totalBytes() <= INLINE_MAX && !op.local().gpu();
  }

  private static int frameBytes(TransferOp op) {
    return REQ_HEADER + ENTRY * (op.blockCount() + 1) + (isInline(op) ? (int) op.totalBytes() : 0);
  }

  /** Encodes {@code op}'s request alone into the frame (grown if it needs more room); the frame is then ready. */
  void encode(TransferOp op) {
    int blocks = op.blockCount();
    if (blocks > maxEntries) throw new IllegalStateException("batch of " + blocks + " blocks exceeds " + maxEntries);
    int need = frameBytes(op);
    if (frame.capacity() < need) {
      frame = TcpConnection.direct(Math.max(need, frame.capacity() * 2));
      segment = MemorySegment.ofBuffer(frame);
    }
    frame.clear();
    append(op);
    frame.flip();
    ready = true;
  }

  /** Appends the requests of the frame-only ops queued behind {@code last} while they fit. */
  void pack() {
    int count = 1;
    for (TransferOp next = last.nextInFlight; next != null && frameOnly(next); next = next.nextInFlight) {
      int end = frame.limit();
      if (count == packEnd.length || next.blockCount() > maxEntries || end + frameBytes(next) > Math.min(PACK_LIMIT, frame.capacity()))
        return;
      // a cancelled op is not packed: flush reaches it as the next one to send and skips it
      if (!next.beginLanding()) return;
      // nothing of the frame is written yet: append after what is there, then make it all readable again
      frame.limit(frame.capacity()).position(end);
      try {
        append(next);
      } finally {
        next.endLanding();
      }
      frame.flip();
      packEnd[count++] = frame.limit();
      last = next;
    }
  }

  /** Whether {@code op}'s request has left in full ({@code sending}: the first op not yet fully written, or null). */
  boolean fullyWritten(TransferOp op, TransferOp sending) {
    if (sending == null || op.laneSeq < sending.laneSeq) return true;
    if (!ready || !frameOnly(sending) || op.laneSeq > last.laneSeq) return false;
    return frame.position() >= packEnd[(int) (op.laneSeq - sending.laneSeq)];
  }

  /** Writes {@code op}'s request (header, entries, inline payload) at the frame's position. */
  private void append(TransferOp op) {
    int blocks = op.blockCount();
    boolean inline = isInline(op);
    int type = op.kind() == TransferOp.WRITE ? T_WRITE : T_READ;
    int flags = op.notifyTarget() ? F_NOTIFY : 0;
    int parts = 1;
    StripePart stripe = op instanceof StripePart p ? p : null;
    if (stripe != null) {
      flags |= F_PART;
      parts = stripe.parts();
    }
    appendRequest(frame, type, flags, stripe != null ? 2 : blocks, parts, op.laneSeq, op.uid(), op.remoteId(),
        op.remoteAccessKey(), op.remoteAddress(), op.totalBytes());
    for (int i = 0; i < blocks; i++) frame.putLong(op.remoteOffset(i)).putLong(op.blockSize(i));
    if (stripe != null) frame.putLong(stripe.wholeRemoteOffset()).putLong(stripe.wholeSize());
    if (inline) {
      // a small payload rides in the frame: one plain write, no per-request views of the region
      int pos = frame.position();
      MemorySegment src = op.local().segment();
      for (int i = 0; i < blocks; i++) {
        long size = op.blockSize(i);
        MemorySegment.copy(src, op.localOffset(i), segment, pos, size);
        pos += (int) size;
      }
      frame.position(pos);
    }
  }

}
