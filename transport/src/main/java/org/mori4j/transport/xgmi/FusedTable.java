package org.mori4j.transport.xgmi;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.mori4j.transport.TransferOp;

/**
 * Writes the block table of one fused launch ({@link DeviceTransfers#issueFused}): the absolute source addresses of
 * every member's blocks in call order, then their destination addresses, then their sizes when they differ, so that
 * one kernel with zero bases moves all members. The table is built in a reused Java array and copied into the slot's
 * pinned buffer at once: element stores into the native segment (bounds, alignment and liveness checked per store)
 * took ~15 ms for a 40,960-block KV migration on an H100 host. Each member's offsets go into the array with the op's
 * bulk copies and get their base added by a loop over the array alone, fast from the first call: a per-block loop
 * through the op's accessors, not yet compiled after a benchmark JVM's ~350 fused issues (a VM check says so), made
 * the table part of a fused migration's worker issue 158-162 us per launch (~5,900 blocks) on 1x H100, 27-34 us with
 * this; once the JIT has compiled both, the difference is ~15%
 * (bench/results/20261125T0840Z-11b7a2a-kv-launch-1xh100). Whoever holds the worker's turn only.
 */
final class FusedTable {
  private long[] scratch = new long[0];
  /** {@link #scratch} as a segment, the target of the members' bulk copies. */
  private MemorySegment scratchSegment = MemorySegment.ofArray(scratch);

  /**
   * Writes the table of {@code count} members ({@code ops[k]}, its remote base {@code bases[k]}; {@code blocks} blocks
   * in all) into {@code table}, {@code bytes} long ({@link GatherKernel#tableBytes}); sizes only when not
   * {@code sameSize}.
   */
  void write(TransferOp[] ops, long[] bases, int count, int blocks, boolean sameSize, MemorySegment table, long bytes) {
    int entries = (int) (bytes / 8);
    if (scratch.length < entries) {
      scratch = new long[Math.max(entries, scratch.length * 2)];
      scratchSegment = MemorySegment.ofArray(scratch);
    }
    long[] t = scratch;
    int at = 0;
    for (int k = 0; k < count; k++) {
      TransferOp op = ops[k];
      boolean write = op.kind() == TransferOp.WRITE;
      long localBase = op.local().address();
      long srcBase = write ? localBase : bases[k], dstBase = write ? bases[k] : localBase;
      int n = op.blockCount();
      if (n == 1) { // a single transfer has no block arrays to copy
        long lo = op.localOffset(0), ro = op.remoteOffset(0);
        t[at] = srcBase + (write ? lo : ro);
        t[blocks + at] = dstBase + (write ? ro : lo);
        if (!sameSize) t[2 * blocks + at] = op.blockSize(0);
      } else {
        op.copyBlocks(write ? 0 : 1, scratchSegment, 8L * at);
        op.copyBlocks(write ? 1 : 0, scratchSegment, 8L * (blocks + at));
        if (!sameSize) op.copyBlocks(2, scratchSegment, 8L * (2L * blocks + at));
        addBase(t, at, n, srcBase);
        addBase(t, blocks + at, n, dstBase);
      }
      at += n;
    }
    MemorySegment.copy(t, 0, table, ValueLayout.JAVA_LONG, 0, entries);
  }

  /** Adds {@code base} to {@code n} entries of {@code t} from {@code from} (a plain loop the JIT vectorizes). */
  private static void addBase(long[] t, int from, int n, long base) {
    for (int i = from, end = from + n; i < end; i++) t[i] += base;
  }
}
