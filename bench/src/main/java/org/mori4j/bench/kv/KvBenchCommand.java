package org.mori4j.bench.kv;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.XgmiBackendConfig;
import org.mori4j.io.TransferStatus;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheDesc;
import org.mori4j.io.kv.KvCacheLayout;
import org.mori4j.io.kv.KvMigration;
import org.mori4j.io.kv.KvTransferPlan;
import org.mori4j.bench.BaselineRow;
import org.mori4j.bench.baseline.XgmiCopyBaseline;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import com.typesafe.config.ConfigFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code mori4j kv-bench}: a request's KV blocks between a prefill cache here and a decode cache on the other side
 * ({@link KvBenchSetup}: a second JVM over TCP, or GPU0 -> GPU1 over XGMI in one or two processes), on real model
 * layouts, blocks allocated from shuffled free lists on both sides. Per request length and mode
 * (push, pull, layer-streamed push) it prints the migration's p50/p99 time and GB/s beside, in the same run, the
 * same bytes as one contiguous transfer, a naive one-transfer-per-block loop and the engine's single 64 MiB
 * transfer, each timed beside every iteration of the row; streaming rows ({@link KvBenchStream}) report the
 * exposed time (last {@code sendLayers} to all layers landed on the receiver) beside one layer's transfer through
 * the engine timed after each stream (after the same idle gap), and where the last layer's time went, with a simulated prefill paced
 * by default at the model's estimated compute time per layer. After each row the migrated bytes are checked
 * ({@code --no-verify} skips it). On XGMI the driver's own peer copy of the same bytes is timed after the rows.
 * With {@code --pairs N} (TCP) or {@code --prefill-gpus}/{@code --decode-gpus} (XGMI) several pairs migrate at
 * once instead ({@link KvPairsBench}).
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

  @Option(names = "--backend", defaultValue = "tcp",
      description = "tcp (CPU memory, two JVMs on loopback) or xgmi (GPU memory, --gpu-device -> --target-gpu-device) (default: ${DEFAULT-VALUE}).")
  String backend;

  @Option(names = "--gpu-device", defaultValue = "0", description = "xgmi: this side's GPU (default: ${DEFAULT-VALUE}).")
  int gpuDevice;

  @Option(names = "--target-gpu-device", defaultValue = "1", description = "xgmi: the receiver's GPU (default: ${DEFAULT-VALUE}).")
  int targetGpuDevice;

  @Option(names = "--prefill-gpus",
      description = "xgmi, several pairs at once: the prefill engines' GPUs, e.g. 0,1 (pair i: --prefill-gpus[i] -> --decode-gpus[i]; repeats allowed).")
  String prefillGpus;

  @Option(names = "--decode-gpus", description = "xgmi, several pairs at once: the decode engines' GPUs, as many as --prefill-gpus, e.g. 2,3.")
  String decodeGpus;

  @Option(names = "--pairs", description = "tcp: this many prefill -> decode pairs migrating at once (one JVM per decode engine); xgmi: must match the GPU lists.")
  Integer pairs;

  @Option(names = "--xgmi-single-process", description = "xgmi: the receiver's engine in this JVM (direct peer copies) instead of a second JVM (IPC handles).")
  boolean xgmiSingleProcess;

  @Option(names = "--xgmi-streams", defaultValue = "64", description = "xgmi: streams per device of this JVM's XGMI backends (default: ${DEFAULT-VALUE}, MORI's).")
  int xgmiStreams;

  @Option(names = "--xgmi-events", defaultValue = "64",
      description = "xgmi: events per device of this JVM's XGMI backends, i.e. transfers on one GPU at once (default: ${DEFAULT-VALUE}, MORI's).")
  int xgmiEvents;

  @Option(names = "--iters", defaultValue = "20", description = "Timed migrations per row (default: ${DEFAULT-VALUE}).")
  int iters;

  @Option(names = "--warmup", defaultValue = "3", description = "Untimed migrations per row (default: ${DEFAULT-VALUE}).")
  int warmup;

  @Option(names = "--naive-iters", defaultValue = "3", description = "Timed runs of the per-block loop (default: ${DEFAULT-VALUE}).")
  int naiveIters;

  @Option(names = "--layer-compute-us", defaultValue = "model",
      description = "Simulated prefill time per layer in stream mode: microseconds, 'model' = the model's estimate for the request"
          + " length (2 FLOPs per active parameter and token over --prefill-tflops), or 'link' = 1.25 x one layer's transfer"
          + " measured on the idle link (default: ${DEFAULT-VALUE}).")
  String layerCompute;

  @Option(names = "--prefill-tflops", defaultValue = "400",
      description = "Sustained bf16 TFLOP/s of the prefill GPU for --layer-compute-us model (400: one H100 at ~40%% of its dense peak) (default: ${DEFAULT-VALUE}).")
  double prefillTflops;

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
    if (!backend.equals("tcp") && !backend.equals("xgmi")) return "--backend must be tcp or xgmi: " + backend;
    if (xgmiSingleProcess && !backend.equals("xgmi")) return "--xgmi-single-process needs --backend xgmi";
    try {
      KvModel.preset(model);
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    if (blockTokens < 1) return "--block-tokens must be at least 1: " + blockTokens;
    if (fragmentation < 0 || fragmentation > 1) return "--fragmentation must be in [0, 1]: " + fragmentation;
    if (xgmiStreams < 1) return "--xgmi-streams must be at least 1: " + xgmiStreams;
    if (xgmiEvents < 1) return "--xgmi-events must be at least 1: " + xgmiEvents;
    if (iters < 1) return "--iters must be at least 1: " + iters;
    if (warmup < 0) return "--warmup must not be negative: " + warmup;
    if (naiveIters < 0) return "--naive-iters must not be negative: " + naiveIters;
    if (!layerCompute.equals("model") && !layerCompute.equals("link")) {
      try {
        if (Long.parseLong(layerCompute) < 1) return "--layer-compute-us must be at least 1, 'model' or 'link': " + layerCompute;
      } catch (NumberFormatException e) {
        return "--layer-compute-us must be microseconds, 'model' or 'link': " + layerCompute;
      }
    }
    if (!(prefillTflops > 0) || Double.isInfinite(prefillTflops)) return "--prefill-tflops must be positive: " + prefillTflops;
    if (tokens == null || tokens.length == 0) return "--tokens needs at least one request length";
    for (int t : tokens) if (t < 1) return "--tokens must be positive: " + t;
    for (String mode : modes) if (!List.of("push", "pull", "stream").contains(mode)) return "--mode: unknown mode '" + mode + "' (push, pull, stream)";
    try {
      if (KvPairs.of(backend, prefillGpus, decodeGpus, pairs) != null && plot != null) return "--plot draws one pair's rows; not with --pairs or GPU lists";
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    return null;
  }

  @Override
  public Integer call() throws Exception {
    String bad = validate();
    if (bad != null) return usage(bad);
    KvModel m = KvModel.preset(model);
    boolean xgmi = backend.equals("xgmi");
    xgmiConfig = new XgmiBackendConfig(xgmiStreams, xgmiEvents);
    GpuRuntime gpu = xgmi ? gpuRuntime() : null;
    KvPairs several = KvPairs.of(backend, prefillGpus, decodeGpus, pairs);
    if (several != null) {
      String why = xgmi ? several.gpuProblem(gpu) : null;
      return why != null ? usage(why) : KvPairsBench.run(this, several, gpu);
    }
    if (xgmi) {
      String why = gpuProblem(gpu, gpuDevice, targetGpuDevice);
      if (why != null) return usage(why);
    }
    int maxTokens = Arrays.stream(tokens).max().orElse(0);
    int maxBlocks = (maxTokens + blockTokens - 1) / blockTokens;
    int capacity = maxBlocks + maxBlocks / 2;
    KvCacheLayout layout = m.layout(blockTokens, capacity);
    long cacheBytes = layout.bufferBytes() * layout.buffers();
    long contiguous = Math.max(KvBenchRuns.SINGLE_REFERENCE_BYTES, (long) maxBlocks * layout.bytesPerBlock());
    if ((cacheBytes + contiguous) / MIB > maxMemoryMib)
      return usage("a cache of " + capacity + " blocks (" + cacheBytes / MIB + " MiB) plus a " + contiguous / MIB + " MiB contiguous region exceed --max-memory "
          + maxMemoryMib + " MiB: fewer --tokens or a larger --max-memory");

    List<KvBenchRow> rows = new ArrayList<>();
    String label = xgmi ? (xgmiSingleProcess ? "xgmi" : "xgmi-2proc") : "tcp";
    double rawCopy = Double.NaN;
    try (KvBenchSetup side = new KvBenchSetup(m, blockTokens, capacity, contiguous, gpu, gpuDevice, targetGpuDevice, xgmiSingleProcess)) {
      System.out.printf("kv-bench: %s, %d layers x %d tensors, block %d tokens = %d bytes per tensor, cache %d blocks (%d MiB) per side, %s%n",
          m.name(), m.layers(), m.tensors(), blockTokens, layout.blockBytes(), capacity, cacheBytes / MIB, side.where);
      IoEngine engine = side.engine;
      KvCacheDesc remote = side.remote;
      KvBenchRuns runs = new KvBenchRuns(engine, side.region, side.remoteRegion, side.receiver, warmup, iters);
      KvBenchStream streams = new KvBenchStream(engine, runs, side.receiver, warmup, iters);
      double single64 = runs.contiguous(KvBenchRuns.SINGLE_REFERENCE_BYTES, false).avgBwGBps();
      System.out.printf("engine's single 64 MiB write before the rows: %.2f GB/s (each row also times one beside every iteration)%n", single64);
      long r0 = System.nanoTime();
      try (KvCache local = side.memory.register(engine, "kv-bench")) {
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
              long compute = switch (layerCompute) {
                case "model" -> m.prefillNanosPerLayer(t, prefillTflops);
                case "link" -> (long) (1.25 * layer.p50Nanos());
                default -> Long.parseLong(layerCompute) * 1000;
              };
              String pacing = switch (layerCompute) {
                case "model" -> String.format(java.util.Locale.ROOT, "model: %s prefill of %d tokens at %.0f TFLOP/s", m.name(), t, prefillTflops);
                case "link" -> "link: 1.25 x one layer via sendLayers on the idle link";
                default -> "given: --layer-compute-us " + layerCompute;
              };
              KvBenchStream.Stats s = streams.run(local, remote, src, dst, "s-" + t, compute, pacing);
              KvBenchRuns.Stats contig = runs.contiguous(bytes, false);
              int checked = verify ? runs.verify(local, side.memory, remote, src, dst, km, "check-" + mode + "-" + t, seed++) : 0;
              row = KvBenchRow.stream(m.name(), t, bytes, n, plan.transfers(), plan.blockSlots(), label, s, layer, contig, naive, checked, registrationUs);
            } else {
              KvBenchRuns.Paired s = runs.migrations(local, remote, src, dst, km, mode + "-" + t, bytes);
              int checked = verify ? runs.verify(local, side.memory, remote, src, dst, km, "check-" + mode + "-" + t, seed++) : 0;
              row = KvBenchRow.of(m.name(), t, bytes, n, plan.transfers(), plan.blockSlots(), mode, label, s, naive, checked, registrationUs);
            }
            rows.add(row);
            System.out.println(row.line());
          }
        }
      }
      if (xgmi) {
        // the path's limit: the driver's own peer copy of the largest request's bytes between the same two devices
        long bytes = rows.stream().mapToLong(KvBenchRow::bytes).max().orElse(KvBenchRuns.SINGLE_REFERENCE_BYTES);
        List<BaselineRow> base = XgmiCopyBaseline.run(gpu, gpuDevice, targetGpuDevice, bytes, 1, iters, warmup, 0);
        String series = XgmiCopyBaseline.copySeries(gpu, gpuDevice, targetGpuDevice);
        for (BaselineRow b : base)
          if (b.series().equals(series) && b.row() != null) rawCopy = b.row().avgBwGBps();
        System.out.printf("%nraw %s of %d bytes: %.2f GB/s%n", series, bytes, rawCopy);
        double raw = rawCopy;
        rows.replaceAll(r -> r.withRawCopy(raw));
      }
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

  /** The GPU runtime the engine itself uses ({@code mori4j.gpu.runtime}), so that its registration check accepts our buffers. */
  static GpuRuntime gpuRuntime() {
    return GpuRuntimes.select(ConfigFactory.load().getString("mori4j.gpu.runtime"));
  }

  /** Null when both devices can be used, else why not, naming the flag. */
  static String gpuProblem(GpuRuntime gpu, int device, int target) {
    if (!gpu.available()) return "--backend xgmi needs a GPU runtime: " + gpu.version();
    int n = gpu.deviceCount();
    if (device < 0 || device >= n) return "--gpu-device " + device + ": this machine has " + n + " " + gpu.name() + " device(s)";
    if (target < 0 || target >= n) return "--target-gpu-device " + target + ": this machine has " + n + " " + gpu.name() + " device(s)";
    return null;
  }

  /** The XGMI backends' settings of the last run in this JVM ({@code --xgmi-streams}, {@code --xgmi-events}); MORI's defaults before one. */
  private static volatile XgmiBackendConfig xgmiConfig = XgmiBackendConfig.defaults();

  /** TCP alone, or XGMI alone (so that the engine cannot route a GPU pair anywhere else unnoticed). */
  static void createBackend(IoEngine engine, boolean xgmi) {
    if (xgmi) engine.createBackend(BackendType.XGMI, xgmiConfig);
    else engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
  }

  static void check(TransferStatus s, String what) {
    if (!s.succeeded()) throw new IllegalStateException(what + ": " + s.code() + " " + s.message());
  }

  static void check(KvMigration m) {
    if (m.code() != StatusCode.SUCCESS) throw new IllegalStateException("migration " + m.requestId() + ": " + m.code() + " " + m.message());
  }
}
