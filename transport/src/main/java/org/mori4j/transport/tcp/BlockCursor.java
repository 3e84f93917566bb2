package org.mori4j.transport.tcp;

import java.nio.ByteBuffer;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.RegionViews;

/**
 * Walks the blocks of one transfer in a region and hands out direct views for a vectored socket call:
 * at most {@code MAX_IOV} buffers at a time, split at view-window boundaries. A single block uses the
 * connection's cached view (no allocation); several blocks get independent slices, because all of them
 * take part in the same {@code writev}/{@code readv}.
 */
final class BlockCursor {
  static final int MAX_IOV = 64;

  private final RegionViews views;
  final ByteBuffer[] iov = new ByteBuffer[MAX_IOV + 1];
  private LocalRegion region;
  private long singleOffset;
  private long singleSize;
  private long[] offsets;
  private long[] sizes;
  private int count;
  private int block;
  private long doneInBlock;
  private long remaining;

  BlockCursor(RegionViews views) {
    this.views = views;
  }

  void single(LocalRegion r, long offset, long size) {
    region = r;
    offsets = null;
    sizes = null;
    singleOffset = offset;
    singleSize = size;
    count = 1;
    block = 0;
    doneInBlock = 0;
    remaining = size;
  }

  void blocks(LocalRegion r, long[] offsets, long[] sizes, long total) {
    region = r;
    this.offsets = offsets;
    this.sizes = sizes;
    count = offsets.length;
    block = 0;
    doneInBlock = 0;
    remaining = total;
  }

  long remaining() {
    return remaining;
  }

  /** Fills {@code iov[from..]} with views of what is left; returns how many were set. */
  int fill(int from) {
    int n = from;
    int b = block;
    long done = doneInBlock;
    boolean many = count > 1;
    while (b < count && n < iov.length) {
      long off = (offsets == null ? singleOffset : offsets[b]) + done;
      long left = (sizes == null ? singleSize : sizes[b]) - done;
      long chunk = Math.min(left, RegionViews.windowEnd(off) - off);
      int len = (int) chunk;
      iov[n++] = many ? views.slice(region, off, len) : views.view(region, off, len);
      if (chunk == left) {
        b++;
        done = 0;
        if (!many) break;
      } else {
        done += chunk;
        if (!many) {
          // a single block that crosses a window: further windows need their own views
          many = true;
        }
      }
    }
    return n - from;
  }

  /** Records that {@code bytes} of payload moved. */
  void advance(long bytes) {
    remaining -= bytes;
    while (bytes > 0) {
      long left = (sizes == null ? singleSize : sizes[block]) - doneInBlock;
      if (bytes >= left) {
        bytes -= left;
        block++;
        doneInBlock = 0;
      } else {
        doneInBlock += bytes;
        bytes = 0;
      }
    }
  }

  /** Drops the cached views of {@code r} (a region used once, such as a cancelled WRITE's payload copy). */
  void forget(LocalRegion r) {
    views.forget(r);
  }

  void clear() {
    region = null;
    offsets = null;
    sizes = null;
    for (int i = 0; i < iov.length; i++) iov[i] = null;
  }
}
