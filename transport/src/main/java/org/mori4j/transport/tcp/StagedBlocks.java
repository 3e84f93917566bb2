package org.mori4j.transport.tcp;

import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.LocalRegion;

/**
 * Where one {@link GpuStager} transfer's payload lies in its local GPU region: one block, or several laid end to end
 * in the payload. The stager hands it each piece in payload order and it issues that piece's copies between the device
 * and a staging buffer, one copy per block the piece touches (a piece may span several blocks, a block several
 * pieces), keeping its place between pieces. Split from the stager, which keeps the pieces, buffers and socket; loop
 * thread only, reset per transfer.
 */
final class StagedBlocks {
  private LocalRegion region;
  private long singleOffset;
  private long singleSize;
  /** Several blocks' offsets in the region and sizes (the caller's arrays, not copied); null for one block. */
  private long[] offsets;
  private long[] sizes;
  /** The block the next copy starts in, and how much of it earlier copies took. */
  private int block;
  private long blockDone;

  /** The payload is {@code size} bytes at {@code offset} of {@code r}. */
  void single(LocalRegion r, long offset, long size) {
    reset(r, null, null);
    singleOffset = offset;
    singleSize = size;
  }

  /** The payload is the blocks at {@code offsets} of {@code r}, of {@code sizes} bytes each, end to end. */
  void many(LocalRegion r, long[] offsets, long[] sizes) {
    reset(r, offsets, sizes);
  }

  private void reset(LocalRegion r, long[] offs, long[] szs) {
    region = r;
    offsets = offs;
    sizes = szs;
    block = 0;
    blockDone = 0;
  }

  /**
   * Issues the copies of the payload's next {@code len} bytes between the device and {@code slot}'s buffer (from its
   * start): device to buffer when {@code outbound}, buffer to device otherwise.
   */
  void copy(DeviceStaging.Slot slot, boolean outbound, long len) {
    int device = region.deviceId();
    long base = region.address();
    long bufferOffset = 0;
    while (len > 0) {
      long blockSize = sizes == null ? singleSize : sizes[block];
      long off = (offsets == null ? singleOffset : offsets[block]) + blockDone;
      long n = Math.min(blockSize - blockDone, len);
      if (outbound) slot.fromDevice(device, base + off, bufferOffset, n);
      else slot.toDevice(device, base + off, bufferOffset, n);
      bufferOffset += n;
      len -= n;
      blockDone += n;
      if (blockDone == blockSize) {
        block++;
        blockDone = 0;
      }
    }
  }

  /** The region's device, for messages. */
  int deviceId() {
    return region.deviceId();
  }

  /** A transfer is set (between single/many and clear). */
  boolean active() {
    return region != null;
  }

  /** Forgets the transfer (the caller's arrays included). */
  void clear() {
    region = null;
    offsets = null;
    sizes = null;
  }
}
