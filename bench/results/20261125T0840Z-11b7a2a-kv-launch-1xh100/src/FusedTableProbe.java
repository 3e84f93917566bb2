package org.mori4j.transport.xgmi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * VM check of the fused table build, not a test: the Llama-3-70B migration's 80 entries of 512 scattered 32 KiB blocks
 * in the chunks kv-bench's fused rows launch (1, 2, 4, 8, 16, 32, 17 entries), built by the per-block accessor loop
 * that 00ad5cb replaced (copied here) and by {@link FusedTable}, alternating, into an ordinary native buffer (the
 * device build writes pinned memory). Prints the median per-migration time of each and checks both give the same
 * table. Usage: java -cp transport/target/classes:OUT org.mori4j.transport.xgmi.FusedTableProbe [rounds [warm-up rounds]]. Note: the
 * two ways alternate in one JVM, so each sees the other's warm-up of the shared accessors; a JVM per way would be cleaner.
 */
public final class FusedTableProbe {
  static final class Op extends TransferOp {
    @Override public void transferSucceeded() {}
    @Override public void transferFailed(TransportError e, String m) {}
  }

  public static void main(String[] a) {
    int rounds = a.length > 0 ? Integer.parseInt(a[0]) : 3000;
    // rounds measured: from `warm` on (default: the second half); kv-bench's fused rows make 30 warm-up and 20 timed
    // migrations per JVM, so "50 30" is what the JIT had seen there
    int warm = a.length > 1 ? Integer.parseInt(a[1]) : rounds / 2;
    int entries = 80, n = 512;
    long block = 32 << 10;
    java.util.Random r = new java.util.Random(1);
    Op[] ops = new Op[entries];
    long[] bases = new long[entries];
    for (int e = 0; e < entries; e++) {
      long[] lo = new long[n], ro = new long[n], sz = new long[n];
      for (int i = 0; i < n; i++) {
        lo[i] = (long) r.nextInt(4608) * block;
        ro[i] = (long) r.nextInt(4608) * block;
        sz[i] = block;
      }
      ops[e] = new Op();
      ops[e].initBatch(TransferOp.WRITE, LocalRegion.gpu(e + 1, 1, 0x7f0000000000L + e * (1L << 30), 1L << 30, 0), lo, null, 1000 + e, 7,
          0x7e0000000000L, ro, sz, e);
      bases[e] = 0x7e0000000000L + e * (1L << 30);
    }
    int[] chunks = {1, 2, 4, 8, 16, 32, 17};
    MemorySegment table = Arena.global().allocate(16L * 32 * n, 8), check = Arena.global().allocate(16L * 32 * n, 8);
    FusedTable ft = new FusedTable();
    long[] scratch = new long[2 * 32 * n];
    long[] oldT = new long[rounds], newT = new long[rounds];
    for (int round = 0; round < rounds; round++) {
      for (int pass = 0; pass < 2; pass++) {
        boolean old = (round + pass) % 2 == 0;
        long t0 = System.nanoTime();
        int first = 0;
        for (int c : chunks) {
          Op[] part = Arrays.copyOfRange(ops, first, first + c);
          long[] pb = Arrays.copyOfRange(bases, first, first + c);
          int blocks = c * n;
          if (old) oldLoop(part, pb, c, blocks, scratch, table);
          else ft.write(part, pb, c, blocks, true, table, 16L * blocks);
          first += c;
        }
        long dt = System.nanoTime() - t0;
        if (old) oldT[round] = dt; else newT[round] = dt;
      }
    }
    // same table both ways (the last chunk)
    Op[] last = Arrays.copyOfRange(ops, 63, 80);
    long[] lb = Arrays.copyOfRange(bases, 63, 80);
    oldLoop(last, lb, 17, 17 * n, scratch, check);
    ft.write(last, lb, 17, 17 * n, true, table, 16L * 17 * n);
    long mismatch = check.asSlice(0, 16L * 17 * n).mismatch(table.asSlice(0, 16L * 17 * n));
    long[] o = Arrays.copyOfRange(oldT, warm, rounds), w = Arrays.copyOfRange(newT, warm, rounds);
    Arrays.sort(o);
    Arrays.sort(w);
    System.out.printf("per migration (7 fused tables, 40,960 blocks), last %d of %d rounds: old loop p50 %.1f us"
        + " p90 %.1f us; FusedTable p50 %.1f us p90 %.1f us; tables equal: %s%n", o.length, rounds, o[o.length / 2] / 1e3, o[o.length * 9 / 10] / 1e3,
        w[w.length / 2] / 1e3, w[w.length * 9 / 10] / 1e3, mismatch == -1);
  }

  /** The per-block loop DeviceTransfers.issueFused used before 00ad5cb. */
  static void oldLoop(TransferOp[] ops, long[] bases, int count, int blocks, long[] t, MemorySegment table) {
    int at = 0;
    for (int k = 0; k < count; k++) {
      TransferOp op = ops[k];
      boolean write = op.kind() == TransferOp.WRITE;
      long localBase = op.local().address();
      long srcBase = write ? localBase : bases[k], dstBase = write ? bases[k] : localBase;
      int n = op.blockCount();
      for (int i = 0; i < n; i++, at++) {
        long lo = op.localOffset(i), ro = op.remoteOffset(i);
        t[at] = srcBase + (write ? lo : ro);
        t[blocks + at] = dstBase + (write ? ro : lo);
      }
    }
    MemorySegment.copy(t, 0, table, ValueLayout.JAVA_LONG, 0, 2 * blocks);
  }
}
