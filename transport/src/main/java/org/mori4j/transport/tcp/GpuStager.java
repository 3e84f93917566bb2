package org.mori4j.transport.tcp;

import java.nio.ByteBuffer;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.StagingTuning;

/**
 * Moves the payload of one GPU transfer at a time between device memory and a socket, through up to
 * {@value #SLOTS} staging buffers used in turn (fewer while the engine's pool is short: see open()), each with
 * its own copy queue. With a pooled {@link DeviceStaging} the stager keeps its first buffer and borrows the
 * others for each transfer (as many as its pieces can keep busy), giving them back at {@link #finish()}. The payload (the transfer's blocks laid end to end) is cut into pieces, one piece per
 * buffer at a time; a piece may span several blocks.
 * Outbound (device to socket), the device-to-host copies of the next pieces run while a piece is on the
 * socket; inbound (socket to device), a piece is copied onto the device while the next ones arrive in the
 * other buffers, and a buffer is refilled only after its copy finished.
 *
 * <p>The pieces are planned per transfer ({@link PiecePlan}): {@value #MIN_PIECE} bytes first and last, growing
 * towards a steady size in the middle of about a quarter of the payload ({@link #pieceSize}; the share is the engine's
 * {@link StagingTuning#middlePieces()}), at most the buffer size. With the whole buffer as the piece, a transfer that fits one buffer had no overlap at all: the socket
 * waited for the whole device-to-host copy, and the target's last host-to-device copy came after the last byte
 * arrived. With quarters, a quarter of that copying was exposed on each side; with the small end pieces, one
 * small copy is.
 *
 * <p>The sending side may write several ready pieces in one gathering call ({@link #fill}, with
 * {@link StagingTuning#gatherPieces()}), the receiving side read into several free buffers in one scattering call
 * ({@link StagingTuning#scatterPieces()}). Nothing here blocks: {@link #next()} answers null while the GPU has not caught up (after asking again for
 * at most {@link StagingTuning#copySpinNanos()}, 0 by default), and the connection then waits on its loop's GPU poll
 * instead of the selector. Loop thread only. The buffers are opened on
 * the first GPU transfer of the connection and closed by {@link #close()} when the connection closes; the
 * engine's {@code DeviceStaging} hands out and takes back slots of a pool prepared when GPU memory was
 * registered (engine-actors {@code GpuStaging}), so that no pinned allocation happens on the data path while a
 * GPU-initiated kernel spins.
 */
final class GpuStager {
  static final int SLOTS = 4;
  /** Below this a piece's fixed costs (a copy issued, an event recorded and polled: a few microseconds) outweigh the overlap it buys. */
  static final int MIN_PIECE = 64 << 10;

  private final DeviceStaging staging;
  private final int chunk;
  /** The middle of a transfer is cut into about this many pieces ({@link StagingTuning#middlePieces()}). */
  private final int middlePieces;
  /** How long {@link #copyDone} asks an unfinished copy again before the loop takes over ({@link StagingTuning#copySpinNanos()}). */
  private final long spinNanos;
  /** {@link #fill} offers every ready piece, not only the current one ({@link StagingTuning#gatherPieces()}). */
  private final boolean gather;
  /** Inbound, {@link #fill} offers every free buffer for the following pieces too ({@link StagingTuning#scatterPieces()}). */
  private final boolean scatter;
  /** Outbound, while pieces wait for a buffer, {@link #fill} offers at most half the buffers' pieces ({@link StagingTuning#earlyRefill()}). */
  private final boolean earlyRefill;
  /** The staging pools its slots: buffers after the first are borrowed for a transfer and given back at its end. */
  private final boolean borrow;
  private final DeviceStaging.Slot[] slots = new DeviceStaging.Slot[SLOTS];
  private final ByteBuffer[] views = new ByteBuffer[SLOTS];
  /** Copies were issued on the slot and their completion has not been seen yet. */
  private final boolean[] busy = new boolean[SLOTS];
  /** Buffers open (1 to {@value #SLOTS}): the first one always, the others only as the staging pool has them ready. */
  private int nBuffers;

  private final PiecePlan plan = new PiecePlan();
  /** The piece the socket is in, and its bounds in the payload. */
  private int sockPiece;
  private long sockStart;
  private long sockEnd;
  /** Outbound: the next piece whose device-to-host copy is to be issued. */
  private int issuePiece;
  private boolean outbound;
  /** Where the payload lies in the local region: each piece's copies go there. */
  private final StagedBlocks blocks = new StagedBlocks();
  private long total;
  private long moved;
  private long issued;
  private String failure;
  /** This transfer's {@link GpuStageTrace} record, when the trace is on. */
  private final StageRecorder trace = GpuStageTrace.ON ? new StageRecorder(SLOTS) : null;

  GpuStager(DeviceStaging staging, int chunk) {
    this.staging = staging;
    this.chunk = chunk;
    this.borrow = staging.pooled();
    StagingTuning t = staging.tuning();
    this.middlePieces = t.middlePieces();
    this.spinNanos = t.copySpinNanos();
    this.gather = t.gatherPieces();
    this.scatter = t.scatterPieces();
    this.earlyRefill = t.earlyRefill();
  }

  /** Starts a transfer of one block; outbound, the device-to-host copies of the first pieces are issued at once. */
  void start(boolean outbound, LocalRegion r, long offset, long size) {
    begin(outbound, size);
    blocks.single(r, offset, size);
    if (outbound) issue();
  }

  /** Starts a transfer of several blocks of {@code r}; the arrays are not copied. */
  void start(boolean outbound, LocalRegion r, long[] offsets, long[] sizes, long total) {
    begin(outbound, total);
    blocks.many(r, offsets, sizes);
    if (outbound) issue();
  }

  private void begin(boolean out, long tot) {
    plan.plan(tot, chunk, middlePieces);
    // a pooled stager borrows only the buffers this plan can keep busy (none beyond the first for a one-piece transfer)
    open(borrow ? Math.min(SLOTS, plan.count()) : SLOTS);
    outbound = out;
    total = tot;
    sockPiece = 0;
    sockStart = 0;
    sockEnd = plan.length(0);
    issuePiece = 0;
    moved = 0;
    issued = 0;
    failure = null;
    if (trace != null) trace.begin(out, tot);
  }

  /**
   * The piece size for a payload of {@code total} bytes through buffers of {@code chunk} bytes: a quarter of
   * the payload rounded up to 4 KiB, so that every buffer carries a piece, but not under {@link #MIN_PIECE}
   * (nor over the payload) and not over the buffer.
   */
  static int pieceSize(long total, int chunk) {
    return pieceSize(total, chunk, SLOTS);
  }

  /** {@link #pieceSize(long, int)} with the payload shared by {@code pieces} instead of four. */
  static int pieceSize(long total, int chunk, int pieces) {
    long share = ((total + pieces - 1) / pieces + 4095) & ~4095L;
    long p = Math.min(total, Math.max(MIN_PIECE, share));
    return (int) Math.max(1, Math.min(p, chunk));
  }

  /** The current transfer's steady (middle) piece size (tests). */
  int piece() {
    return (int) plan.steady();
  }

  /** The current transfer's plan (tests). */
  PiecePlan plan() {
    return plan;
  }

  /**
   * Before a transfer: the first buffer is opened whatever it costs; the others, up to {@code want}, only when
   * the pool has one ready, so that a short pool means less overlap on this connection instead of a page-locked
   * allocation on the data path. A connection that got fewer tops up at its next transfer.
   */
  private void open(int want) {
    if (nBuffers == 0) {
      slots[0] = staging.openSlot(chunk);
      views[0] = slots[0].buffer().asByteBuffer();
      nBuffers = 1;
    }
    while (nBuffers < want) {
      DeviceStaging.Slot more = staging.tryOpenSlot(chunk);
      if (more == null) break;
      slots[nBuffers] = more;
      views[nBuffers] = more.buffer().asByteBuffer();
      busy[nBuffers] = false;
      nBuffers++;
    }
  }

  /** Payload bytes not yet through the socket. */
  long remaining() {
    return total - moved;
  }

  /**
   * The buffer view for the next socket read or write (position and limit set, at most the rest of the
   * current piece), or null while the GPU copy that must come first is still running. Throws if an
   * outbound copy failed (the promised bytes cannot be produced); an inbound copy failure is kept in
   * {@link #failure()} and the rest of the payload is read and dropped.
   */
  ByteBuffer next() {
    int s = sockPiece % nBuffers;
    if (busy[s]) {
      if (failure == null) {
        try {
          if (!copyDone(s)) {
            if (trace != null) trace.waited(s);
            return null;
          }
          if (trace != null) trace.seen(s);
        } catch (RuntimeException e) {
          if (outbound) throw e;
          fail(e);
        }
      }
      if (failure == null || !outbound) busy[s] = false;
    }
    ByteBuffer v = views[s];
    v.limit((int) (sockEnd - sockStart)).position((int) (moved - sockStart));
    if (trace != null) trace.offered(v.remaining());
    return v;
  }

  /**
   * Puts views of the payload into {@code iov[at..]} for one socket call: the rest of the current piece, and, as the
   * room in {@code iov} allows, the pieces after it whose buffers are ready (at most one piece per buffer). Outbound
   * (a gathering write, with {@link StagingTuning#gatherPieces()}) a buffer is ready once its piece's device-to-host
   * copy is done; inbound (a scattering read, with {@link StagingTuning#scatterPieces()}) once the copy onto the
   * device of the piece it held before is done, so no buffer is refilled while a copy reads it, and each piece's copy
   * still starts when the socket has filled it ({@link #advance}). Returns the new end ({@code at} when the current
   * piece's buffer is not ready, like {@link #next()} answering null). Fewer, larger socket calls: a CPU transfer
   * moves its payload in one call, a staged one had one per piece.
   */
  int fill(ByteBuffer[] iov, int at) {
    ByteBuffer v = next();
    if (v == null) return at;
    iov[at++] = v;
    // inbound after a failed copy the rest is read and dropped through next(), piece by piece
    if (outbound ? !gather : (!scatter || failure != null)) return at;
    // outbound a piece is ready only once its copy was issued; inbound every piece of the plan may be read into
    int end = outbound ? issuePiece : plan.count();
    // early refill: a write that took every buffer's piece would free none of them (and start none of the waiting
    // pieces' device copies) before it returns; with half of them, the waiting copies overlap the next write
    int most = outbound && earlyRefill && issuePiece < plan.count() ? Math.max(1, nBuffers / 2) : nBuffers;
    long more = 0;
    for (int j = sockPiece + 1; j < end && j < sockPiece + most && at < iov.length; j++) {
      int s = j % nBuffers;
      if (busy[s]) {
        boolean done;
        try {
          done = slots[s].done();
        } catch (RuntimeException e) {
          break; // next() throws it (outbound) or keeps it as the failure (inbound) when the socket gets to this piece
        }
        if (!done) break;
        if (trace != null) trace.seen(s);
        busy[s] = false;
      }
      long len = plan.length(j);
      ByteBuffer w = views[s];
      w.limit((int) len).position(0);
      iov[at++] = w;
      more += len;
    }
    if (trace != null) trace.offered(more);
    return at;
  }

  /** Records {@code n} bytes through the socket (at most what {@link #next()} or {@link #fill} offered); inbound each piece filled starts its copy. */
  void advance(long n) {
    if (trace != null) trace.socketCall(n, moved + n == total);
    // a gathering write or scattering read may have moved several pieces: each piece's end is handled in turn
    while (n > 0) {
      long step = Math.min(n, sockEnd - moved);
      n -= step;
      moved += step;
      if (moved == sockEnd) pieceLeft();
    }
  }

  /** The socket is past the current piece: move to the next one, refill (outbound) or empty (inbound) its buffer. */
  private void pieceLeft() {
    int done = sockPiece;
    if (moved < total) {
      sockPiece++;
      sockStart = sockEnd;
      sockEnd = plan.start(sockPiece + 1);
    }
    if (outbound) {
      issue();
    } else if (failure == null) {
      try {
        copyChunk(done % nBuffers, moved - issued);
      } catch (RuntimeException e) {
        fail(e);
      }
    }
  }

  /** Outbound: issues device-to-host copies into every buffer whose previous piece has left. */
  private void issue() {
    while (issuePiece < plan.count()) {
      int j = issuePiece;
      // piece j's buffer still holds piece j - nBuffers until the socket is past it
      if (j >= nBuffers && sockPiece <= j - nBuffers && moved < total) return;
      copyChunk(j % nBuffers, plan.length(j));
      issuePiece++;
    }
  }

  private void copyChunk(int s, long len) {
    long t = trace != null ? System.nanoTime() : 0;
    DeviceStaging.Slot slot = slots[s];
    issued += len;
    blocks.copy(slot, outbound, len);
    slot.mark();
    busy[s] = true;
    if (trace != null) trace.issued(s, t);
  }

  /**
   * Whether slot {@code s}'s copies finished, asking again for up to {@link #spinNanos} while they have not: the piece
   * the socket waits for (the first one outbound, the last one's copy onto the device inbound) is usually a few
   * microseconds from done, and seeing it here saves the loop round (two selects, a yield and the poll) that would
   * otherwise come first. Bounded, so a long copy costs the loop at most that long before it goes back to polling.
   */
  private boolean copyDone(int s) {
    DeviceStaging.Slot slot = slots[s];
    if (slot.done()) return true;
    if (spinNanos == 0) return false;
    long start = System.nanoTime();
    boolean done;
    long now;
    do {
      Thread.onSpinWait();
      done = slot.done();
      now = System.nanoTime();
    } while (!done && now - start < spinNanos);
    if (trace != null) trace.spun(now - start, done);
    return done;
  }

  private void fail(RuntimeException e) {
    if (failure == null) failure = "GPU copy " + (outbound ? "from" : "to") + " device " + blocks.deviceId() + " failed: " + e.getMessage();
  }

  /** Inbound: true once every byte arrived and every copy onto the device finished (or failed). Never blocks. */
  boolean drained() {
    if (moved < total) return false;
    for (int i = 0; i < nBuffers; i++) {
      if (!busy[i]) continue;
      if (failure == null) {
        try {
          if (!copyDone(i)) {
            if (trace != null) trace.waited(i);
            return false;
          }
          if (trace != null) trace.seen(i);
        } catch (RuntimeException e) {
          fail(e);
        }
      }
      busy[i] = false;
    }
    return true;
  }

  /** Why the current inbound transfer's data did not land, or null. */
  String failure() {
    return failure;
  }

  /**
   * Ends the current transfer. The first buffer stays open for the next one; so do the others without a pool, while
   * a pooled stager gives them back, so that the pool is shared by the transfers in progress instead of being held
   * by every connection that ever staged one (a connection holds one buffer per direction, not four). A buffer
   * given back with copies still running (a cancelled transfer) is handed out again only once they finished.
   */
  void finish() {
    if (trace != null && blocks.active() && total > 0) trace.end();
    blocks.clear();
    total = moved = 0;
    if (borrow) giveBack(1);
  }

  /** Closes the buffers from {@code keep} on (pooled slots go back to their pool). */
  private void giveBack(int keep) {
    for (int i = keep; i < SLOTS; i++) {
      if (slots[i] != null) {
        try {
          slots[i].close();
        } catch (RuntimeException e) {
          TcpConnection.log.warn("closing a GPU staging buffer failed", e);
        }
        slots[i] = null;
        views[i] = null;
        busy[i] = false;
      }
    }
    nBuffers = Math.min(nBuffers, keep);
  }

  /** Frees the buffers, after copies still running. Idempotent. */
  void close() {
    finish();
    giveBack(0);
  }

  /** Buffers open now (tests: a pooled stager holds one between transfers). */
  int buffers() {
    return nBuffers;
  }
}
