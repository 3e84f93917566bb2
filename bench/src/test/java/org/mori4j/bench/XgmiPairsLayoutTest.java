package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.mori4j.bench.XgmiPairsLayout.Pattern;
import org.mori4j.bench.XgmiPairsLayout.Route;
import org.mori4j.bench.XgmiPairsLayout.Shape;

/**
 * {@link XgmiPairsLayout}: the ring's and all-to-all's routes, that every engine sends its whole shape, and that
 * what lands in a destination never overlaps another source's bytes (so a check per region is meaningful).
 */
class XgmiPairsLayoutTest {
  @Test
  void ringSendsEverythingToTheNextEngine() {
    XgmiPairsLayout l = XgmiPairsLayout.of(Pattern.RING, 4, Shape.batch(64, 4096));
    assertEquals(4, l.routes().size());
    for (Route r : l.routes()) {
      assertEquals((r.source() + 1) % 4, r.destination());
      assertEquals(64 * 4096, r.bytes());
      // every other slot: no two blocks are neighbours on either side, so the engine cannot join them
      for (int b = 1; b < r.sizes().length; b++) assertEquals(2 * 4096, r.destinationOffsets()[b] - r.destinationOffsets()[b - 1]);
    }
    assertEquals(l.shape().span(), l.destinationBytes());
  }

  @Test
  void allToAllSplitsEachEnginesBytesOverEveryOtherEngineWithoutOverlap() {
    for (Shape shape : List.of(Shape.contiguous(256L << 20), Shape.batch(4096, 4096), Shape.contiguous(40960), Shape.batch(7, 4096))) {
      int n = 4;
      XgmiPairsLayout l = XgmiPairsLayout.of(Pattern.ALL_TO_ALL, n, shape);
      Set<String> pairs = new HashSet<>();
      for (Route r : l.routes()) {
        assertTrue(r.source() != r.destination(), shape.label());
        assertTrue(pairs.add(r.source() + ">" + r.destination()), "pair twice: " + r.source() + ">" + r.destination());
      }
      assertEquals(n * (n - 1), pairs.size());
      for (int i = 0; i < n; i++) assertEquals(shape.bytes(), l.from(i).stream().mapToLong(Route::bytes).sum(), shape.label() + " engine " + i);
      for (int j = 0; j < n; j++) {
        List<long[]> spans = new ArrayList<>();
        for (Route r : l.into(j)) {
          for (int b = 0; b < r.sizes().length; b++) {
            long at = r.destinationOffsets()[b];
            assertTrue(at >= 0 && at + r.sizes()[b] <= l.destinationBytes(), shape.label() + ": outside the destination buffer");
            spans.add(new long[] {at, at + r.sizes()[b]});
          }
        }
        spans.sort((a, b) -> Long.compare(a[0], b[0]));
        for (int k = 1; k < spans.size(); k++) assertTrue(spans.get(k - 1)[1] <= spans.get(k)[0], shape.label() + ": two blocks overlap in engine " + j);
      }
    }
  }

  @Test
  void shapesThatCannotBeSplitAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> XgmiPairsLayout.of(Pattern.ALL_TO_ALL, 4, Shape.batch(2, 4096)));
    assertThrows(IllegalArgumentException.class, () -> XgmiPairsLayout.of(Pattern.ALL_TO_ALL, 8, Shape.contiguous(8192)));
    assertThrows(IllegalArgumentException.class, () -> XgmiPairsLayout.of(Pattern.RING, 1, Shape.contiguous(8192)));
  }
}
