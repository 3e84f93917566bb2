package org.mori4j.transport;

import java.nio.ByteBuffer;
import java.util.IdentityHashMap;

/**
 * Direct-buffer views of registered regions, cached per owner thread (one cache per connection). A view's
 * position and limit are rewritten for each block, so a view must never be shared between two transfers
 * that are under way at once; one cache per connection guarantees that because a connection moves one
 * request at a time in each direction. After warm-up, a single-block transfer costs no allocation.
 */
public final class RegionViews {
  private static final int MAX_CACHED_REGIONS = 64;
  private final IdentityHashMap<LocalRegion, ByteBuffer[]> cache = new IdentityHashMap<>();

  /**
   * The view that covers {@code [offset, offset+length)} with position and limit set, or null when the range
   * crosses a window boundary (callers then split the block with {@link #windowEnd}).
   */
  public ByteBuffer view(LocalRegion r, long offset, int length) {
    int w = (int) (offset / LocalRegion.WINDOW);
    long inWin = offset - w * LocalRegion.WINDOW;
    if (inWin + length > LocalRegion.WINDOW) return null;
    ByteBuffer[] windows = cache.get(r);
    if (windows == null) {
      if (cache.size() >= MAX_CACHED_REGIONS) cache.clear();
      windows = new ByteBuffer[r.windowCount()];
      cache.put(r, windows);
    }
    ByteBuffer b = windows[w];
    if (b == null) windows[w] = b = r.newWindowView(w);
    b.limit((int) (inWin + length)).position((int) inWin);
    return b;
  }

  /** The first offset after {@code offset} where a new view window starts. */
  public static long windowEnd(long offset) {
    return (offset / LocalRegion.WINDOW + 1) * LocalRegion.WINDOW;
  }

  /** A fresh, independent view (for batches, where many blocks of one region are in one vectored call). */
  public ByteBuffer slice(LocalRegion r, long offset, int length) {
    ByteBuffer v = view(r, offset, length);
    return v == null ? null : v.slice();
  }

  public void forget(LocalRegion r) {
    cache.remove(r);
  }
}
