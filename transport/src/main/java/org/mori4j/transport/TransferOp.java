package org.mori4j.transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One transfer request as a backend sees it, and at the same time the object that receives its outcome.
 * The engine's public status type extends this class, so a transfer allocates exactly one object on the
 * session fast path: the request fields, the queue links and the completion live together (Aeron-style
 * flyweight thinking applied to a request). Fields are written by the submitting thread before
 * {@link TransferBackend#submit} and read afterwards only by the backend thread that owns the op. Its outcome is
 * decided once, under a guard that also serves cancellation: see {@link #beginLanding()} and {@link #cancelOutcome()}.
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
  /**
   * A batch whose blocks the engine checked when it made the op (see {@link #blocksChecked}): every block has a
   * positive size and lies inside {@code [0, checkedLocalSize)} locally and {@code [0, checkedRemoteSize)} remotely;
   * -1 when not checked (then a backend checks block by block). Lets a backend check a batch against what the
   * owner registered with two compares instead of a pass over the blocks.
   */
  protected long checkedLocalSize = -1;
  protected long checkedRemoteSize = -1;
  /** The smallest and largest block of a checked batch. */
  protected long minBlockSize;
  protected long maxBlockSize;

  /** The backend's choice of lane (a connection, a queue pair) for this op; set by the backend. */
  public Object lane;
  /** The lane's sequence number for this op (matches responses to requests). */
  public long laneSeq;
  /** Link in a backend's submission queue. */
  volatile TransferOp nextSubmitted;
  /** Link in a connection's in-flight list; touched only by the owning I/O thread. */
  public TransferOp nextInFlight;
  /** The lane decided not to send this op's request (it was cancelled before any of it left); owned by the lane's thread. */
  public boolean laneSkipped;
  /**
   * Set by a backend whose lane lets the waiting thread finish this op itself (its request already left from the
   * caller's thread and the response is the caller's to read); null otherwise, and again once the backend took it back.
   */
  public volatile CallerDrive callerDrive;

  // Outcome guard (cancellation): OPEN (0) until someone claims the outcome (FINAL). A backend thread that moves
  // bytes of the caller's memory holds a landing section for the length of one system call or copy, so that a
  // cancellation (which waits that long) never ends the status while bytes still go into or out of the caller's
  // buffer. The state counts the landing sections open at once: the stripes of one transfer share their parent's
  // guard and land on different I/O threads at the same time (a single LANDING flag made the second stripe take
  // the first one's section for a cancellation, and a striped transfer over two I/O threads never completed).
  private static final int OPEN = 0, FINAL = -1, CANCELLING = -2;
  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(TransferOp.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused")
  private volatile int state;
  /** Set by a backend once the request's payload may be partly on the wire: a cancellation then copies it. */
  private volatile boolean payloadStarted;
  /** The payload as it was when the op was cancelled mid-payload (see {@link #cancelOutcome()}); published by the state. */
  private MemorySegment payloadCopy;

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
    this.checkedLocalSize = -1;
    this.checkedRemoteSize = -1;
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

  /**
   * A batch of the first {@code count} entries of the arrays whose blocks the caller has already checked (one pass
   * that also found {@code total}, the smallest and the largest block): every size positive, every block inside
   * {@code [0, localSize)} and {@code [0, remoteSize)}. Saves the sum over the sizes {@link #initBatch} makes.
   */
  public final void initCheckedBatch(byte kind, LocalRegion local, long[] localOffsets, Object peer, long remoteId,
                                     long remoteAccessKey, long remoteAddress, long[] remoteOffsets, long[] sizes, int count,
                                     long uid, long total, long minBlock, long maxBlock, long localSize, long remoteSize) {
    if (count < 1 || count > localOffsets.length || count > remoteOffsets.length || count > sizes.length)
      throw new IllegalArgumentException("block count " + count + " does not fit arrays of " + localOffsets.length + ", "
          + remoteOffsets.length + " and " + sizes.length + " entries");
    if (minBlock <= 0 || maxBlock < minBlock || localSize < 0 || remoteSize < 0)
      throw new IllegalArgumentException("bad summary of a checked batch: blocks " + minBlock + ".." + maxBlock + ", sizes "
          + localSize + " and " + remoteSize);
    initSingle(kind, local, 0, peer, remoteId, remoteAccessKey, remoteAddress, 0, 0, uid);
    this.localOffsets = localOffsets;
    this.remoteOffsets = remoteOffsets;
    this.sizes = sizes;
    this.blockCount = count;
    this.size = total;
    this.minBlockSize = minBlock;
    this.maxBlockSize = maxBlock;
    this.checkedLocalSize = localSize;
    this.checkedRemoteSize = remoteSize;
  }

  /**
   * Swaps a batch's block arrays for copies with the same first {@link #blockCount()} entries (the engine, when an
   * op that carried the caller's own arrays is submitted after all and the backend will read them later).
   */
  public final void replaceBlocks(long[] localOffsets, long[] remoteOffsets, long[] sizes) {
    if (this.localOffsets == null) throw new IllegalStateException("not a batch op");
    if (localOffsets.length < blockCount || remoteOffsets.length < blockCount || sizes.length < blockCount)
      throw new IllegalArgumentException("block count " + blockCount + " does not fit arrays of " + localOffsets.length + ", "
          + remoteOffsets.length + " and " + sizes.length + " entries");
    this.localOffsets = localOffsets;
    this.remoteOffsets = remoteOffsets;
    this.sizes = sizes;
  }

  /**
   * Whether every block of this batch is known to have a positive size and to lie inside {@code [0, localSize)}
   * locally and {@code [0, remoteSize)} remotely, from the check the engine made when it built the op: a backend
   * that can answer true skips its own pass over the blocks (and then finds their bounds in
   * {@link #minBlockSize()}/{@link #maxBlockSize()}). False for single transfers and unchecked batches.
   */
  public final boolean blocksChecked(long localSize, long remoteSize) {
    return localOffsets != null && checkedLocalSize >= 0 && checkedLocalSize <= localSize && checkedRemoteSize >= 0
        && checkedRemoteSize <= remoteSize;
  }

  /** The smallest block of a batch for which {@link #blocksChecked} is true. */
  public final long minBlockSize() { return minBlockSize; }

  /** The largest block of a batch for which {@link #blocksChecked} is true. */
  public final long maxBlockSize() { return maxBlockSize; }

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

  /** The op whose outcome guard covers this one: itself, or the whole transfer a part belongs to. */
  protected TransferOp guardOwner() {
    return this;
  }

  /** Where this op's payload starts in the {@link #payloadCopy()} of its {@link #guardOwner()} (a part: its offset in the whole). */
  public long payloadCopyOffset() {
    return 0;
  }

  /**
   * Backend thread, before a system call or copy that moves bytes of the caller's memory for this op: false when
   * the outcome is already decided (cancelled, failed), and then the caller's memory must not be touched any more;
   * true otherwise, and the caller must call {@link #endLanding()} (in a {@code finally}) right after.
   */
  public final boolean beginLanding() {
    TransferOp o = guardOwner();
    while (true) {
      int s = (int) STATE.getVolatile(o);
      if (s < OPEN) return false;
      if (STATE.compareAndSet(o, s, s + 1)) return true;
    }
  }

  /**
   * Whether the outcome is already decided (succeeded, failed, cancelled or past its deadline). A backend that has
   * not yet started moving this op's bytes (an op queued behind a confirmation, a full queue or a connection being
   * replaced) drops it instead of starting: once {@link #cancelOutcome()} returned, the caller may reuse its buffer.
   */
  public final boolean outcomeDecided() {
    return (int) STATE.getVolatile(guardOwner()) < OPEN;
  }

  /** Ends what {@link #beginLanding()} began. */
  public final void endLanding() {
    STATE.getAndAdd(guardOwner(), -1);
  }

  /**
   * Backend thread, inside a landing section, before the first byte of a WRITE payload that comes from the caller's
   * host memory may leave: a cancellation from then on keeps a copy of the payload, so that the request already on the
   * wire can be completed without touching the caller's buffer again.
   */
  public final void payloadStarted() {
    guardOwner().payloadStarted = true;
  }

  /**
   * The payload copy a cancellation made (see {@link #payloadStarted()}), or null when the outcome was decided
   * otherwise. Call once {@link #beginLanding()} returned false; waits while a cancellation is still copying (a memory
   * copy of the payload, on the rare cancellation path only).
   */
  public final MemorySegment payloadCopy() {
    TransferOp o = guardOwner();
    while ((int) STATE.getVolatile(o) == CANCELLING) Thread.onSpinWait();
    return o.payloadCopy;
  }

  /**
   * Claims the outcome for a completion: true exactly once; waits while a backend thread is in a landing section
   * (one system call or copy). Implementations of {@link #transferSucceeded}/{@link #transferFailed} call this.
   */
  protected final boolean claimOutcome() {
    while (true) {
      int s = state;
      if (s == OPEN) {
        if (STATE.compareAndSet(this, OPEN, FINAL)) return true;
      } else if (s > OPEN) {
        Thread.onSpinWait();
      } else {
        return false;
      }
    }
  }

  /**
   * Claims the outcome for a cancellation: like {@link #claimOutcome()}, and when a backend has started sending this
   * op's payload ({@link #payloadStarted()}), copies the payload (all blocks, in order) before the outcome becomes
   * final, so the caller may reuse its buffer at once. Once this returns true no backend touches the caller's memory.
   */
  protected final boolean cancelOutcome() {
    while (true) {
      int s = state;
      if (s == OPEN) {
        if (STATE.compareAndSet(this, OPEN, CANCELLING)) break;
      } else if (s > OPEN) {
        Thread.onSpinWait();
      } else {
        return false;
      }
    }
    if (payloadStarted && local != null && local.segment().byteSize() > 0) {
      MemorySegment copy = Arena.ofAuto().allocate(Math.max(1, size), 64);
      long at = 0;
      for (int i = 0; i < blockCount(); i++) {
        MemorySegment.copy(local.segment(), localOffset(i), copy, at, blockSize(i));
        at += blockSize(i);
      }
      payloadCopy = copy;
    }
    STATE.setVolatile(this, FINAL); // publishes the copy
    return true;
  }

  /** The transfer finished and every byte is in place. Called once, from a backend thread. */
  public abstract void transferSucceeded();

  /** The transfer failed. Called once, from any thread; later calls must be ignored by the implementation. */
  public abstract void transferFailed(TransportError error, String message);
}
