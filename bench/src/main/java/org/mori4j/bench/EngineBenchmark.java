package org.mori4j.bench;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineSession;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TransferStatus;

/**
 * Measures mori4j rows the way MORI's benchmark does: per iteration, issue {@code batchSize} transfers of
 * {@code msgSize} bytes (one {@code batchWrite}/{@code batchRead} call with {@code --enable-batch-transfer},
 * otherwise one call per block; through an {@link IoEngineSession} with {@code --enable-sess}), wait for all of
 * them, and record the iteration's wall time. Everything an iteration needs (offset arrays, status slots,
 * argument lists) is built before the timed loop so that the loop measures the engine, not the benchmark.
 * After the measured iterations each row checks a sample of the moved bytes and throws
 * {@link IntegrityException} if any is wrong: a fast wrong answer is not a result.
 */
public final class EngineBenchmark {
  /** Bytes checked at the head and at the tail of each sampled block. */
  static final int SAMPLE_BYTES = 256;

  /** Direction of the measured transfers. */
  public enum Op { READ, WRITE }

  /** A wrong byte in the integrity sample of a row. */
  public static final class IntegrityException extends RuntimeException {
    public IntegrityException(String message) {
      super(message);
    }
  }

  /** A transfer of the benchmark did not succeed. */
  public static final class TransferFailedException extends RuntimeException {
    public TransferFailedException(String message) {
      super(message);
    }
  }

  private final IoEngine engine;
  private final MemoryDesc local;
  private final BenchMemory localMem;
  private final MemoryDesc remote;
  private final MemoryDesc scratch;
  private final BenchMemory scratchMem;
  private final IoEngineSession session;
  private final Op op;
  private boolean reversedBlocks;
  private final boolean batchCall;
  private long rowSeed = System.nanoTime();

  /**
   * @param local      the registered local buffer (host or device memory)
   * @param remote     the target's buffer
   * @param scratch    a small registered local buffer (at least 2 x {@link #SAMPLE_BYTES}) for reading samples
   *                   back after writes
   * @param session    the session to use, or null for engine-level calls
   * @param batchCall  one batch call per iteration instead of one call per block
   */
  public EngineBenchmark(IoEngine engine, BenchMemory local, MemoryDesc remote, BenchMemory scratch,
                         IoEngineSession session, Op op, boolean batchCall) {
    this.engine = engine;
    this.local = local.desc();
    this.localMem = local;
    this.remote = remote;
    this.scratch = scratch.desc();
    this.scratchMem = scratch;
    this.session = session;
    this.op = op;
    this.batchCall = batchCall;
  }

  /** Lists each batch's blocks from the last slot to the first, so that the engine cannot join them. */
  public EngineBenchmark reversedBlocks(boolean on) {
    this.reversedBlocks = on;
    return this;
  }

  /** Bytes both sides can address: blocks cycle over this many bytes. */
  public long capacity() {
    return Math.min(local.size(), remote.size());
  }

  /**
   * Runs one point: warm-up (at least {@code warmup} iterations and at least {@code warmupNanos}, so that the
   * JIT has compiled the transfer path before timing starts), measured iterations, integrity check.
   */
  public ResultRow run(SweepPlan.Point p, int iters, int warmup, long warmupNanos) {
    return ResultRow.fromLatencies(p.msgSize(), p.batchSize(), latencies(p, iters, warmup, warmupNanos));
  }

  /** {@link #run}'s measurement, as the iterations' wall times in nanoseconds (a caller pools several runs into one row). */
  public long[] latencies(SweepPlan.Point p, int iters, int warmup, long warmupNanos) {
    long msg = p.msgSize();
    int batch = p.batchSize();
    long[] offsets = SweepPlan.offsets(msg, batch, capacity(), reversedBlocks);
    int slots = SweepPlan.slots(msg, batch, capacity());
    long used = slots * msg;
    long seed = ++rowSeed * 0x2545F4914F6CDD1DL;
    prepare(used, seed, slots, msg);

    Iteration it = new Iteration(offsets, msg);
    long warmStart = System.nanoTime();
    for (int i = 0; i < warmup || System.nanoTime() - warmStart < warmupNanos; i++) it.run();
    long[] lat = new long[iters];
    long[] starts = IterationLog.on() ? new long[iters] : null;
    long epochMillis = System.currentTimeMillis(), nanosRef = System.nanoTime();
    for (int i = 0; i < iters; i++) {
      long t0 = System.nanoTime();
      it.run();
      lat[i] = System.nanoTime() - t0;
      if (starts != null) starts[i] = t0;
    }
    if (starts != null) IterationLog.write(msg, batch, starts, lat, epochMillis, nanosRef);
    verify(p, seed, slots, msg);
    return lat;
  }

  /**
   * Runs {@code points} in order, one row each, with the same iteration counts; {@code afterRow} runs after
   * every row (a caller checks there that its target is still alive). A point whose message does not fit the
   * buffers is refused before it starts, naming both sizes.
   */
  public List<ResultRow> sweep(List<SweepPlan.Point> points, int iters, int warmup, long warmupNanos, ProgressBar progress,
                               String label, Runnable afterRow) {
    List<ResultRow> rows = new java.util.ArrayList<>(points.size());
    for (SweepPlan.Point p : points) {
      if (p.msgSize() > capacity())
        throw new IllegalStateException("the target buffer (" + HumanSize.format(remote.size()) + ") is smaller than the message size "
            + HumanSize.format(p.msgSize()) + "; give the target a larger --buffer-size");
      progress.show(label + HumanSize.format(p.msgSize()) + " x " + p.batchSize());
      rows.add(run(p, iters, warmup, warmupNanos));
      progress.step();
      afterRow.run();
    }
    return rows;
  }

  /** Puts the row's pattern where the measured transfers read it: the local buffer, or (for reads) the target. */
  private void prepare(long used, long seed, int slots, long msg) {
    localMem.fillPattern(used, seed);
    if (op == Op.WRITE) return;
    // reads must fetch bytes of this row: write the pattern to the target (untimed), then wipe the local copy
    for (int s = 0; s < slots; s++) check(engine.write(local, s * msg, remote, s * msg, msg, engine.allocateTransferUid()).await(), "prepare");
    localMem.zero(used);
  }

  private void verify(SweepPlan.Point p, long seed, int slots, long msg) {
    int[] sampled = slots == 1 ? new int[] {0} : new int[] {0, slots / 2, slots - 1};
    long n = Math.min(msg, SAMPLE_BYTES);
    for (int s : Arrays.stream(sampled).distinct().toArray()) {
      long base = s * msg;
      for (long off : new long[] {base, base + msg - n}) {
        MemorySegment where;
        if (op == Op.WRITE) {
          // the bytes are on the target: fetch them back into the scratch buffer (then to the CPU if it is device memory)
          check(engine.read(scratch, 0, remote, off, n, engine.allocateTransferUid()).await(), "integrity read-back");
          where = scratchMem.sample(0, n);
        } else {
          where = localMem.sample(off, n);
        }
        long bad = DataPattern.firstMismatch(where, 0, off, n, seed);
        if (bad >= 0) {
          long at = off + bad;
          throw new IntegrityException(String.format(
              "data integrity check failed for %s of %d x %d B: byte at buffer offset %d is 0x%02x, expected 0x%02x",
              op.name().toLowerCase(), p.batchSize(), msg, at, where.get(ValueLayout.JAVA_BYTE, bad),
              DataPattern.byteAt(seed, at)));
        }
      }
    }
  }

  private static void check(TransferStatus s, String what) {
    if (!s.succeeded()) throw new TransferFailedException(what + " failed: " + s.code() + " " + s.message());
  }

  /** One iteration's pre-built arguments. */
  private final class Iteration {
    private final long[] offsets;
    private final long[] sizes;
    private final long msg;
    private final TransferStatus[] statuses;
    private final List<MemoryDesc> locals = List.of(local);
    private final List<MemoryDesc> remotes = List.of(remote);
    private final List<long[]> offsetList;
    private final List<long[]> sizeList;
    private final long[] uids = new long[1];

    Iteration(long[] offsets, long msg) {
      this.offsets = offsets;
      this.msg = msg;
      this.sizes = new long[offsets.length];
      Arrays.fill(sizes, msg);
      this.statuses = new TransferStatus[offsets.length];
      this.offsetList = List.<long[]>of(offsets);
      this.sizeList = List.<long[]>of(sizes);
    }

    void run() {
      if (batchCall) {
        if (session != null) {
          long uid = session.allocateTransferUid();
          check((op == Op.WRITE ? session.batchWrite(offsets, offsets, sizes, uid)
              : session.batchRead(offsets, offsets, sizes, uid)).await(), op + " batch");
        } else {
          uids[0] = engine.allocateTransferUid();
          List<TransferStatus> all = op == Op.WRITE
              ? engine.batchWrite(locals, offsetList, remotes, offsetList, sizeList, uids)
              : engine.batchRead(locals, offsetList, remotes, offsetList, sizeList, uids);
          for (TransferStatus s : all) check(s.await(), op + " batch");
        }
        return;
      }
      for (int j = 0; j < offsets.length; j++) {
        long off = offsets[j];
        if (session != null) {
          long uid = session.allocateTransferUid();
          statuses[j] = op == Op.WRITE ? session.write(off, off, msg, uid) : session.read(off, off, msg, uid);
        } else {
          long uid = engine.allocateTransferUid();
          statuses[j] = op == Op.WRITE ? engine.write(local, off, remote, off, msg, uid) : engine.read(local, off, remote, off, msg, uid);
        }
      }
      for (TransferStatus s : statuses) check(s.await(), op.name());
    }
  }

  /**
   * One line naming the path every row of this benchmark takes (the engine's {@code explain} of its local and
   * remote buffers), or why it cannot be said; call it while the engine is open.
   */
  public String pathLine() {
    try {
      return engine.explain(local, remote).summary();
    } catch (org.mori4j.io.IoEngineException e) {
      return "cannot be explained: " + e.getMessage();
    }
  }
}
