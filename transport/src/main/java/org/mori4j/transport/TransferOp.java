package org.mori4j.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One transfer request as a backend sees it, and at the same time the object that receives its outcome.
 * The engine's public status type extends this class, so a transfer allocates exactly one object on the
 * session fast path: the request fields, the queue links and the completion live together (Aeron-style
 * flyweight thinking applied to a request). Fields are written by the submitting thread before
 * {@link TransferBackend#submit} and read afterwards only by the backend thread that owns the op.
 */
public abstract class TransferOp {
  public static final byte READ = 1;
  public static final byte WRITE = 2;

  protected byte kind;
  protected LocalRegion local;
  /** Backend-specific handle of the remote engine, resolved when the route was chosen. */
  protected Object peer;
  protected long remoteId;
  protected long remoteAccessKey;
  protected long remoteAddress;
  protected long uid;
  // single transfer (blockCount == 1 and localOffsets == null)
  protected long localOffset;
  protected long remoteOffset;
  protected long size;
  // batch of blocks: the first blockCount entries of each array (which may be longer); null for a single transfer
  protected long[] localOffsets;
  protected long[] remoteOffsets;
  protected long[] sizes;
  protected int blockCount;
  protected boolean notifyTarget = true;
  /** The remote region's part of its descriptor for the chosen backend (XGMI: its IPC data), or null. */
  protected byte[] remoteData;

  /** The backend's choice of lane (a connection, a queue pair) for this op; set by the backend. */
  public Object lane;
  /** The lane's sequence number for this op (matches responses to requests). */
  public long laneSeq;
  /** Link in a backend's submission queue. */
  volatile TransferOp nextSubmitted;
  /** Link in a connection's in-flight list; touched only by the owning I/O thread. */
  public TransferOp nextInFlight;

  /** Sets the fields of a single transfer. */
  public final void initSingle(byte kind, LocalRegion local, long localOffset, Object peer, long remoteId,
                               long remoteAccessKey, long remoteAddress, long remoteOffset, long size, long uid) {
    this.kind = kind;
    this.local = local;
    this.localOffset = localOffset;
    this.peer = peer;
    this.remoteId = remoteId;
    this.remoteAccessKey = remoteAccessKey;
    this.remoteAddress = remoteAddress;
    this.remoteOffset = remoteOffset;
    this.size = size;
    this.uid = uid;
    this.localOffsets = null;
    this.remoteOffsets = null;
    this.sizes = null;
    this.remoteData = null;
  }

  /** Sets the fields of a batch; the arrays are owned by the op from now on. */
  public final void initBatch(byte kind, LocalRegion local, long[] localOffsets, Object peer, long remoteId,
                              long remoteAccessKey, long remoteAddress, long[] remoteOffsets, long[] sizes, long uid) {
    initBatch(kind, local, localOffsets, peer, remoteId, remoteAccessKey, remoteAddress, remoteOffsets, sizes, localOffsets.length, uid);
  }

  /** A batch of the first {@code count} entries of the arrays (the arrays may be longer). */
  public final void initBatch(byte kind, LocalRegion local, long[] localOffsets, Object peer, long remoteId,
                              long remoteAccessKey, long remoteAddress, long[] remoteOffsets, long[] sizes, int count, long uid) {
    if (count < 1 || count > localOffsets.length || count > remoteOffsets.length || count > sizes.length)
      throw new IllegalArgumentException("block count " + count + " does not fit arrays of " + localOffsets.length + ", "
          + remoteOffsets.length + " and " + sizes.length + " entries");
    initSingle(kind, local, 0, peer, remoteId, remoteAccessKey, remoteAddress, 0, 0, uid);
    this.localOffsets = localOffsets;
    this.remoteOffsets = remoteOffsets;
    this.sizes = sizes;
    this.blockCount = count;
    long total = 0;
    for (int i = 0; i < count; i++) total += sizes[i];
    this.size = total;
  }

  public final byte kind() { return kind; }
  public final LocalRegion local() { return local; }
  public final Object peer() { return peer; }
  public final long remoteId() { return remoteId; }
  public final long remoteAccessKey() { return remoteAccessKey; }
  public final long remoteAddress() { return remoteAddress; }
  public final long uid() { return uid; }
  /** Total bytes of the op (all blocks). */
  public final long totalBytes() { return size; }
  public final boolean notifyTarget() { return notifyTarget; }
  public final void notifyTarget(boolean on) { notifyTarget = on; }
  public final byte[] remoteData() { return remoteData; }
  /** Sets {@link #remoteData()} (after {@code initSingle}/{@code initBatch}, which clear it); the array is not copied. */
  public final void remoteData(byte[] data) { remoteData = data; }

  public final int blockCount() { return localOffsets == null ? 1 : blockCount; }
  public final long localOffset(int i) { return localOffsets == null ? localOffset : localOffsets[i]; }
  public final long remoteOffset(int i) { return localOffsets == null ? remoteOffset : remoteOffsets[i]; }
  public final long blockSize(int i) { return localOffsets == null ? size : sizes[i]; }

  /**
   * Copies the local offsets, remote offsets or sizes ({@code which}: 0, 1, 2) of a batch op into {@code dst}
   * at byte {@code at} as native 64-bit values: the bulk form of {@link #localOffset} and friends, for a
   * backend that hands the whole list to the device (one memory copy, not a loop over the blocks).
   */
  public final void copyBlocks(int which, MemorySegment dst, long at) {
    if (localOffsets == null) throw new IllegalStateException("not a batch op");
    long[] src = switch (which) {
      case 0 -> localOffsets;
      case 1 -> remoteOffsets;
      case 2 -> sizes;
      default -> throw new IllegalArgumentException("which must be 0, 1 or 2: " + which);
    };
    MemorySegment.copy(src, 0, dst, ValueLayout.JAVA_LONG, at, blockCount);
  }

  /** The transfer finished and every byte is in place. Called once, from a backend thread. */
  public abstract void transferSucceeded();

  /** The transfer failed. Called once, from any thread; later calls must be ignored by the implementation. */
  public abstract void transferFailed(TransportError error, String message);
}
