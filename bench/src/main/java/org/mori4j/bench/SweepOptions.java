package org.mori4j.bench;

import java.util.Locale;
import java.util.function.Function;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineSession;
import org.mori4j.io.MemoryDesc;
import picocli.CommandLine.Option;

/**
 * MORI's benchmark flags for what is measured (operation, sizes, batches, call style, iterations), shared by
 * {@code bench} and {@code cluster-bench} so that both take the same flags with the same defaults and checks,
 * and their tables mean the same thing. Where the target comes from (a child JVM, {@code --peer}, a cluster
 * member) is each command's own business.
 */
public final class SweepOptions {
  @Option(names = "--op-type", defaultValue = "write", converter = BenchCommand.OpConverter.class, description = "read or write (default: ${DEFAULT-VALUE}).")
  EngineBenchmark.Op op;

  @Option(names = "--buffer-size", defaultValue = "4096", converter = SizeConverter.class, description = "Message size per transfer, e.g. 4096 or 1M (default: ${DEFAULT-VALUE}).")
  long bufferSize;

  @Option(names = "--all", description = "Sweep message sizes from --sweep-start-size to --sweep-max-size, doubling.")
  boolean all;

  @Option(names = "--sweep-start-size", defaultValue = "8", converter = SizeConverter.class, description = "First size of --all (default: ${DEFAULT-VALUE}).")
  long sweepStart;

  @Option(names = "--sweep-max-size", defaultValue = "64M", converter = SizeConverter.class, description = "Last size of --all (default: ${DEFAULT-VALUE}).")
  long sweepMax;

  @Option(names = "--all-batch", description = "Also sweep batch sizes 1, 2, 4, ... up to --transfer-batch-size.")
  boolean allBatch;

  @Option(names = "--transfer-batch-size", defaultValue = "128", description = "Transfers per iteration (default: ${DEFAULT-VALUE}).")
  int batchSize;

  @Option(names = "--enable-batch-transfer", description = "Send each iteration's transfers as one batch call.")
  boolean batchTransfer;

  @Option(names = "--enable-sess", description = "Transfer through an IoEngineSession.")
  boolean session;

  @Option(names = "--iters", defaultValue = "128", description = "Measured iterations per row (default: ${DEFAULT-VALUE}).")
  int iters;

  @Option(names = "--warmup-iters", defaultValue = "16", description = "Unmeasured iterations before each row (default: ${DEFAULT-VALUE}).")
  int warmupIters;

  @Option(names = "--warmup-ms", defaultValue = "1000", description = "Least warm-up time per row in ms, besides --warmup-iters, "
      + "so that rows are measured on JIT-compiled code; the baselines get the same (default: ${DEFAULT-VALUE}).")
  long warmupMs;

  @Option(names = "--block-order", defaultValue = "sequential", paramLabel = "sequential|reversed",
      description = "Order of a batch's blocks in the buffers. sequential (MORI's layout): neighbours are contiguous and the engine "
          + "joins them into one transfer; reversed: the same slots from last to first, so every block moves on its own "
          + "(default: ${DEFAULT-VALUE}).")
  String blockOrder;

  @Option(names = "--max-buffer-size", defaultValue = "256M", converter = SizeConverter.class,
      description = "Cap on each side's buffer; bigger batches reuse slots (default: ${DEFAULT-VALUE}).")
  long maxBuffer;

  /** Checks the flags picocli's types cannot and builds the plan; {@code usage} makes the error for a bad flag. */
  SweepPlan plan(Function<String, ? extends RuntimeException> usage) {
    if (iters < 1) throw usage.apply("--iters must be at least 1: " + iters);
    if (warmupIters < 0) throw usage.apply("--warmup-iters must not be negative: " + warmupIters);
    if (warmupMs < 0) throw usage.apply("--warmup-ms must not be negative: " + warmupMs);
    if (!blockOrder.equals("sequential") && !blockOrder.equals("reversed"))
      throw usage.apply("--block-order must be sequential or reversed: " + blockOrder);
    try {
      return SweepPlan.of(bufferSize, batchSize, all, allBatch, sweepStart, sweepMax, maxBuffer);
    } catch (IllegalArgumentException e) {
      throw usage.apply(e.getMessage());
    }
  }

  /**
   * The benchmark these flags describe from {@code local} to {@code remote}; with {@code --enable-sess} it opens
   * the session, and fails when no backend can serve one between the two.
   */
  EngineBenchmark benchmark(IoEngine engine, BenchMemory local, MemoryDesc remote, BenchMemory scratch) {
    IoEngineSession sess = null;
    if (session) {
      sess = engine.createSession(local.desc(), remote).orElseThrow(() ->
          new IllegalStateException("no backend can serve a session between " + local.desc() + " and " + remote));
    }
    return new EngineBenchmark(engine, local, remote, scratch, sess, op, batchTransfer).reversedBlocks(reversedBlocks());
  }

  boolean reversedBlocks() {
    return blockOrder.equals("reversed");
  }

  long warmupNanos() {
    return warmupMs * 1_000_000L;
  }

  /** The table's title: what was measured, over which memory. */
  String title(String memory) {
    return String.format(Locale.ROOT, "mori4j %s over tcp, %s (batch-transfer %s, session %s%s)",
        op.name().toLowerCase(Locale.ROOT), memory, batchTransfer ? "on" : "off", session ? "on" : "off",
        reversedBlocks() ? ", blocks reversed" : "");
  }
}
