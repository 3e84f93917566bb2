package org.mori4j.bench.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * The soak's checks must be able to fail: a changed byte, a block that landed at its source offset and a
 * range read from the wrong place do not check out; the slots of different writers never overlap; and the
 * notification check counts a real write once, a write that never happened as lost, and a notification
 * that is still there after it was popped as duplicated.
 */
class SoakCheckTest {
  @Test
  void patternChecksFindTheFirstWrongByte() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment s = a.allocate(1 << 16);
      SoakPattern.fill(s, 0, 1 << 16, 99);
      assertEquals(-1, SoakPattern.checkFill(s, 0, 1 << 16, 99));
      assertEquals(0, SoakPattern.checkFill(s, 0, 1 << 16, 98), "another uid's bytes");
      s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 4099, (byte) (s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4099) ^ 1));
      assertEquals(4096, SoakPattern.checkFill(s, 0, 1 << 16, 99), "the word holding the flipped byte");

      SoakPattern.fixed(s, 0, 1 << 16, 7);
      MemorySegment copy = a.allocate(4096);
      MemorySegment.copy(s, 8192, copy, 0, 4096);
      assertEquals(-1, SoakPattern.checkFixed(copy, 0, 4096, 7, 8192));
      assertEquals(0, SoakPattern.checkFixed(copy, 0, 4096, 7, 8200), "a range read 8 bytes off");
      SoakPattern.poison(copy, 0, 4096);
      assertEquals(0, SoakPattern.checkFixed(copy, 0, 4096, 7, 8192), "a range never written");
    }
  }

  @Test
  void batchBlocksCheckOnlyWhereTheyBelong() {
    try (Arena a = Arena.ofConfined()) {
      int n = SoakLayout.BATCH_BLOCKS, blk = 1024;
      MemorySegment src = a.allocate((long) n * blk), landed = a.allocate((long) n * blk);
      SoakPattern.fill(src, 0, (long) n * blk, 5);
      for (int j = 0; j < n; j++) MemorySegment.copy(src, (long) j * blk, landed, (long) (n - 1 - j) * blk, blk); // reversed, as the worker writes
      for (int j = 0; j < n; j++) assertEquals(-1, SoakPattern.checkStream(landed, (long) (n - 1 - j) * blk, blk, 5, (long) j * blk));
      // blocks left at their source offsets (the mapping ignored) do not check out
      assertEquals(0, SoakPattern.checkStream(src, 0, blk, 5, (long) (n - 1) * blk));
    }
  }

  @Test
  void writerSlotsAndLocalHalvesNeverOverlap() {
    List<long[]> ranges = new ArrayList<>();
    for (int i = 0; i < SoakLayout.NODES; i++)
      for (int w = 0; w < SoakLayout.WORKERS_PER_PEER; w++) ranges.add(new long[] {SoakLayout.targetSlot(i, w), SoakLayout.SLOT});
    ranges.add(new long[] {0, SoakLayout.READ_AREA});
    assertDisjointWithin(ranges, SoakLayout.TARGET_BYTES);
    List<long[]> local = new ArrayList<>();
    for (int p = 0; p < SoakLayout.NODES; p++)
      for (int w = 0; w < SoakLayout.WORKERS_PER_PEER; w++) {
        local.add(new long[] {SoakLayout.localSource(p, w), SoakLayout.SLOT});
        local.add(new long[] {SoakLayout.localDestination(p, w), SoakLayout.SLOT});
      }
    assertDisjointWithin(local, SoakLayout.LOCAL_BYTES);
    for (long size : SoakLayout.SIZES) assertTrue(size <= SoakLayout.SLOT && size % (8L * SoakLayout.BATCH_BLOCKS) == 0, "size " + size);
  }

  private static void assertDisjointWithin(List<long[]> ranges, long limit) {
    for (int i = 0; i < ranges.size(); i++) {
      long[] r = ranges.get(i);
      assertTrue(r[0] >= 0 && r[0] + r[1] <= limit, "range " + r[0] + "+" + r[1] + " outside " + limit);
      for (int j = i + 1; j < ranges.size(); j++) {
        long[] o = ranges.get(j);
        assertTrue(r[0] + r[1] <= o[0] || o[0] + o[1] <= r[0], "ranges overlap: " + r[0] + "+" + r[1] + " and " + o[0] + "+" + o[1]);
      }
    }
  }

  @Test
  void notificationCheckCountsLandedOnceAndMissingAsLost() throws Exception {
    try (Arena arena = Arena.ofShared();
         IoEngine initiator = IoEngine.create("soak-check-i-" + ProcessHandle.current().pid(), new IoEngineConfig("127.0.0.1", 0));
         IoEngine target = IoEngine.create("soak-check-t-" + ProcessHandle.current().pid(), new IoEngineConfig("127.0.0.1", 0))) {
      initiator.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      target.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      initiator.registerRemoteEngine(target.engineDesc());
      target.registerRemoteEngine(initiator.engineDesc());
      MemoryDesc src = initiator.registerMemory(arena.allocate(8192, 4096));
      MemoryDesc dst = target.registerMemory(arena.allocate(8192, 4096));
      List<String> events = new ArrayList<>();
      NotificationChecker c = new NotificationChecker(target, ProcessHandle.current().pid(), events::add);
      long uid = (77L << 32) | 1;
      TransferStatus st = initiator.write(src, 0, dst, 0, 4096, uid);
      assertTrue(st.await(Duration.ofSeconds(30)) && st.succeeded(), "write: " + st.code() + " " + st.message());
      long never = (77L << 32) | 2;
      c.expect(initiator.key(), ProcessHandle.current().pid(), true, new long[] {uid, never});
      c.expect(initiator.key(), ProcessHandle.current().pid() + 1, true, new long[] {3}); // another incarnation's
      long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      do {
        c.tick();
        Thread.sleep(100);
      } while (!c.idle() && System.nanoTime() < end);
      assertTrue(c.idle(), c.line());
      assertTrue(c.line().startsWith("NOTIF ok=1 lost=1 dup=0 wrong=0 stale=1 "), c.line());
      assertEquals(List.of("NOTIF-LOST from=" + initiator.key() + " uid=" + never), events);

      // a notification recorded again after it was popped is a duplicate
      NotificationChecker d = new NotificationChecker(target, ProcessHandle.current().pid(), events::add);
      long twice = (77L << 32) | 4;
      TransferStatus w1 = initiator.write(src, 0, dst, 0, 64, twice);
      assertTrue(w1.await(Duration.ofSeconds(30)) && w1.succeeded());
      d.expect(initiator.key(), ProcessHandle.current().pid(), true, new long[] {twice});
      d.tick(); // popped once
      TransferStatus w2 = initiator.write(src, 0, dst, 0, 64, twice);
      assertTrue(w2.await(Duration.ofSeconds(30)) && w2.succeeded());
      end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      do {
        d.tick();
        Thread.sleep(100);
      } while (!d.idle() && System.nanoTime() < end);
      assertTrue(d.line().startsWith("NOTIF ok=1 lost=0 dup=1 "), d.line());
    }
  }
}
