package org.mori4j.transport.rdma;

import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.ReceiveRequests;

/**
 * One connected queue pair and what its worker keeps for it: the send-queue accounting (work requests posted and
 * known complete; a slot of an unsignaled request frees only when a later signaled one completes, as on a NIC),
 * the parts posted in order (completions come in order per queue pair, so the oldest part is always the next to
 * finish), the parts waiting for free slots, and the small registered buffers of notifications: 8-byte transfer
 * uids sent after a write, and, on the target side, the receives they land in. Owned by one worker, which
 * closes it (queue pair first, then the buffers' memory regions, then their memory).
 */
final class RdmaLane {
  static final int NOTE_BYTES = 8;

  final QueuePair qp;
  final int qpNumber;
  final String peerKey;
  /** The remote engine's device this queue pair reaches (index into the owner's rkeys). */
  final int remoteDevice;
  final int depth;
  /** Whether the peer keeps notification receives posted (initiator side) / this side posts them (target side). */
  final boolean notifications;
  final boolean targetSide;
  private final Arena arena = Arena.ofShared();
  final MemorySegment sendNotes;
  final MemoryRegion sendNotesMr;
  final MemorySegment recvNotes;
  final MemoryRegion recvNotesMr;
  final int receiveDepth;

  long posted;
  long retired;
  long lastSignaled = -1;
  final ArrayDeque<Part> postedParts = new ArrayDeque<>();
  final ArrayDeque<Part> waiting = new ArrayDeque<>();
  volatile boolean broken;
  String brokenReason;
  /** It left service on a remote access error (worker thread only). */
  boolean accessError;
  boolean closed;

  RdmaLane(RdmaDevice device, QueuePair qp, String peerKey, int remoteDevice, int depth, boolean notifications,
           boolean targetSide, int receiveDepth) {
    this.qp = qp;
    this.qpNumber = qp.qpNumber();
    this.peerKey = peerKey;
    this.remoteDevice = remoteDevice;
    this.depth = depth;
    this.notifications = notifications;
    this.targetSide = targetSide;
    this.receiveDepth = targetSide && notifications ? receiveDepth : 0;
    MemoryRegion s = null, r = null;
    try {
      sendNotes = arena.allocate((long) depth * NOTE_BYTES, 64);
      s = device.pd.registerMemory(sendNotes, RdmaDevice.ACCESS);
      recvNotes = arena.allocate((long) Math.max(1, this.receiveDepth) * NOTE_BYTES, 64);
      r = this.receiveDepth > 0 ? device.pd.registerMemory(recvNotes, RdmaDevice.ACCESS) : null;
    } catch (RuntimeException e) {
      if (s != null) s.close();
      arena.close();
      throw e;
    }
    sendNotesMr = s;
    recvNotesMr = r;
  }

  int freeSlots() {
    return (int) (depth - (posted - retired));
  }

  /** Writes {@code uid} into the send-note slot of work request {@code seq}; returns the slot's address. */
  long sendNote(long seq, long uid) {
    long at = (seq & (depth - 1)) * NOTE_BYTES;
    sendNotes.set(JAVA_LONG_UNALIGNED, at, uid);
    return sendNotes.address() + at;
  }

  long receivedNote(int slot) {
    return recvNotes.get(JAVA_LONG_UNALIGNED, (long) slot * NOTE_BYTES);
  }

  /** Posts the notification receive of {@code slot} (target side). */
  void postReceive(ReceiveRequests scratch, int slot) {
    scratch.receive(0, RdmaWorker.RECEIVE_TAG | slot, recvNotes.address() + (long) slot * NOTE_BYTES, NOTE_BYTES, recvNotesMr.lkey());
    qp.postReceive(scratch, 0, 1);
  }

  /** Marks the lane unusable: nothing more is posted on it. */
  void breakWith(String reason) {
    if (!broken) {
      broken = true;
      brokenReason = reason;
    }
  }

  /** Worker thread (or the closer once the worker is gone): queue pair, then the notes' regions and memory. */
  void close() {
    if (closed) return;
    closed = true;
    try {
      qp.close();
    } finally {
      try {
        sendNotesMr.close();
        if (recvNotesMr != null) recvNotesMr.close();
      } finally {
        arena.close();
      }
    }
  }

  @Override
  public String toString() {
    return "queue pair " + qpNumber + " to engine '" + peerKey + "'";
  }
}
