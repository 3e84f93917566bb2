package org.mori4j.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.nccl.Nccl;
import org.mori4j.natives.nccl.NcclUniqueId;
import org.mori4j.shmem.Shmem;
import org.mori4j.shmem.ShmemConfig;
import org.mori4j.shmem.collectives.ShmemDataType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code mori4j shmem-bench}: the shmem collectives on this host's GPUs. This process starts one child JVM per GPU
 * in use, with the PEs of that GPU in it ({@code --np N} PEs, PE r on GPU r mod the GPU count; by default one PE
 * per GPU, or two PEs on GPU 0 when there is one GPU). PEs that share a GPU share a JVM because kernels of one
 * process run on the GPU at the same time, while kernels of two processes take turns in time slices, which would
 * make every barrier of a collective wait for a slice. The JVM of PE 0 makes the group's unique ids (shmem's and
 * NCCL's) and prints them; the others get them as arguments. Each PE runs {@link ShmemBenchPe} in its own
 * thread; PE 0's tables come out on this process's stdout. NCCL is loaded only by the PEs,
 * whose environment has {@code NCCL_NVLS_ENABLE=0} (NVLink multicast is off on the machines this runs on); it runs
 * only when every PE has a GPU of its own, otherwise its rows say why not. Exit codes: 0 done, 1 a wrong result or
 * a PE failed, 2 a usage error.
 */
@Command(name = "shmem-bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Measure the shmem all-reduce kernels beside NCCL and a raw peer copy, put bandwidth and the put + signal round trip.")
public final class ShmemBenchCommand implements Callable<Integer> {
  static final String IDS_PREFIX = "MORI4J-SHMEM-IDS ";

  @Spec CommandSpec spec;

  @Option(names = "--np", description = "Number of PEs (default: one per GPU; two on GPU 0 when there is one GPU).")
  Integer np;

  @Option(names = "--dtype", defaultValue = "bf16", description = "All-reduce element type: bf16, fp16 or fp32 (default: ${DEFAULT-VALUE}).")
  String dtype;

  @Option(names = "--min-size", defaultValue = "14K", converter = SizeConverter.class,
      description = "Smallest all-reduce size; doubled up to 1 MiB, then powers of two (default: ${DEFAULT-VALUE}, giving 896 KiB = 64 x 7168 bf16).")
  long minSize;

  @Option(names = "--max-size", defaultValue = "64M", converter = SizeConverter.class, description = "Largest all-reduce and put size (default: ${DEFAULT-VALUE}).")
  long maxSize;

  @Option(names = "--iters", defaultValue = "200", description = "Measured iterations per row (default: ${DEFAULT-VALUE}).")
  int iters;

  @Option(names = "--warmup-iters", defaultValue = "20", description = "Unmeasured iterations before each row (default: ${DEFAULT-VALUE}).")
  int warmupIters;

  @Option(names = "--rtt-rounds", defaultValue = "1000", description = "Round trips per ping-pong kernel launch (default: ${DEFAULT-VALUE}).")
  int rttRounds;

  @Option(names = "--rtt-launches", defaultValue = "20", description = "Measured ping-pong launches (default: ${DEFAULT-VALUE}).")
  int rttLaunches;

  @Option(names = "--nccl", negatable = true, defaultValue = "true", fallbackValue = "true", description = "Measure NCCL's all-reduce beside (default: on).")
  boolean nccl;

  @Option(names = "--disable-p2p", description = "Also run the all-reduce over GPU-initiated endpoints (a second PE group with MORI_DISABLE_P2P: "
      + "kernel B's puts and signals executed by each PE's host proxy, an emulated NIC), in the same run beside the P2P path and NCCL.")
  boolean disableP2p;

  @Option(names = "--proxy-iters", defaultValue = "20", description = "Measured iterations per host-proxy row (default: ${DEFAULT-VALUE}).")
  int proxyIters;

  @Option(names = "--machine", defaultValue = "", description = "How to name this machine in the output, e.g. '2x H200, CUDA 13' (default: the GPUs' names).")
  String machine;

  @Option(names = "--json", paramLabel = "FILE", description = "Also write every row (series, figures, note) as JSON to FILE.")
  Path json;

  @Option(names = "--plot", paramLabel = "FILE.svg", description = "Also draw every row's bandwidth and latency by size as an SVG.")
  Path plot;

  // ---- set by the parent for a PE process
  @Option(names = "--pe-ranks", hidden = true, split = ",") List<Integer> peRanks;
  @Option(names = "--pe-device", hidden = true) int peDevice;
  @Option(names = "--shmem-id", hidden = true) String shmemIdHex;
  @Option(names = "--nccl-id", hidden = true) String ncclIdHex;
  @Option(names = "--shmem-proxy-id", hidden = true) String shmemProxyIdHex;
  @Option(names = "--nccl-missing", hidden = true) String ncclMissing;
  @Option(names = "--pe-np", hidden = true) int peNp;

  @Override
  public Integer call() throws Exception {
    ShmemDataType type = switch (dtype.toLowerCase(Locale.ROOT)) {
      case "bf16", "bfloat16" -> ShmemDataType.BFLOAT16;
      case "fp16", "half", "float16" -> ShmemDataType.FLOAT16;
      case "fp32", "float", "float32" -> ShmemDataType.FLOAT32;
      default -> throw new ParameterException(spec.commandLine(), "--dtype: '" + dtype + "' is not bf16, fp16 or fp32");
    };
    if (iters < 1) throw new ParameterException(spec.commandLine(), "--iters must be at least 1: " + iters);
    if (proxyIters < 1) throw new ParameterException(spec.commandLine(), "--proxy-iters must be at least 1: " + proxyIters);
    if (warmupIters < 0) throw new ParameterException(spec.commandLine(), "--warmup-iters must not be negative: " + warmupIters);
    if (rttRounds < 1 || rttLaunches < 1) throw new ParameterException(spec.commandLine(), "--rtt-rounds and --rtt-launches must be at least 1");
    if (minSize > maxSize) throw new ParameterException(spec.commandLine(), "--min-size " + minSize + " is above --max-size " + maxSize);
    if (minSize % type.bytes() != 0) throw new ParameterException(spec.commandLine(), "--min-size " + minSize + " is not a whole number of " + type + " elements");
    if (maxSize > (1L << 30)) throw new ParameterException(spec.commandLine(), "--max-size " + maxSize + " is above 1 GiB");
    BenchPlot.check(plot, m -> new ParameterException(spec.commandLine(), m));
    List<Long> sizes = allReduceSizes(minSize, maxSize);
    List<Long> puts = putSizes(maxSize);
    if (peRanks != null) return runPes(type, sizes, puts);
    return runParent(type, sizes, puts);
  }

  /** {@code min} doubled while below 1 MiB (14 KiB .. 896 KiB by default), then 1 MiB, 2 MiB, ... up to {@code max}. */
  static List<Long> allReduceSizes(long min, long max) {
    List<Long> out = new ArrayList<>();
    long s = min;
    for (; s < (1L << 20) && s <= max; s *= 2) out.add(s);
    for (long p = 1L << 20; p <= max; p *= 2) if (p >= min && !out.contains(p)) out.add(p);
    return out;
  }

  /** 4 KiB, 16 KiB, ... (times 4) up to {@code max}. */
  static List<Long> putSizes(long max) {
    List<Long> out = new ArrayList<>();
    for (long s = 4096; s <= max; s *= 4) out.add(s);
    return out;
  }

  /** The heap each PE needs: the buffer, a put destination and kernel B's scratch for n - 1 peers, and room for the rest. */
  static long heapSize(long max, int nPes) {
    long bytes = max * (nPes + 1) + (32L << 20);
    return Math.max(ShmemConfig.MIN_HEAP_SIZE, (bytes + (1 << 20) - 1) & -(1L << 20));
  }

  private int runParent(ShmemDataType type, List<Long> sizes, List<Long> puts) throws Exception {
    PrintStream out = spec.commandLine().getOut() != null ? new PrintStream(System.out, true, StandardCharsets.UTF_8) : System.out;
    GpuRuntime gpu = GpuRuntimes.select("auto");
    if (!gpu.available()) throw new ParameterException(spec.commandLine(), "shmem-bench needs a GPU: " + gpu.version());
    int gpus = gpu.deviceCount();
    int n = np != null ? np : Math.max(2, gpus);
    if (n < 2 || n > 64) throw new ParameterException(spec.commandLine(), "--np must be in 2..64: " + n);
    String label = machine.isBlank() ? gpus + "x " + gpu.deviceName(0) : machine;
    List<String> common = new ArrayList<>(List.of("--dtype", dtype, "--min-size", Long.toString(minSize), "--max-size", Long.toString(maxSize),
        "--iters", Integer.toString(iters), "--warmup-iters", Integer.toString(warmupIters), "--rtt-rounds", Integer.toString(rttRounds),
        "--rtt-launches", Integer.toString(rttLaunches), "--machine", label, "--pe-np", Integer.toString(n), nccl ? "--nccl" : "--no-nccl",
        "--proxy-iters", Integer.toString(proxyIters)));
    if (disableP2p) common.add("--disable-p2p");
    if (json != null) common.addAll(List.of("--json", json.toAbsolutePath().toString()));
    if (plot != null) common.addAll(List.of("--plot", plot.toAbsolutePath().toString()));
    // one JVM per GPU in use, hosting the PEs of that GPU; the JVM of GPU 0 holds PE 0
    int jvms = Math.min(n, gpus);
    List<Process> processes = new ArrayList<>();
    List<Deque<String>> tails = new ArrayList<>();
    try {
      CompletableFuture<String> ids = new CompletableFuture<>();
      processes.add(startPes(0, jvms, n, common, List.of(), tails, line -> {
        if (!ids.isDone() && line.startsWith(IDS_PREFIX)) ids.complete(line.substring(IDS_PREFIX.length()));
        else out.println(line);
      }, ids));
      String idArgs = ids.get(120, TimeUnit.SECONDS);
      List<String> extra = List.of(idArgs.split(" "));
      for (int d = 1; d < jvms; d++) processes.add(startPes(d, jvms, n, common, extra, tails, line -> {}, null));
      int exit = 0;
      for (int d = 0; d < jvms; d++) {
        Process p = processes.get(d);
        p.waitFor();
        if (p.exitValue() != 0) {
          exit = 1;
          synchronized (tails.get(d)) {
            System.err.println("shmem-bench: the JVM of GPU " + d + " exited with " + p.exitValue() + (tails.get(d).isEmpty() ? "" : ":"));
            for (String l : tails.get(d)) System.err.println("[gpu " + d + "] " + l);
          }
        }
      }
      return exit;
    } finally {
      for (Process p : processes) if (p.isAlive()) p.destroyForcibly();
    }
  }

  /** The PEs of GPU {@code device}: r = device, device + jvms, ... below n. */
  static List<Integer> ranksOf(int device, int jvms, int n) {
    List<Integer> ranks = new ArrayList<>();
    for (int r = device; r < n; r += jvms) ranks.add(r);
    return ranks;
  }

  private Process startPes(int device, int jvms, int n, List<String> common, List<String> extra, List<Deque<String>> tails,
                           java.util.function.Consumer<String> stdout, CompletableFuture<String> failOnExit) throws IOException {
    List<String> args = new ArrayList<>(common);
    List<String> ranks = ranksOf(device, jvms, n).stream().map(String::valueOf).toList();
    args.addAll(List.of("--pe-ranks", String.join(",", ranks), "--pe-device", Integer.toString(device)));
    args.addAll(extra);
    ProcessBuilder pb = new ProcessBuilder(TargetProcess.command("shmem-bench", args));
    // NVLink multicast (NVLS) is off on the GPU machines: NCCL must not try it
    pb.environment().put("NCCL_NVLS_ENABLE", "0");
    Process p = pb.start();
    Deque<String> tail = new ArrayDeque<>();
    tails.add(tail);
    Thread.ofPlatform().daemon().name("gpu-" + device + "-stderr").start(() -> copyLines(p.getErrorStream(), line -> {
      synchronized (tail) {
        tail.addLast(line);
        if (tail.size() > 60) tail.removeFirst();
      }
    }));
    Thread.ofPlatform().daemon().name("gpu-" + device + "-stdout").start(() -> {
      copyLines(p.getInputStream(), stdout);
      if (failOnExit != null) failOnExit.completeExceptionally(new IOException("the JVM of PE 0 exited before printing the ids:\n[gpu 0] "
          + String.join("\n[gpu 0] ", tail)));
    });
    return p;
  }

  private static void copyLines(java.io.InputStream in, java.util.function.Consumer<String> sink) {
    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) sink.accept(line);
    } catch (IOException ignored) {
      // the PE is gone
    }
  }

  private int runPes(ShmemDataType type, List<Long> sizes, List<Long> puts) throws Exception {
    PrintStream out = System.out;
    int n = peNp;
    GpuRuntime gpu = GpuRuntimes.select("auto");
    int gpus = gpu.deviceCount();
    byte[] shmemId;
    byte[] proxyId = null;
    NcclUniqueId ncclId = null;
    String missing = ncclMissing;
    if (peRanks.contains(0)) {
      shmemId = Shmem.getUniqueId();
      if (disableP2p) proxyId = Shmem.getUniqueId();
      if (!nccl) missing = "n/a: --no-nccl";
      else if (gpus < n) missing = ShmemBenchPe.NCCL_NA_ONE_GPU + " (" + n + " PEs, " + gpus + " GPU" + (gpus == 1 ? "" : "s") + ")";
      else if (!Nccl.library().available()) missing = "n/a: NCCL not found: " + Nccl.library().failure();
      else ncclId = Nccl.uniqueId();
      String ids = "--shmem-id " + HexFormat.of().formatHex(shmemId) + (ncclId != null ? " --nccl-id " + ncclId.toHex()
          : " --nccl-missing " + HexFormat.of().formatHex(missing.getBytes(StandardCharsets.UTF_8)))
          + (proxyId != null ? " --shmem-proxy-id " + HexFormat.of().formatHex(proxyId) : "");
      out.println(IDS_PREFIX + ids);
      out.flush();
    } else {
      shmemId = HexFormat.of().parseHex(shmemIdHex);
      if (shmemProxyIdHex != null) proxyId = HexFormat.of().parseHex(shmemProxyIdHex);
      if (ncclIdHex != null) ncclId = NcclUniqueId.fromHex(ncclIdHex);
      else missing = new String(HexFormat.of().parseHex(ncclMissing), StandardCharsets.UTF_8);
    }
    List<java.util.concurrent.Future<Integer>> results = new ArrayList<>();
    try (var threads = java.util.concurrent.Executors.newFixedThreadPool(peRanks.size(), Thread.ofPlatform().name("pe-", 0).factory())) {
      for (int rank : peRanks) {
        ShmemBenchPe.Settings settings = new ShmemBenchPe.Settings(rank, n, peDevice, shmemId, ncclId, missing, type, sizes, puts, iters, warmupIters,
            rttRounds, rttLaunches, heapSize(maxSize, n), json, machine, plot, proxyId, proxyIters);
        results.add(threads.submit(() -> ShmemBenchPe.run(settings, out)));
      }
      int exit = 0;
      for (var r : results) {
        try {
          exit = Math.max(exit, r.get());
        } catch (java.util.concurrent.ExecutionException e) {
          System.err.println("shmem-bench: a PE failed: " + e.getCause());
          e.getCause().printStackTrace();
          exit = 1;
        }
      }
      return exit;
    }
  }
}
