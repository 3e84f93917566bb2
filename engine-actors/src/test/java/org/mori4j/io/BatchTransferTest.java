package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * batchWrite/batchRead: 1,024 scattered blocks of mixed sizes in shuffled order, several (local, remote)
 * pairs in one call, contiguous blocks (which the engine merges), and per-entry failure isolation. Every
 * byte of both buffers is compared with a shadow copy that the test updates block by block.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BatchTransferTest {
  private static final long MiB = 1L << 20;
  private EnginePair p;
  private final Arena arena = Arena.ofShared();
  /** Three local and three remote registrations of different sizes ([0] is the pair's own). */
  private final List<MemorySegment> localBufs = new ArrayList<>(), remoteBufs = new ArrayList<>();
  private final List<MemoryDesc> locals = new ArrayList<>(), remotes = new ArrayList<>();

  @BeforeAll
  void start() {
    p = new EnginePair(24 * MiB);
    localBufs.add(p.localBuf);
    remoteBufs.add(p.remoteBuf);
    locals.add(p.local);
    remotes.add(p.remote);
    long[] extra = {2 * MiB + 5, 3 * MiB + 4091};
    for (long size : extra) {
      MemorySegment l = arena.allocate(size, 8), r = arena.allocate(size + 17, 8);
      localBufs.add(l);
      remoteBufs.add(r);
      locals.add(p.initiator.registerMemory(l));
      remotes.add(p.target.registerMemory(r));
    }
  }

  @AfterAll
  void stop() {
    if (p != null) p.close();
    arena.close();
  }

  /** Blocks of one entry: local offsets, remote offsets and sizes. */
  record Blocks(long[] lo, long[] ro, long[] sizes) {
    long total() {
      long t = 0;
      for (long s : sizes) t += s;
      return t;
    }
  }

  /**
   * {@code n} blocks, none touching another on either side, placed in shuffled slots (so neither side is in
   * ascending order), with sizes from 1 byte to almost a slot.
   */
  static Blocks scattered(int n, long localSize, long remoteSize, long seed) {
    Random r = new Random(seed);
    long slot = Math.min(localSize, remoteSize) / n;
    assertTrue(slot >= 16, "regions too small for " + n + " blocks");
    List<Integer> ls = new ArrayList<>(), rs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ls.add(i);
      rs.add(i);
    }
    Collections.shuffle(ls, r);
    Collections.shuffle(rs, r);
    long[] lo = new long[n], ro = new long[n], sizes = new long[n];
    long[] palette = {1, 2, 3, 7, 8, 63, 64, 511, 4095, 4096, 4097};
    for (int i = 0; i < n; i++) {
      long max = slot - 1; // leave a gap so no two blocks touch
      long size = r.nextInt(4) == 0 ? Math.min(max, palette[r.nextInt(palette.length)]) : 1 + (long) (r.nextDouble() * (max - 1));
      sizes[i] = size;
      lo[i] = ls.get(i) * slot + r.nextLong(slot - size);
      ro[i] = rs.get(i) * slot + r.nextLong(slot - size);
    }
    return new Blocks(lo, ro, sizes);
  }

  private static MemorySegment snapshot(Arena a, MemorySegment s) {
    MemorySegment c = a.allocate(s.byteSize(), 8);
    c.copyFrom(s);
    return c;
  }

  private static void apply(MemorySegment src, MemorySegment shadowDst, long[] srcOff, long[] dstOff, long[] sizes) {
    for (int i = 0; i < sizes.length; i++) MemorySegment.copy(src, srcOff[i], shadowDst, dstOff[i], sizes[i]);
  }

  @Test
  void batchWriteOf1024ScatteredBlocksLandsEveryByte() {
    Blocks b = scattered(1024, p.local.size(), p.remote.size(), 1);
    randomize(p.localBuf, 11);
    randomize(p.remoteBuf, 12);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment expect = snapshot(a, p.remoteBuf), src = snapshot(a, p.localBuf);
      long uid = p.initiator.allocateTransferUid();
      List<TransferStatus> st = p.initiator.batchWrite(List.of(p.local), List.of(b.lo()), List.of(p.remote), List.of(b.ro()),
          List.of(b.sizes()), new long[] {uid});
      assertEquals(1, st.size());
      assertSucceeds(st.get(0), "batch write");
      apply(p.localBuf, expect, b.lo(), b.ro(), b.sizes());
      assertSameBytes(expect, p.remoteBuf, "remote after batch write");
      assertSameBytes(src, p.localBuf, "local (source) after batch write");
    }
  }

  @Test
  void batchReadOf1024ScatteredBlocksLandsEveryByte() {
    Blocks b = scattered(1024, p.local.size(), p.remote.size(), 2);
    randomize(p.localBuf, 21);
    randomize(p.remoteBuf, 22);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment expect = snapshot(a, p.localBuf), src = snapshot(a, p.remoteBuf);
      List<TransferStatus> st = p.initiator.batchRead(List.of(p.local), List.of(b.lo()), List.of(p.remote), List.of(b.ro()),
          List.of(b.sizes()), new long[] {p.initiator.allocateTransferUid()});
      assertEquals(1, st.size());
      assertSucceeds(st.get(0), "batch read");
      apply(p.remoteBuf, expect, b.ro(), b.lo(), b.sizes());
      assertSameBytes(expect, p.localBuf, "local after batch read");
      assertSameBytes(src, p.remoteBuf, "remote (source) after batch read");
    }
  }

  @Test
  void batchWithThreeLocalAndThreeRemoteRegistrationsMovesEachPairIndependently() {
    // entry i writes local[i] into remote[(i + 1) % 3]; then the same blocks are read back into fresh bytes
    int n = 3;
    List<MemoryDesc> ld = new ArrayList<>(), rd = new ArrayList<>();
    List<long[]> lo = new ArrayList<>(), ro = new ArrayList<>(), sz = new ArrayList<>();
    List<Blocks> blocks = new ArrayList<>();
    long[] uids = new long[n];
    for (int i = 0; i < n; i++) {
      int j = (i + 1) % n;
      randomize(localBufs.get(i), 300 + i);
      randomize(remoteBufs.get(j), 400 + j);
      Blocks b = scattered(300 + 100 * i, locals.get(i).size(), remotes.get(j).size(), 30 + i);
      blocks.add(b);
      ld.add(locals.get(i));
      rd.add(remotes.get(j));
      lo.add(b.lo());
      ro.add(b.ro());
      sz.add(b.sizes());
      uids[i] = p.initiator.allocateTransferUid();
    }
    try (Arena a = Arena.ofConfined()) {
      List<MemorySegment> expect = new ArrayList<>();
      for (int i = 0; i < n; i++) expect.add(snapshot(a, remoteBufs.get((i + 1) % n)));
      List<TransferStatus> st = p.initiator.batchWrite(ld, lo, rd, ro, sz, uids);
      assertEquals(n, st.size());
      assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(st, Duration.ofSeconds(60)), st.toString());
      for (int i = 0; i < n; i++) {
        apply(localBufs.get(i), expect.get(i), blocks.get(i).lo(), blocks.get(i).ro(), blocks.get(i).sizes());
        assertSameBytes(expect.get(i), remoteBufs.get((i + 1) % n), "remote " + (i + 1) % n + " after entry " + i);
      }

      // read them back into freshly randomized locals
      List<MemorySegment> localExpect = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        randomize(localBufs.get(i), 500 + i);
        localExpect.add(snapshot(a, localBufs.get(i)));
        uids[i] = p.initiator.allocateTransferUid();
      }
      List<TransferStatus> rst = p.initiator.batchRead(ld, lo, rd, ro, sz, uids);
      assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(rst, Duration.ofSeconds(60)), rst.toString());
      for (int i = 0; i < n; i++) {
        apply(remoteBufs.get((i + 1) % n), localExpect.get(i), blocks.get(i).ro(), blocks.get(i).lo(), blocks.get(i).sizes());
        assertSameBytes(localExpect.get(i), localBufs.get(i), "local " + i + " after read-back");
      }
    }
  }

  @Test
  void contiguousBlocksAreMovedCorrectly() {
    // 256 blocks of 4 KiB contiguous on both sides (merged into one by the engine), then 64 blocks contiguous
    // only on the local side (not mergeable), then runs of contiguous blocks separated by gaps
    randomize(p.localBuf, 61);
    randomize(p.remoteBuf, 62);
    int n = 256;
    long[] lo1 = new long[n], ro1 = new long[n], s1 = new long[n];
    for (int i = 0; i < n; i++) {
      lo1[i] = 100 + i * 4096L;
      ro1[i] = 5003 + i * 4096L;
      s1[i] = 4096;
    }
    long[] lo2 = new long[64], ro2 = new long[64], s2 = new long[64];
    for (int i = 0; i < 64; i++) {
      lo2[i] = 2 * MiB + i * 1000L;
      ro2[i] = 4 * MiB + (63 - i) * 1000L; // reversed on the remote side
      s2[i] = 1000;
    }
    long[] lo3 = new long[100], ro3 = new long[100], s3 = new long[100];
    for (int i = 0; i < 100; i++) {
      int run = i / 10;
      lo3[i] = 6 * MiB + run * 20_000L + (i % 10) * 777L;
      ro3[i] = 8 * MiB + run * 30_000L + (i % 10) * 777L;
      s3[i] = 777;
    }
    try (Arena a = Arena.ofConfined()) {
      MemorySegment expect = snapshot(a, p.remoteBuf);
      List<TransferStatus> st = p.initiator.batchWrite(List.of(p.local, p.local, p.local), List.of(lo1, lo2, lo3),
          List.of(p.remote, p.remote, p.remote), List.of(ro1, ro2, ro3), List.of(s1, s2, s3), new long[] {1001, 1002, 1003});
      assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(st, Duration.ofSeconds(60)), st.toString());
      apply(p.localBuf, expect, lo1, ro1, s1);
      apply(p.localBuf, expect, lo2, ro2, s2);
      apply(p.localBuf, expect, lo3, ro3, s3);
      assertSameBytes(expect, p.remoteBuf, "remote after contiguous batches");

      MemorySegment localExpect = snapshot(a, p.localBuf);
      randomize(p.remoteBuf, 63);
      st = p.initiator.batchRead(List.of(p.local, p.local, p.local), List.of(lo1, lo2, lo3),
          List.of(p.remote, p.remote, p.remote), List.of(ro1, ro2, ro3), List.of(s1, s2, s3), new long[] {1004, 1005, 1006});
      assertEquals(StatusCode.SUCCESS, p.initiator.waitAll(st, Duration.ofSeconds(60)), st.toString());
      apply(p.remoteBuf, localExpect, ro1, lo1, s1);
      apply(p.remoteBuf, localExpect, ro2, lo2, s2);
      apply(p.remoteBuf, localExpect, ro3, lo3, s3);
      assertSameBytes(localExpect, p.localBuf, "local after contiguous batch reads");
    }
  }

  @Test
  void contiguousBlocksAddingUpToAStripedSizeAreMovedCorrectly() {
    // 17 contiguous blocks of 1 MiB merge into one 17 MiB block, which the TCP backend stripes
    int n = 17;
    long[] lo = new long[n], ro = new long[n], s = new long[n];
    for (int i = 0; i < n; i++) {
      lo[i] = 3 + i * MiB;
      ro[i] = 1 + i * MiB;
      s[i] = MiB;
    }
    randomize(p.localBuf, 71);
    randomize(p.remoteBuf, 72);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment expect = snapshot(a, p.remoteBuf);
      long uid = p.initiator.allocateTransferUid();
      List<TransferStatus> st = p.initiator.batchWrite(List.of(p.local), List.of(lo), List.of(p.remote), List.of(ro),
          List.of(s), new long[] {uid});
      assertSucceeds(st.get(0), "merged batch write");
      apply(p.localBuf, expect, lo, ro, s);
      assertSameBytes(expect, p.remoteBuf, "remote after merged striped batch");
    }
  }

  @Test
  void overlappingSourceBlocksInOneBatchWriteAreEachCopied() {
    // the same local bytes sent to several remote places (overlapping on the source side is allowed)
    randomize(p.localBuf, 81);
    randomize(p.remoteBuf, 82);
    long[] lo = {0, 0, 10, 5}, ro = {1_000_000, 2_000_000, 3_000_000, 4_000_000}, s = {100, 100, 50, 200};
    try (Arena a = Arena.ofConfined()) {
      MemorySegment expect = snapshot(a, p.remoteBuf);
      List<TransferStatus> st = p.initiator.batchWrite(List.of(p.local), List.of(lo), List.of(p.remote), List.of(ro),
          List.of(s), new long[] {77});
      assertSucceeds(st.get(0));
      apply(p.localBuf, expect, lo, ro, s);
      assertSameBytes(expect, p.remoteBuf, "remote");
    }
  }

  @Test
  void badEntryFailsAloneWhileTheOtherEntriesOfTheCallSucceed() {
    randomize(p.localBuf, 91);
    randomize(p.remoteBuf, 92);
    long[] okLo = {0, 10_000}, okRo = {50_000, 70_000}, okS = {1000, 2000};
    long[] badLo = {0, 0}, badRo = {0, p.remote.size()}, badS = {10, 10}; // block 1 starts past the end
    try (Arena a = Arena.ofConfined()) {
      MemorySegment expect = snapshot(a, p.remoteBuf);
      List<TransferStatus> st = p.initiator.batchWrite(List.of(p.local, p.local, p.local), List.of(okLo, badLo, okLo),
          List.of(p.remote, p.remote, p.remote), List.of(okRo, badRo, new long[] {90_000, 110_000}),
          List.of(okS, badS, okS), new long[] {1, 2, 3});
      assertEquals(3, st.size());
      assertRefused(st.get(1), StatusCode.ERR_INVALID_ARGS, "remoteOffsets[1]", String.valueOf(p.remote.size()));
      assertSucceeds(st.get(0), "entry 0");
      assertSucceeds(st.get(2), "entry 2");
      apply(p.localBuf, expect, okLo, okRo, okS);
      apply(p.localBuf, expect, okLo, new long[] {90_000, 110_000}, okS);
      assertSameBytes(expect, p.remoteBuf, "remote: the bad entry moved nothing");
    }
  }

  @Test
  void singleBlockBatchBehavesLikeAPlainTransfer() {
    randomize(p.localBuf, 95);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment expect = snapshot(a, p.remoteBuf);
      List<TransferStatus> st = p.initiator.batchWrite(List.of(p.local), List.of(new long[] {123}), List.of(p.remote),
          List.of(new long[] {456}), List.of(new long[] {7890}), new long[] {5});
      assertSucceeds(st.get(0));
      MemorySegment.copy(p.localBuf, 123, expect, 456, 7890);
      assertSameBytes(expect, p.remoteBuf, "remote");
    }
  }

  @Test
  void callerMayReuseItsOffsetArraysAfterTheCallReturns() {
    // the engine must not read the caller's arrays after the call: overwrite them at once
    randomize(p.localBuf, 97);
    randomize(p.remoteBuf, 98);
    long[] lo = new long[512], ro = new long[512], s = new long[512];
    for (int i = 0; i < 512; i++) {
      lo[i] = i * 2000L;
      ro[i] = 3 * MiB + (511 - i) * 2000L;
      s[i] = 1500;
    }
    long[] loC = lo.clone(), roC = ro.clone(), sC = s.clone();
    try (Arena a = Arena.ofConfined()) {
      MemorySegment expect = snapshot(a, p.remoteBuf);
      List<TransferStatus> st = p.initiator.batchWrite(List.of(p.local), List.of(lo), List.of(p.remote), List.of(ro),
          List.of(s), new long[] {6});
      java.util.Arrays.fill(lo, 0);
      java.util.Arrays.fill(ro, 0);
      java.util.Arrays.fill(s, 1);
      assertSucceeds(st.get(0));
      apply(p.localBuf, expect, loC, roC, sC);
      assertSameBytes(expect, p.remoteBuf, "remote");
    }
  }
}
