package org.mori4j.bench.kv;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
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
 * transfer; streaming rows report the exposed time (last {@code sendLayers} to all layers landed on the receiver)
 * beside one layer's transfer time. TCP only for now: {@code --backend xgmi} is refused with that message.
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
      description = "Simulated prefill time per layer in stream mode; 0 = 1.5 x the measured per-layer share of a push (default: ${DEFAULT-VALUE}).")
  long layerComputeUs;

  @Option(names = "--max-memory", defaultValue = "6144", description = "MiB each process may allocate for caches and the contiguous region (default: ${DEFAULT-VALUE}).")
  long maxMemoryMib;

  @Option(names = "--json", description = "Also write the rows as a JSON list to this file.")
  Path json;

  @Override
  public Integer call() throws Exception {
    if (!backend.equals("tcp")) {
      System.err.println("kv-bench: --backend " + backend + " is not implemented yet (only tcp: two JVMs, CPU memory)");
      return 2;
    }
    KvModel m;
    try {
      m = KvModel.preset(model);
    } catch (IllegalArgumentException e) {
      System.err.println("kv-bench: " + e.getMessage());
      return 2;
    }
    if (blockTokens < 1) return usage("--block-tokens must be at least 1: " + blockTokens);
    if (fragmentation < 0 || fragmentation > 1) return usage("--fragmentation must be in [0, 1]: " + fragmentation);
    if (iters < 1 || warmup < 0 || naiveIters < 0) return usage("--iters must be >= 1, --warmup and --naive-iters >= 0");
    for (String mode : modes) if (!List.of("push", "pull", "stream").contains(mode)) return usage("--mode: unknown mode '" + mode + "'");
    int maxTokens = Arrays.stream(tokens).max().orElse(0);
    if (Arrays.stream(tokens).anyMatch(t -> t < 1)) return usage("--tokens must be positive: " + Arrays.toString(tokens));
    int maxBlocks = (maxTokens + blockTokens - 1) / blockTokens;
    int capacity = maxBlocks + maxBlocks / 2;
    KvCacheLayout layout = m.layout(blockTokens, capacity);
    long cacheBytes = layout.bufferBytes() * layout.buffers();
    long contiguous = Math.max(64 * MIB, (long) maxBlocks * layout.bytesPerBlock());
    if ((cacheBytes + contiguous) / MIB > maxMemoryMib)
      return usage("a cache of " + capacity + " blocks (" + cacheBytes / MIB + " MiB) plus a " + contiguous / MIB + " MiB contiguous region exceed --max-memory "
          + maxMemoryMib + " MiB: fewer --tokens or a larger --max-memory");

    System.out.printf("kv-bench: %s, %d layers x %d tensors, block %d tokens = %d bytes per tensor, cache %d blocks (%d MiB) per side, backend tcp, two JVMs%n",
        m.name(), m.layers(), m.tensors(), blockTokens, layout.blockBytes(), capacity, cacheBytes / MIB);
    List<KvBenchRow> rows = new ArrayList<>();
    Process child = startChild(m, capacity, contiguous);
    try (Arena arena = Arena.ofShared(); IoEngine engine = IoEngine.create("kv-bench-initiator", IoEngineConfig.loopback())) {
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      ChildLink link = new ChildLink(child);
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
      double single64 = runs.contiguous(64 * MIB, false).avgBwGBps();
      System.out.printf("engine's single 64 MiB write: %.2f GB/s%n%n", single64);
      try (KvCache local = KvCache.create(engine, "kv-bench", layout, bufs)) {
        Random rnd = new Random(42);
        for (int t : tokens) {
          int n = (t + blockTokens - 1) / blockTokens;
          int[] localBlocks = allocate(capacity, n, rnd);
          int[] remoteBlocks = allocate(capacity, n, rnd);
          KvTransferPlan plan = KvTransferPlan.build(layout, localBlocks, remote.layout(), remoteBlocks, 0, layout.layers());
          long bytes = plan.bytes();
          for (String mode : modes) {
            boolean pull = mode.equals("pull");
            KvBenchRuns.Stats contig = runs.contiguous(bytes, pull);
            KvBenchRuns.Stats naive = naiveIters == 0 ? null : runs.naive(plan, local, remote, pull, naiveIters);
            KvBenchRow row;
            if (mode.equals("stream")) {
              KvBenchRuns.Stats push = runs.migrations(local, remote, localBlocks, remoteBlocks, KvMigration.Mode.PUSH, "cal-" + t);
              long compute = layerComputeUs > 0 ? layerComputeUs * 1000 : (long) (1.5 * push.p50Nanos() / m.layers());
              KvBenchRuns.StreamStats s = runs.stream(local, remote, localBlocks, remoteBlocks, "s-" + t, compute);
              row = KvBenchRow.stream(m.name(), t, bytes, n, plan.transfers(), plan.blockSlots(), s, contig, naive, single64, compute);
            } else {
              KvBenchRuns.Stats s = runs.migrations(local, remote, pull ? remoteBlocks : localBlocks, pull ? localBlocks : remoteBlocks,
                  pull ? KvMigration.Mode.PULL : KvMigration.Mode.PUSH, mode + "-" + t);
              row = KvBenchRow.of(m.name(), t, bytes, n, plan.transfers(), plan.blockSlots(), mode, s, contig, naive, single64);
            }
            rows.add(row);
            System.out.println(row.line());
          }
        }
      }
      link.close();
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

  /** The child's stdout (control lines and landed ranges) and stdin. */
  static final class ChildLink implements AutoCloseable {
    private final Process p;
    private final PrintWriter out;
    private final BlockingQueue<String> control = new LinkedBlockingQueue<>();
    final Map<String, long[]> landed = new ConcurrentHashMap<>();

    ChildLink(Process p) {
      this.p = p;
      this.out = new PrintWriter(p.getOutputStream(), true, StandardCharsets.UTF_8);
      Thread t = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
          for (String l; (l = r.readLine()) != null; ) {
            if (l.startsWith("LANDED ")) {
              String[] f = l.split(" ");
              // [layers landed, latest nanoTime]
              landed.compute(f[1], (k, v) -> {
                long[] a = v == null ? new long[2] : v;
                a[0] += Integer.parseInt(f[3]) - Integer.parseInt(f[2]);
                a[1] = Math.max(a[1], Long.parseLong(f[4]));
                return a;
              });
            } else if (l.startsWith("READY") || l.startsWith("REGISTERED")) control.add(l);
          }
        } catch (java.io.IOException e) {
          // the child ended
        }
      }, "kv-bench-child");
      t.setDaemon(true);
      t.start();
    }

    String next(String prefix, int seconds) throws InterruptedException {
      String l = control.poll(seconds, TimeUnit.SECONDS);
      if (l == null || !l.startsWith(prefix)) throw new IllegalStateException("kv-bench target: expected " + prefix + " within " + seconds + " s, got " + l);
      return l;
    }

    void send(String line) {
      out.println(line);
    }

    /** Waits until {@code layers} layers of {@code request} landed; their latest landing time, or -1 on timeout. */
    long awaitLanded(String request, int layers, Duration timeout) throws InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (System.nanoTime() < deadline) {
        long[] a = landed.get(request);
        if (a != null && a[0] >= layers) {
          landed.remove(request);
          send("FORGET " + request);
          return a[1];
        }
        Thread.onSpinWait();
      }
      return -1;
    }

    @Override
    public void close() {
      out.close();
    }
  }

  static void check(TransferStatus s, String what) {
    if (!s.succeeded()) throw new IllegalStateException(what + ": " + s.code() + " " + s.message());
  }

  static void check(KvMigration m) {
    if (m.code() != StatusCode.SUCCESS) throw new IllegalStateException("migration " + m.requestId() + ": " + m.code() + " " + m.message());
  }
}
