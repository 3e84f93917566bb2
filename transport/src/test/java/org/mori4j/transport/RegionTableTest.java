package org.mori4j.transport;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RegionTableTest {
  private final Arena arena = Arena.ofShared();
  private final MemorySegment seg = arena.allocate(64);

  @AfterAll
  void free() {
    arena.close();
  }

  private LocalRegion region(long id) {
    return new LocalRegion(id, id * 31 + 7, seg, false, -1);
  }

  @Test
  void putThenGetReturnsTheSameRegion() {
    RegionTable t = new RegionTable();
    LocalRegion a = region(1), b = region(2);
    t.put(a);
    t.put(b);
    assertSame(a, t.get(1));
    assertSame(b, t.get(2));
    assertNull(t.get(3));
    assertEquals(2, t.size());
  }

  @Test
  void getOfUnknownIdOnEmptyTableIsNull() {
    RegionTable t = new RegionTable();
    assertNull(t.get(0));
    assertNull(t.get(-1));
    assertNull(t.get(Long.MAX_VALUE));
    assertEquals(0, t.size());
  }

  @Test
  void putOfSameIdReplacesTheRegion() {
    RegionTable t = new RegionTable();
    LocalRegion a = region(5), a2 = region(5);
    t.put(a);
    t.put(a2);
    assertSame(a2, t.get(5));
    assertEquals(1, t.size());
  }

  @Test
  void removeReturnsTheRegionAndForgetsIt() {
    RegionTable t = new RegionTable();
    LocalRegion a = region(9);
    t.put(a);
    assertSame(a, t.remove(9));
    assertNull(t.get(9));
    assertEquals(0, t.size());
    assertNull(t.remove(9), "second remove finds nothing");
  }

  @Test
  void tableMatchesAMapModelUnderRandomPutsAndRemoves() {
    RegionTable t = new RegionTable();
    Map<Long, LocalRegion> model = new HashMap<>();
    SplittableRandom r = new SplittableRandom(11);
    for (int step = 0; step < 8_000; step++) {
      // a small id space forces collisions, growth and removal of entries inside probe chains
      long id = r.nextInt(20) == 0 ? r.nextLong() : r.nextInt(600);
      if (r.nextInt(3) == 0) {
        assertSame(model.remove(id), t.remove(id), "remove " + id);
      } else {
        LocalRegion reg = region(id);
        model.put(id, reg);
        t.put(reg);
      }
      if (step % 500 == 0) {
        assertEquals(model.size(), t.size());
        for (var e : model.entrySet()) assertSame(e.getValue(), t.get(e.getKey()), "get " + e.getKey());
      }
    }
    assertEquals(model.size(), t.size());
    for (var e : model.entrySet()) assertSame(e.getValue(), t.get(e.getKey()));
    for (long id = 0; id < 600; id++) if (!model.containsKey(id)) assertNull(t.get(id), "id " + id);
  }

  @Test
  void readersNeverSeeATornTableWhileWritersChangeIt() throws Exception {
    RegionTable t = new RegionTable();
    LocalRegion stable = region(1_000_000);
    t.put(stable);
    var stop = new java.util.concurrent.atomic.AtomicBoolean();
    var failures = new java.util.concurrent.atomic.AtomicInteger();
    Thread reader = new Thread(() -> {
      while (!stop.get()) if (t.get(1_000_000) != stable) failures.incrementAndGet();
    });
    reader.start();
    for (int i = 0; i < 2000; i++) {
      t.put(region(i));
      if (i % 3 == 0) t.remove(i / 2);
    }
    stop.set(true);
    reader.join();
    assertEquals(0, failures.get(), "a reader missed a region that was never removed");
  }
  @Test
  void aReaderNeverGetsTheValueOfAnotherKeyWhileKeysAreRemovedAndPutAgain() throws Exception {
    // in-place removal leaves tombstones and re-puts land in other slots: a reader racing with them must see
    // either nothing or the value of the key it asked for, never a value that belongs to a neighbour
    RegionTable t = new RegionTable();
    var stop = new java.util.concurrent.atomic.AtomicBoolean();
    var wrong = new java.util.concurrent.atomic.AtomicInteger();
    Thread reader = new Thread(() -> {
      SplittableRandom r = new SplittableRandom(3);
      while (!stop.get()) {
        long id = r.nextInt(64);
        LocalRegion got = t.get(id);
        if (got != null && got.id() != id) wrong.incrementAndGet();
      }
    });
    reader.start();
    SplittableRandom r = new SplittableRandom(5);
    for (int step = 0; step < 200_000; step++) {
      long id = r.nextInt(64);
      if (r.nextBoolean()) t.remove(id);
      else t.put(region(id));
    }
    stop.set(true);
    reader.join();
    assertEquals(0, wrong.get(), "a reader got a region under another region's id");
  }

  @Test
  void manyPutsAndRemovesKeepTheTableSmallAndCorrect() {
    RegionTable t = new RegionTable();
    for (long id = 0; id < 20_000; id++) t.put(region(id));
    for (long id = 0; id < 20_000; id++) if (id % 100 != 0) assertNotNull(t.remove(id));
    assertEquals(200, t.size());
    for (long id = 20_000; id < 40_000; id++) {
      t.put(region(id));
      assertEquals(id, t.remove(id).id());
    }
    assertEquals(200, t.size());
    for (long id = 0; id < 20_000; id += 100) assertEquals(id, t.get(id).id());
    assertEquals(200, t.values().size());
  }
}
