package org.mori4j.bench.kv;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.io.kv.KvCacheLayout;
import org.mori4j.io.kv.KvMigration;
import org.mori4j.io.kv.KvTransferPlan;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * kv-bench with several prefill -> decode pairs migrating at once (issue 16, item 3): per request length and mode,
 * every iteration releases all pairs together (push, pull, or a layer-streamed push behind a simulated prefill),
 * then, from the same iterations, every pair's engine moving the same bytes as one contiguous transfer, all at
 * once (stream rows: also one layer through every pair at once, the exposed time's reference); over XGMI the driver's own contiguous copies of every pair run together after each request length. After
 * each row every pair's destination blocks are checked slot by slot ({@code --no-verify} skips it). There is no
 * per-block loop and no plot here (those are the one-pair run's). Rows: {@link KvPairsRow}.
 */
final class KvPairsBench {
  private static final long MIB = 1 << 20;

  private KvPairsBench() {}

  static int run(KvBenchCommand c, KvPairs pairs, GpuRuntime gpu) throws Exception {
    KvModel m = KvModel.preset(c.model);
    boolean xgmi = pairs.xgmi();
    int maxTokens = Arrays.stream(c.tokens).max().orElse(0);
    int maxBlocks = (maxTokens + c.blockTokens - 1) / c.blockTokens;
    int capacity = maxBlocks + maxBlocks / 2;
    KvCacheLayout layout = m.layout(c.blockTokens, capacity);
    long cacheBytes = layout.bufferBytes() * layout.buffers();
    long request = (long) maxBlocks * layout.bytesPerBlock();
    long contiguous = Math.max(MIB, request);
    int n = pairs.size();
    // what this JVM allocates: every pair's prefill cache and region (the decode side's too in one process), and the raw copies' two buffers per pair
    long here = n * (cacheBytes + contiguous) * (c.xgmiSingleProcess ? 2 : 1) + (xgmi ? 2L * n * request : 0);
    if (here / MIB > c.maxMemoryMib)
      return usage(String.format(Locale.ROOT, "%d pairs of caches of %d blocks (%d MiB each) and %d MiB regions need %d MiB in this JVM, over --max-memory %d MiB:"
          + " fewer --tokens or pairs, or a larger --max-memory", n, capacity, cacheBytes / MIB, contiguous / MIB, here / MIB, c.maxMemoryMib));
    String label = xgmi ? (c.xgmiSingleProcess ? "xgmi" : "xgmi-2proc") : "tcp";
    String where = xgmi && c.xgmiSingleProcess ? "every engine in this JVM (direct peer copies)"
        : "prefill engines in the bench's JVM, each decode engine in a JVM of its own" + (xgmi ? " (IPC handles)" : ", loopback");
    System.out.printf("kv-bench, %d pairs at once: %s, %d layers x %d tensors, block %d tokens = %d bytes per tensor, cache %d blocks (%d MiB) per engine; %s%n",
        n, m.name(), m.layers(), m.tensors(), c.blockTokens, layout.blockBytes(), capacity, cacheBytes / MIB, where);
    for (KvPairs.Pair p : pairs.pairs()) System.out.println("  pair " + p.index() + ": " + p.route());
    if (pairs.sharesDevice())
      System.out.println("  a GPU carries two engines of one side or a pair stays within one GPU: copies share a device's memory bandwidth;"
          + " these figures say nothing about NVLink/XGMI between GPUs");
    System.out.flush();

    List<KvPairsRow> rows = new ArrayList<>();
    try (KvPairsRun run = KvPairsRun.start(pairs, m, c.blockTokens, capacity, contiguous, xgmi ? gpu : null, c.xgmiSingleProcess, c.warmup, c.iters)) {
      Random rnd = new Random(42);
      long seed = 1;
      for (int t : c.tokens) {
        int blocks = (t + c.blockTokens - 1) / c.blockTokens;
        int[][] local = new int[n][], remote = new int[n][];
        int[] transfers = new int[n];
        long bytes = 0;
        for (int k = 0; k < n; k++) {
          local[k] = c.allocate(capacity, blocks, rnd);
          remote[k] = c.allocate(capacity, blocks, rnd);
          KvTransferPlan plan = KvTransferPlan.build(layout, local[k], run.remote(k).layout(), remote[k], 0, layout.layers());
          transfers[k] = plan.transfers();
          bytes = plan.bytes();
        }
        List<KvPairsRow> forLength = new ArrayList<>();
        for (String mode : c.modes) {
          KvPairsRow row = row(c, run, m, t, mode, local, remote, transfers, bytes, blocks, label, where, seed++);
          forLength.add(row);
          System.out.println(row.line());
          System.out.flush();
        }
        if (xgmi) {
          KvBenchRuns.Stats raw;
          String series;
          try (KvPairsRawCopies copies = new KvPairsRawCopies(gpu, pairs, bytes)) {
            long[][] it = copies.run(run.pool, c.warmup, c.iters);
            String bad = copies.check();
            if (bad != null) {
              System.err.println("kv-bench: " + bad);
              return 1;
            }
            raw = slowest(it, bytes * n);
            series = copies.series();
          }
          System.out.printf(Locale.ROOT, "  %s, every pair at once, %d bytes each: slowest pair p50 %.0f us, aggregate %.2f GB/s%n", series, bytes,
              raw.p50Nanos() / 1e3, raw.avgBwGBps());
          forLength.replaceAll(r -> new KvPairsRow(r.model(), r.tokens(), r.mode(), r.backend(), r.where(), r.pairs(), r.bytesPerPair(), r.blocks(),
              r.slowest(), r.engineContiguous(), raw, series, r.exposedSlowest(), r.layerSlowest(), r.layerComputeUs(), r.verifiedSlots(), r.perPair()));
        }
        rows.addAll(forLength);
      }
    }
    System.out.println();
    System.out.println(KvPairsRow.table(rows));
    if (c.json != null) {
      Files.writeString(c.json, KvPairsRow.json(rows));
      System.out.println("wrote " + c.json);
    }
    return 0;
  }

  private static KvPairsRow row(KvBenchCommand c, KvPairsRun run, KvModel m, int tokens, String mode, int[][] local, int[][] remote, int[] transfers,
                                long bytes, int blocks, String label, String where, long seed) throws Exception {
    int n = run.pairs.size();
    boolean pull = mode.equals("pull"), stream = mode.equals("stream");
    KvMigration.Mode km = stream ? KvMigration.Mode.STREAM : pull ? KvMigration.Mode.PULL : KvMigration.Mode.PUSH;
    int[][] src = pull ? remote : local, dst = pull ? local : remote;
    long compute = 0;
    if (stream) {
      compute = switch (c.layerCompute) {
        case "model" -> m.prefillNanosPerLayer(tokens, c.prefillTflops);
        // one layer via sendLayers on pair 0's idle link, as the one-pair run measures it
        case "link" -> (long) (1.25 * run.runs.getFirst().oneLayer(run.caches.getFirst(), run.remote(0), src[0], dst[0], "layer-" + tokens).p50Nanos());
        default -> Long.parseLong(c.layerCompute) * 1000;
      };
    }
    long[][] it = new long[c.iters][], contig = new long[c.iters][], exposed = stream ? new long[c.iters][] : null,
        layer = stream ? new long[c.iters][] : null;
    for (int i = -c.warmup; i < c.iters; i++) {
      long[] ct = run.contiguous(bytes, pull);
      String req = mode + "-" + tokens + "-" + i;
      long[] mt;
      if (stream) {
        long[][] s = run.stream(src, dst, req, compute);
        mt = s[0];
        // the reference: one layer through every pair at once, after the same idle gap as the stream's last layer
        LockSupport.parkNanos(compute);
        long[] one = run.oneLayer(src, dst, req + "-layer");
        if (i >= 0) {
          exposed[i] = s[1];
          layer[i] = one;
        }
      } else {
        mt = run.migrate(src, dst, km, req);
      }
      if (i >= 0) {
        it[i] = mt;
        contig[i] = ct;
      }
    }
    int checked = c.verify ? run.verify(src, dst, km, "check-" + mode + "-" + tokens, seed) : 0;
    List<KvPairsRow.PerPair> per = new ArrayList<>();
    for (int k = 0; k < n; k++)
      per.add(new KvPairsRow.PerPair(run.pairs.pairs().get(k), transfers[k], column(it, k, bytes), column(contig, k, bytes),
          exposed == null ? null : column(exposed, k, bytes), layer == null ? null : column(layer, k, bytes / m.layers())));
    return new KvPairsRow(m.name(), tokens, mode, label, where, run.pairs, bytes, blocks, slowest(it, bytes * n), slowest(contig, bytes * n), null, null,
        exposed == null ? null : slowest(exposed, bytes * n), layer == null ? null : slowest(layer, bytes * n / m.layers()), compute / 1e3, checked, per);
  }

  /** Per iteration the slowest pair's time, with {@code bytes} (every pair's) moved in it. */
  static KvBenchRuns.Stats slowest(long[][] byIteration, long bytes) {
    long[] s = new long[byIteration.length];
    for (int i = 0; i < s.length; i++) s[i] = Arrays.stream(byIteration[i]).max().orElseThrow();
    return new KvBenchRuns.Stats(bytes, s);
  }

  private static KvBenchRuns.Stats column(long[][] byIteration, int k, long bytes) {
    long[] s = new long[byIteration.length];
    for (int i = 0; i < s.length; i++) s[i] = byIteration[i][k];
    return new KvBenchRuns.Stats(bytes, s);
  }

  private static int usage(String msg) {
    System.err.println("kv-bench: " + msg);
    return 2;
  }
}
