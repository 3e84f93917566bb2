package org.mori4j.transport.tcp;

/**
 * How {@link GpuStager} cuts one GPU transfer's payload into pieces: small at both ends, a steady size in the
 * middle. What a staged transfer exposes beyond its socket time is the device copy of its first piece (nothing
 * leaves before it) and of its last one (the target answers only after it): measured on 1x H100 with quarter-size
 * pieces, the first piece's device-to-host copy took 16-28 us to be seen done and the target's last host-to-device
 * copy 25-50 us after the last byte (1-4 MiB), about 14 us of which is fixed cost and the rest size. So the plan
 * starts with a {@link GpuStager#MIN_PIECE} piece and grows by four (64 KiB, 256 KiB, ...) while the payload still
 * has a steady piece between the ramps, and ends with the mirror image; the middle is cut into near-equal pieces of
 * at most the steady size ({@link GpuStager#pieceSize}: a quarter of the payload within its bounds, or the share that
 * {@code mori4j.tcp.gpu-staging-pieces} sets). The socket
 * starts after a 64 KiB copy and the target answers one 64 KiB copy after the last byte, for a few more pieces
 * (each a copy call and an event: a few microseconds of the I/O thread). Piece {@code k} goes through buffer
 * {@code k % SLOTS}. Immutable values, reset per transfer.
 */
final class PiecePlan {
  private static final int RAMP = 4;

  private long total;
  private long steady;
  /** Pieces of the ramp at each end (the head's grow from the minimum by {@link #RAMP}, the tail mirrors them). */
  private int ramp;
  private long rampBytes;
  private int mids;
  private long mid;
  private int count;

  /** Plans {@code total} bytes (positive) through buffers of {@code chunk} bytes, the middle in about four pieces. */
  void plan(long total, int chunk) {
    plan(total, chunk, GpuStager.SLOTS);
  }

  /** Plans {@code total} bytes (positive) through buffers of {@code chunk} bytes, the middle in about {@code pieces}. */
  void plan(long total, int chunk, int pieces) {
    this.total = total;
    steady = GpuStager.pieceSize(total, chunk, pieces);
    long left = total;
    long s = GpuStager.MIN_PIECE;
    ramp = 0;
    rampBytes = 0;
    while (s < steady && left - 2 * s >= steady) {
      ramp++;
      rampBytes += s;
      left -= 2 * s;
      s *= RAMP;
    }
    long n = (left + steady - 1) / steady;
    long even = Math.min(steady, ((left + n - 1) / n + 4095) & ~4095L);
    mid = Math.max(1, even);
    mids = (int) ((left + mid - 1) / mid);
    count = 2 * ramp + mids;
  }

  int count() {
    return count;
  }

  /** The steady (middle) piece size. */
  long steady() {
    return steady;
  }

  /** Where piece {@code k} starts in the payload ({@code k == count()} gives the total). */
  long start(int k) {
    if (k <= ramp) return headBytes(k);
    if (k <= ramp + mids) return Math.min(rampBytes + (long) (k - ramp) * mid, total - rampBytes);
    // tail piece j counts down from the largest ramp piece; what follows piece k is the ramp's last (count - k) pieces
    return total - headBytes(count - k);
  }

  /** Bytes of piece {@code k}. */
  long length(int k) {
    return start(k + 1) - start(k);
  }

  /** Bytes of the first {@code k} ramp pieces (k <= ramp): MIN + 4 MIN + ... */
  private static long headBytes(int k) {
    long b = 0;
    long s = GpuStager.MIN_PIECE;
    for (int i = 0; i < k; i++, s *= RAMP) b += s;
    return b;
  }
}
