package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.RegionViews;

/**
 * The cursor hands out views for vectored socket calls; a view never spans a 1 GiB window. These tests
 * look only at view addresses and lengths, so they use a large region that is never touched.
 */
class BlockCursorTest {
  private static final long BASE = 1L << 40; // never dereferenced

  private static LocalRegion untouched(long size) {
    return new LocalRegion(1, 1, MemorySegment.ofAddress(BASE).reinterpret(size), false, -1);
  }

  private static long addr(ByteBuffer b) {
    return MemorySegment.ofBuffer(b).address();
  }

  /** Walks the cursor as a socket would (taking {@code step} bytes at a time); returns the (address, length) runs seen. */
  private static java.util.List<long[]> walk(BlockCursor c, long step) {
    java.util.List<long[]> runs = new java.util.ArrayList<>();
    int guard = 0;
    while (c.remaining() > 0) {
      assertTrue(guard++ < 100_000, "cursor does not make progress");
      int n = c.fill(0);
      assertTrue(n > 0, "fill returned no views with " + c.remaining() + " bytes left");
      long budget = step;
      long moved = 0;
      for (int i = 0; i < n && budget > 0; i++) {
        ByteBuffer b = c.iov[i];
        long take = Math.min(b.remaining(), budget);
        runs.add(new long[] {addr(b), take});
        budget -= take;
        moved += take;
      }
      c.advance(moved);
    }
    return runs;
  }

  /** Merges adjacent runs and compares with the expected (address, length) ranges. */
  private static void assertCovers(java.util.List<long[]> runs, long[][] expected) {
    java.util.List<long[]> merged = new java.util.ArrayList<>();
    for (long[] r : runs) {
      if (!merged.isEmpty()) {
        long[] last = merged.get(merged.size() - 1);
        if (last[0] + last[1] == r[0]) {
          last[1] += r[1];
          continue;
        }
      }
      merged.add(r.clone());
    }
    assertEquals(expected.length, merged.size(), "number of contiguous ranges");
    for (int i = 0; i < expected.length; i++) {
      assertEquals(expected[i][0], merged.get(i)[0], "start of range " + i);
      assertEquals(expected[i][1], merged.get(i)[1], "length of range " + i);
    }
  }

  @Test
  void viewsNeverCrossAWindowBoundary() {
    LocalRegion r = untouched(3 * LocalRegion.WINDOW);
    BlockCursor c = new BlockCursor(new RegionViews());
    long off = LocalRegion.WINDOW - 100;
    c.single(r, off, LocalRegion.WINDOW + 300);
    int n = c.fill(0);
    assertEquals(3, n, "a block over two window boundaries needs three views");
    assertEquals(100, c.iov[0].remaining());
    assertEquals(LocalRegion.WINDOW, c.iov[1].remaining());
    assertEquals(200, c.iov[2].remaining());
    assertEquals(BASE + off, addr(c.iov[0]));
    assertEquals(BASE + LocalRegion.WINDOW, addr(c.iov[1]));
    assertEquals(BASE + 2 * LocalRegion.WINDOW, addr(c.iov[2]));
  }

  @Test
  void singleBlockAcrossWindowsIsWalkedCompletelyInSmallSteps() {
    LocalRegion r = untouched(3 * LocalRegion.WINDOW);
    BlockCursor c = new BlockCursor(new RegionViews());
    long off = LocalRegion.WINDOW - 5000;
    long size = 10_000;
    c.single(r, off, size);
    assertCovers(walk(c, 777), new long[][] {{BASE + off, size}});
  }

  @Test
  void manyBlocksAreWalkedInOrderWithPartialWrites() {
    LocalRegion r = untouched(2 * LocalRegion.WINDOW);
    long[] offs = new long[200];
    long[] sizes = new long[200];
    long total = 0;
    long[][] expected = new long[200][];
    for (int i = 0; i < 200; i++) {
      offs[i] = (199 - i) * 10_000L + (i == 0 ? LocalRegion.WINDOW - 10 : 0); // descending; block 0 crosses a window
      sizes[i] = 1 + i * 13L + (i == 0 ? 30 : 0);
      total += sizes[i];
      expected[i] = new long[] {BASE + offs[i], sizes[i]};
    }
    BlockCursor c = new BlockCursor(new RegionViews());
    c.blocks(r, offs, sizes, total);
    // more blocks than MAX_IOV, so fill must be called again after each partial write
    assertCovers(walk(c, 4099), expected);
  }

  @Test
  void cachedViewOfRealMemoryPointsAtTheRightBytes() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment s = a.allocate(8192);
      for (int i = 0; i < 8192; i++) s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) i);
      LocalRegion r = new LocalRegion(1, 1, s, false, -1);
      RegionViews v = new RegionViews();
      ByteBuffer b = v.view(r, 1000, 10);
      assertEquals(10, b.remaining());
      for (int i = 0; i < 10; i++) assertEquals((byte) (1000 + i), b.get(b.position() + i));
      ByteBuffer again = v.view(r, 5000, 3);
      assertSame(b, again, "a region's window view is cached");
      assertEquals(3, again.remaining());
      assertEquals((byte) 5000, again.get(again.position()));
    }
  }
}
