package org.mori4j.bench.kv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheDesc;
import org.mori4j.io.kv.KvCacheLayout;
import org.mori4j.io.kv.KvMigration;
import org.mori4j.io.kv.KvTransferPlan;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code mori4j kv-bench}: a request's KV blocks between a prefill cache here and a decode cache in a second JVM,
 * on real model layouts, blocks allocated from shuffled free lists on both sides. Per request length and mode
 * (push, pull, layer-streamed push) it prints the migration's p50/p99 time and GB/s beside, in the same run, the
 * same bytes as one contiguous transfer, a naive one-transfer-per-block loop and the engine's single 64 MiB
 * transfer, each timed beside every iteration of the row; streaming rows report the exposed time (last
 * {@code sendLayers} to all layers landed on the receiver) beside one layer's transfer on the idle link, with a
 * simulated prefill paced so that the link carries the stream. After each row the migrated bytes are checked
 * ({@code --no-verify} skips it). TCP only for now: {@code --backend xgmi} is refused with that message.
 */
@Command(name = "kv-bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = "KV-cache migration between two JVMs on model layouts (push, pull, layer-streamed), beside a contiguous transfer.")
public final class KvBenchCommand implements Callable<Integer> {
  private static final long MIB = 1 << 20;

  @Option(names = "--model", defaultValue = "llama3-70b", description = "llama3-8b, llama3-70b or deepseek-v3 (default: ${DEFAULT-VALUE}).")
  String model;

  @Option(names = "--block-tokens", defaultValue = "16", description = "Tokens per block (default: ${DEFAULT-VALUE}).")
  int blockTokens;

  @Option(names = "--tokens", defaultValue = "512,4096", split = ",", description = "Request lengths in tokens (default: ${DEFAULT-VALUE}).")
  int[] tokens;

  @Option(names = "--fragmentation", defaultValue = "1.0",
      description = "Share of each free list shuffled before blocks are taken from it: 0 consecutive, 1 fully scattered (default: ${DEFAULT-VALUE}).")
  double fragmentation;

  @Option(names = "--mode", defaultValue = "push,pull,stream", split = ",", description = "push, pull, stream (default: ${DEFAULT-VALUE}).")
  String[] modes;

  @Option(names = "--backend", defaultValue = "tcp", description = "tcp (xgmi: not implemented in kv-bench yet) (default: ${DEFAULT-VALUE}).")
  String backend;

  @Option(names = "--iters", defaultValue = "20", description = "Timed migrations per row (default: ${DEFAULT-VALUE}).")
  int iters;

  @Option(names = "--warmup", defaultValue = "3", description = "Untimed migrations per row (default: ${DEFAULT-VALUE}).")
  int warmup;

  @Option(names = "--naive-iters", defaultValue = "3", description = "Timed runs of the per-block loop (default: ${DEFAULT-VALUE}).")
  int naiveIters;

  @Option(names = "--layer-compute-us", defaultValue = "0",
      description = "Simulated prefill time per layer in stream mode; 0 = 1.25 x one layer's transfer time measured on the idle link, so the link carries the stream (default: ${DEFAULT-VALUE}).")
  long layerComputeUs;

  @Option(names = "--max-memory", defaultValue = "6144", description = "MiB each process may allocate for caches and the contiguous region (default: ${DEFAULT-VALUE}).")
  long maxMemoryMib;

  @Option(names = "--verify", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "After each row's timed iterations, fresh bytes and one more migration, then every migrated slot compared by CRC32C on both sides (default: ${DEFAULT-VALUE}).")
  boolean verify;

  @Option(names = "--json", description = "Also write the rows as a JSON list to this file.")
  Path json;

  @Option(names = "--plot", description = "Also draw the rows as an SVG (bandwidth and p50/p99 by bytes per request) to this file.")
  Path plot;

  /** Null when the options make sense, else what is wrong, naming the option and value. */
  String validate() {
    if (!backend.equals("tcp")) return "--backend " + backend + " is not implemented in kv-bench yet (only tcp: two JVMs, CPU memory)";
    try {
      KvModel.preset(model);
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    if (blockTokens < 1) return "--block-tokens must be at least 1: " + blockTokens;
    if (fragmentation < 0 || fragmentation > 1) return "--fragmentation must be in [0, 1]: " + fragmentation;
    if (iters < 1) return "--iters must be at least 1: " + iters;
    if (warmup < 0) return "--warmup must not be negative: " + warmup;
    if (naiveIters < 0) return "--naive-iters must not be negative: " + naiveIters;
    if (layerComputeUs < 0) return "--layer-compute-us must not be negative: " + layerComputeUs;
    if (tokens == null || tokens.length == 0) return "--tokens needs at least one request length";
    for (int t : tokens) if (t < 1) return "--tokens must be positive: " + t;
    for (String mode : modes) if (!List.of("push", "pull", "stream").contains(mode)) return "--mode: unknown mode '" + mode + "' (push, pull, stream)";
    return null;
  }

  @Override
  public Integer call() throws Exception {
    String bad = validate();
    if (bad != null) return usage(bad);
    KvModel m = KvModel.preset(model);
    int maxTokens = Arrays.stream(tokens).max().orElse(0);
    int maxBlocks = (maxTokens + blockTokens - 1) / blockTokens;
    int capacity = maxBlocks + maxBlocks / 2;
    KvCacheLayout layout = m.layout(blockTokens, capacity);
    long cacheBytes = layout.bufferBytes() * layout.buffers();
    long contiguous = Math.max(KvBenchRuns.SINGLE_REFERENCE_BYTES, (long) maxBlocks * layout.bytesPerBlock());
    if ((cacheBytes + contiguous) / MIB > maxMemoryMib)
      return usage("a cache of " + capacity + " blocks (" + cacheBytes / MIB + " MiB) plus a " + contiguous / MIB + " MiB contiguous region exceed --max-memory "
          + maxMemoryMib + " MiB: fewer --tokens or a larger --max-memory");

    System.out.printf("kv-bench: %s, %d layers x %d tensors, block %d tokens = %d bytes per tensor, cache %d blocks (%d MiB) per side, backend tcp, two JVMs%n",
        m.name(), m.layers(), m.tensors(), blockTokens, layout.blockBytes(), capacity, cacheBytes / MIB);
    List<KvBenchRow> rows = new ArrayList<>();
    Process child = startChild(m, capacity, contiguous);
    try (Arena arena = Arena.ofShared(); IoEngine engine = IoEngine.create("kv-bench-initiator", IoEngineConfig.loopback());
         KvBenchLink link = new KvBenchLink(child)) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      String[] ready = link.next("READY", 120).split(" ");
      EngineDesc remoteEngine = EngineDesc.fromBytes(Base64.getDecoder().decode(ready[1]));
      KvCacheDesc remote = KvCacheDesc.fromBytes(Base64.getDecoder().decode(ready[2]));
      MemoryDesc remoteRegion = MemoryDesc.fromBytes(Base64.getDecoder().decode(ready[3]));
      engine.registerRemoteEngine(remoteEngine);
      link.send("ENGINE " + Base64.getEncoder().encodeToString(engine.engineDesc().toBytes()));
      link.next("REGISTERED", 60);
      List<MemorySegment> bufs = new ArrayList<>();
      for (int i = 0; i < layout.buffers(); i++) {
        MemorySegment s = arena.allocate(layout.bufferBytes(), 4096);
        s.fill((byte) (i + 1));
        bufs.add(s);
      }
      MemoryDesc region = engine.registerMemory(arena.allocate(contiguous, 4096));
      KvBenchRuns runs = new KvBenchRuns(engine, region, remoteRegion, link, warmup, iters);
      double single64 = runs.contiguous(KvBenchRuns.SINGLE_REFERENCE_BYTES, false).avgBwGBps();
      System.out.printf("engine's single 64 MiB write before the rows: %.2f GB/s (each row also times one beside every iteration)%n", single64);
      long r0 = System.nanoTime();
      try (KvCache local = KvCache.create(engine, "kv-bench", layout, bufs)) {
        double registrationUs = (System.nanoTime() - r0) / 1e3;
        System.out.printf("registration: the cache's %d buffers (%d MiB) in %.0f us (engine: %s)%n%n", layout.buffers(), cacheBytes / MIB, registrationUs,
            engine.registrationStats());
        Random rnd = new Random(42);
        long seed = 1;
        for (int t : tokens) {
          int n = (t + blockTokens - 1) / blockTokens;
          int[] localBlocks = allocate(capacity, n, rnd);
          int[] remoteBlocks = allocate(capacity, n, rnd);
          KvTransferPlan plan = KvTransferPlan.build(layout, localBlocks, remote.layout(), remoteBlocks, 0, layout.layers());
          long bytes = plan.bytes();
          for (String mode : modes) {
            boolean pull = mode.equals("pull");
            KvBenchRuns.Stats naive = naiveIters == 0 ? null : runs.naive(plan, local, remote, pull, naiveIters);
            KvMigration.Mode km = mode.equals("stream") ? KvMigration.Mode.STREAM : pull ? KvMigration.Mode.PULL : KvMigration.Mode.PUSH;
            int[] src = pull ? remoteBlocks : localBlocks, dst = pull ? localBlocks : remoteBlocks;
            KvBenchRow row;
            if (km == KvMigration.Mode.STREAM) {
              KvBenchRuns.Stats layer = runs.oneLayer(local, remote, src, dst, "layer-" + t);
              long compute = layerComputeUs > 0 ? layerComputeUs * 1000 : (long) (1.25 * layer.p50Nanos());
              KvBenchRuns.StreamStats s = runs.stream(local, remote, src, dst, "s-" + t, compute);
              KvBenchRuns.Stats contig = runs.contiguous(bytes, false);
              int checked = verify ? runs.verify(local, bufs, remote, src, dst, km, "check-" + mode + "-" + t, seed++) : 0;
              row = KvBenchRow.stream(m.name(), t, bytes, n, plan.transfers(), plan.blockSlots(), s, layer, contig, naive, checked, registrationUs);
            } else {
              KvBenchRuns.Paired s = runs.migrations(local, remote, src, dst, km, mode + "-" + t, bytes);
              int checked = verify ? runs.verify(local, bufs, remote, src, dst, km, "check-" + mode + "-" + t, seed++) : 0;
              row = KvBenchRow.of(m.name(), t, bytes, n, plan.transfers(), plan.blockSlots(), mode, s, naive, checked, registrationUs);
            }
            rows.add(row);
            System.out.println(row.line());
          }
        }
      }
    } finally {
      child.destroy();
      child.waitFor(30, TimeUnit.SECONDS);
    }
    System.out.println();
    System.out.println(KvBenchRow.table(rows));
    if (json != null) {
      Files.writeString(json, KvBenchRow.json(rows));
      System.out.println("wrote " + json);
    }
    if (plot != null) {
      KvBenchPlot.write(rows, plot);
      System.out.println("wrote " + plot);
    }
    return 0;
  }

  private static int usage(String msg) {
    System.err.println("kv-bench: " + msg);
    return 2;
  }

  /** {@code n} blocks from a free list of {@code capacity} whose share {@code fragmentation} was shuffled. */
  int[] allocate(int capacity, int n, Random rnd) {
    List<Integer> free = new ArrayList<>(capacity);
    for (int i = 0; i < capacity; i++) free.add(i);
    for (int i = 0; i < capacity; i++) if (rnd.nextDouble() < fragmentation) Collections.swap(free, i, rnd.nextInt(capacity));
    int[] out = new int[n];
    for (int i = 0; i < n; i++) out[i] = free.get(i);
    return out;
  }

  private Process startChild(KvModel m, int capacity, long contiguous) throws Exception {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    return new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-Xmx512m", "-cp", System.getProperty("java.class.path"),
        KvBenchTarget.class.getName(), m.name(), Integer.toString(blockTokens), Integer.toString(capacity), Long.toString(contiguous))
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  static void check(TransferStatus s, String what) {
    if (!s.succeeded()) throw new IllegalStateException(what + ": " + s.code() + " " + s.message());
  }

  static void check(KvMigration m) {
    if (m.code() != StatusCode.SUCCESS) throw new IllegalStateException("migration " + m.requestId() + ": " + m.code() + " " + m.message());
  }
}
