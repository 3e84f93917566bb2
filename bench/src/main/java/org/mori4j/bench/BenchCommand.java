package org.mori4j.bench;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.mori4j.bench.baseline.Baselines;
import org.mori4j.natives.gpu.GpuRuntime;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code mori4j bench}: MORI-IO's benchmark for mori4j. It starts a target engine in a child JVM (or uses
 * {@code --peer}), measures the requested (message size, batch size) points with MORI's flags and prints
 * MORI's table, then measures the baselines in the same run and prints them beside it. Flags keep MORI's
 * names and defaults where MORI has them; flags that name hardware this build does not drive, or that this
 * machine does not have (a GPU, a device id), fail at once with a message naming the flag and its value,
 * before anything is started. With {@code --mem-type gpu} both buffers are device memory (each end's own
 * device), the baselines add the driver's raw host<->device copies on the local device, and
 * {@code --compare-cpu} measures the same sweep between host buffers of the same target for the ratio. With
 * {@code --backend rdma} both engines use the RDMA backend on the provider of {@code --rdma-provider} (real NICs
 * through libibverbs, or the software provider, whose rows are labelled emulation), and {@code --compare-tcp}
 * (on by default) measures the same points over TCP in the same run ({@link RdmaBench}). With {@code --backend tcp},
 * {@code --rounds N} repeats the sweep and the baselines N times on the same warm engine and judges each ratio on the
 * median of the rounds' ratios ({@link TcpBenchRounds}, {@link PairedRatios}).
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Measure mori4j transfers between two processes and print MORI's table with baselines beside it.")
public final class BenchCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--backend", defaultValue = "tcp", description = "Transfer backend: tcp, xgmi (GPU memory of this host) or rdma "
      + "(--rdma-provider; without an RDMA device: --rdma-provider software, emulation) (default: ${DEFAULT-VALUE}).")
  String backend;

  @Mixin
  RdmaFlags rdma = new RdmaFlags();

  @Option(names = "--compare-tcp", negatable = true, description = "With --backend rdma: also measure the same points over tcp against the "
      + "same target, alternating with the rdma rows, and print both (default: on with --backend rdma).")
  Boolean compareTcp;

  @Option(names = "--tls", description = "Measure every point over plain TCP and over TLS 1.3 in turn (two spawned targets, a "
      + "throwaway key) and print TLS's bandwidth as a share of plain TCP's (TlsBench).")
  boolean tls;

  @Option(names = "--xgmi-single-process", description = "With --backend xgmi: the target engine in this JVM (direct peer copies) instead of a child JVM (IPC handles).")
  boolean xgmiSingleProcess;

  @Mixin
  SweepOptions sweep = new SweepOptions();

  @Option(names = "--mem-type", description = "Memory of this side's buffer: cpu or gpu (default: cpu; gpu with --backend xgmi).")
  String memType;

  @Option(names = "--gpu-device", defaultValue = "0", description = "With --mem-type gpu: this side's device (default: ${DEFAULT-VALUE}).")
  int gpuDevice;

  @Option(names = "--target-mem-type", description = "Memory of the spawned target's buffer: cpu or gpu (default: as --mem-type).")
  String targetMemType;

  @Option(names = "--target-gpu-device", description = "The spawned target's device when its memory is gpu (default: as --gpu-device).")
  Integer targetGpuDevice;

  @Option(names = "--compare-cpu", description = "With GPU memory on either end: also measure the same sweep between CPU buffers "
      + "(same target) and print the GPU rows as a share of them.")
  boolean compareCpu;

  @Option(names = "--compare-cpu-rounds", paramLabel = "N", description = "With --compare-cpu: measure the GPU and CPU rows of every point "
      + "in turns, N rounds, and print each point's GPU/CPU bandwidth ratio as the median over the rounds with its range "
      + "(default: 0, one whole sweep after the other).")
  int compareCpuRounds;

  @Option(names = "--rounds", paramLabel = "N", defaultValue = "1", description = "With --backend tcp: N rounds (1..50) of the whole "
      + "sweep and every baseline on the same warm engine and target, mori4j first in odd rounds and the baselines first in even "
      + "ones, then each ratio of the comparison as the median of the rounds' ratios with its range and the rounds at or better "
      + "than the baseline. Pairs mori4j with its baselines; --compare-cpu-rounds pairs GPU with CPU rows point by point "
      + "instead, and the two do not combine (default: ${DEFAULT-VALUE}).")
  int rounds;

  @Option(names = "--peer", paramLabel = "HOST:PORT", description = "Use a running 'mori4j serve' instead of starting one.")
  String peer;

  @Option(names = "--peer-nio", paramLabel = "PORT", description = "With --peer: the nio= port from serve's READY line, for the NIO baseline.")
  Integer peerNio;

  @Option(names = "--host", defaultValue = "127.0.0.1", description = "Host this side's engine binds; the target must reach it (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--json", paramLabel = "FILE", description = "Also write the rows as JSON to FILE and the baselines to FILE.baselines.json; with --rounds every "
      + "object has its round and the paired ratios go to FILE.paired.json.")
  Path json;

  @Option(names = "--plot", paramLabel = "FILE.svg", description = "Also draw bandwidth and latency by size, the rows beside the "
      + "baselines of this run, as an SVG for a browser.")
  Path plot;

  @Option(names = "--baselines", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Measure the NIO, iperf3 and ucx_perftest baselines in the same run (default: on).")
  boolean baselines;

  @Option(names = "--pingpong-iters", defaultValue = "10000", description = "Round trips of the NIO ping-pong baseline (default: ${DEFAULT-VALUE}).")
  int pingpongIters;

  @Option(names = "--iperf-seconds", defaultValue = "5", description = "Duration of the iperf3 baseline (default: ${DEFAULT-VALUE}).")
  int iperfSeconds;

  @Mixin
  TcpOptions tcp = new TcpOptions();

  /** --backend xgmi, set by {@link #validate()}. */
  private boolean xgmi;

  /** The resolved provider with --backend rdma (null otherwise), set by {@link #validate()}. */
  private RdmaFlags.Provider rdmaProvider;

  /** "cpu" or "gpu", set by {@link #validate()}. */
  private String localMem;
  private String targetMem;

  /** Accepts exactly "read" or "write" (any case) and says which flag and value were wrong otherwise. */
  static final class OpConverter implements ITypeConverter<EngineBenchmark.Op> {
    @Override
    public EngineBenchmark.Op convert(String value) {
      return switch (value.toLowerCase(Locale.ROOT)) {
        case "read" -> EngineBenchmark.Op.READ;
        case "write" -> EngineBenchmark.Op.WRITE;
        default -> throw new TypeConversionException("expected 'read' or 'write' but was '" + value + "'");
      };
    }
  }

  /** Checks the flags that picocli's types cannot, and builds the plan; a bad flag is a usage error (exit 2). */
  SweepPlan validate() {
    String b = backend.toLowerCase(Locale.ROOT);
    if (!b.equals("tcp") && !b.equals("xgmi") && !b.equals("rdma")) throw usage("unknown --backend '" + backend + "' (expected tcp, xgmi or rdma)");
    xgmi = b.equals("xgmi");
    boolean rdmaBackend = b.equals("rdma");
    if (!rdmaBackend && rdma.anyGiven()) throw usage(rdma.firstGiven() + " needs --backend rdma");
    if (!rdmaBackend && compareTcp != null) throw usage("--" + (compareTcp ? "" : "no-") + "compare-tcp needs --backend rdma");
    if (rdmaBackend && compareCpu) throw usage("--compare-cpu is for --backend tcp; --backend rdma compares with tcp (--compare-tcp)");
    if (xgmiSingleProcess && !xgmi) throw usage("--xgmi-single-process needs --backend xgmi");
    if (xgmi && peer != null) throw usage("--backend xgmi starts its own target (a child JVM, or this JVM with --xgmi-single-process); --peer is for tcp");
    if (xgmi && compareCpu) throw usage("--compare-cpu compares GPU with CPU memory over tcp; --backend xgmi moves GPU memory only");
    String mt = memType != null ? memType : xgmi ? "gpu" : "cpu";
    localMem = BenchGpu.memType(mt);
    if (localMem == null) throw usage("unknown --mem-type '" + mt + "' (expected cpu or gpu)");
    if (targetMemType != null && peer != null)
      throw usage("--target-mem-type sets up the spawned target; with --peer start serve with --mem-type instead");
    if (targetGpuDevice != null && peer != null)
      throw usage("--target-gpu-device sets up the spawned target; with --peer start serve with --gpu-device instead");
    targetMem = targetMemType == null ? localMem : BenchGpu.memType(targetMemType);
    if (targetMem == null) throw usage("unknown --target-mem-type '" + targetMemType + "' (expected cpu or gpu)");
    if (xgmi && (!"gpu".equals(localMem) || !targetMem.equals("gpu")))
      throw usage("--backend xgmi moves GPU memory only: both ends must be gpu (got --mem-type " + mt + ", target " + targetMem + ")");
    if (gpuDevice < 0) throw usage("--gpu-device must not be negative: " + gpuDevice);
    if (targetGpuDevice != null && targetGpuDevice < 0) throw usage("--target-gpu-device must not be negative: " + targetGpuDevice);
    if (compareCpu && localMem.equals("cpu") && (peer != null || targetMem.equals("cpu")))
      throw usage("--compare-cpu compares GPU memory with CPU memory: it needs --mem-type gpu or --target-mem-type gpu");
    if (compareCpuRounds < 0 || compareCpuRounds > 1000) throw usage("--compare-cpu-rounds must be in 0..1000: " + compareCpuRounds);
    if (compareCpuRounds > 0 && !compareCpu) throw usage("--compare-cpu-rounds needs --compare-cpu");
    checkRounds(b);
    if (pingpongIters < 1) throw usage("--pingpong-iters must be at least 1: " + pingpongIters);
    if (iperfSeconds < 1 || iperfSeconds > 60) throw usage("--iperf-seconds must be in 1..60: " + iperfSeconds);
    if (peerNio != null && peer == null) throw usage("--peer-nio needs --peer");
    if (peer != null) PeerAddress.parse(peer, this::usage);
    BenchPlot.check(plot, this::usage);
    try {
      tcp.config();
    } catch (IllegalArgumentException e) {
      throw usage(e.getMessage());
    }
    SweepPlan plan = sweep.plan(this::usage);
    // last: the flags are checked before this machine is asked for its RDMA devices
    rdmaProvider = rdmaBackend ? rdma.resolve(this::usage, RdmaFlags::engineChoice) : null;
    return plan;
  }

  /** --rounds: a count in range, a backend and mode it applies to, and baselines to pair with. */
  private void checkRounds(String b) {
    if (rounds < 1 || rounds > 50) throw usage("--rounds must be in 1..50: " + rounds);
    if (rounds == 1) return;
    if (!b.equals("tcp")) throw usage("--rounds " + rounds + " is for --backend tcp (got --backend " + backend + ")");
    if (tls) throw usage("--rounds " + rounds + " pairs mori4j with its baselines; --tls compares plain TCP with TLS and runs no baselines");
    if (!baselines) throw usage("--rounds " + rounds + " with --no-baselines: nothing to pair mori4j's rows with");
    if (compareCpuRounds > 0)
      throw usage("--rounds " + rounds + " with --compare-cpu-rounds " + compareCpuRounds + ": --rounds pairs whole sweeps with the "
          + "baselines, --compare-cpu-rounds pairs GPU with CPU rows point by point; use one");
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  private int targetDevice() {
    return targetGpuDevice != null ? targetGpuDevice : gpuDevice;
  }

  /**
   * The GPU runtime when either end of this machine uses GPU memory, null otherwise; a machine without one,
   * or without the named device, is a usage error (exit 2) with the runtime's message, before anything starts.
   */
  private GpuRuntime checkGpu() {
    boolean local = localMem.equals("gpu");
    boolean target = peer == null && targetMem.equals("gpu");
    if (!local && !target) return null;
    GpuRuntime gpu = BenchGpu.runtime();
    String problem = local ? BenchGpu.problem(gpu, xgmi ? "--backend xgmi" : "--mem-type gpu", "--gpu-device", gpuDevice) : null;
    if (problem == null && target) {
      problem = BenchGpu.problem(gpu, targetMemType != null ? "--target-mem-type gpu" : "--mem-type gpu",
          targetGpuDevice != null ? "--target-gpu-device" : "--gpu-device (the target's device unless --target-gpu-device)", targetDevice());
    }
    if (problem != null) throw usage(problem);
    return gpu;
  }

  @Override
  public Integer call() throws Exception {
    SweepPlan plan = validate();
    GpuRuntime gpu = checkGpu();
    if (tls) {
      if (rdmaProvider != null || xgmi || peer != null || compareCpu || !localMem.equals("cpu") || !targetMem.equals("cpu"))
        throw usage("--tls compares plain TCP with TLS between host buffers of targets it starts itself: --backend tcp and cpu memory "
            + "only, without --peer or --compare-cpu");
      return TlsBench.run(new TlsBench.Settings(plan, sweep, tcp, host, json), System.out);
    }
    if (rdmaProvider != null) {
      return RdmaBench.run(new RdmaBench.Settings(plan, sweep, rdmaProvider, rdma.config(this::usage), rdma.asArgs(), tcp.config(), tcp.asArgs(),
          compareTcp == null || compareTcp, localMem, gpuDevice, targetMem, targetDevice(), peer, peerNio, host, json, baselines, pingpongIters,
          iperfSeconds, plot), gpu, System.out);
    }
    if (xgmi) {
      return XgmiBench.run(new XgmiBench.Settings(plan, sweep.op, sweep.batchTransfer, sweep.session, sweep.iters, sweep.warmupIters,
          sweep.warmupNanos(), sweep.maxBuffer, sweep.reversedBlocks(), xgmiSingleProcess, gpuDevice, targetDevice(), host, json,
          baselines, plot), gpu, System.out);
    }
    PrintStream out = System.out;
    TargetProcess target = null;
    try {
      String peerHost;
      int peerPort;
      int nioPort;
      String targetNote;
      if (peer == null) {
        List<String> serveArgs = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0", "--buffer-size", Long.toString(plan.bufferBytes())));
        serveArgs.addAll(tcp.asArgs());
        if (targetMem.equals("gpu")) serveArgs.addAll(List.of("--mem-type", "gpu", "--gpu-device", Integer.toString(targetDevice())));
        if (compareCpu) serveArgs.add("--cpu-buffer");
        target = TargetProcess.start(serveArgs, Duration.ofSeconds(60), System.err);
        peerHost = target.ready().host();
        peerPort = target.ready().port();
        nioPort = target.ready().nioPort();
        targetNote = "child JVM, " + HumanSize.format(plan.bufferBytes()) + " buffer";
      } else {
        PeerAddress a = PeerAddress.parse(peer, this::usage);
        peerHost = a.host();
        peerPort = a.port();
        nioPort = peerNio == null ? 0 : peerNio;
        targetNote = "running serve";
      }
      out.printf(Locale.ROOT, "mori4j bench: backend=tcp op=%s mem=%s target-mem=%s batch-transfer=%s session=%s iters=%d warmup=%d/%dms points=%d%s%s%n",
          sweep.op.name().toLowerCase(Locale.ROOT), localMem, peer == null ? targetMem : "(serve's)", sweep.batchTransfer, sweep.session,
          sweep.iters, sweep.warmupIters, sweep.warmupMs, plan.points().size(), compareCpu ? " compare-cpu" : "", rounds > 1 ? " rounds=" + rounds : "");
      out.printf(Locale.ROOT, "  target %s:%d (%s), tcp %s%n", peerHost, peerPort, targetNote, tcp.config());
      if (gpu != null) out.printf(Locale.ROOT, "  gpu runtime %s: %s%n", gpu.name(), gpu.version());
      out.flush();
      TcpBenchPass pass = new TcpBenchPass(host, tcp, sweep, localMem, gpuDevice, compareCpu, compareCpuRounds);
      TcpBenchRounds report = new TcpBenchRounds(plan, sweep, rounds, baselines, new Baselines.Settings(peerHost, nioPort, 0, sweep.iters,
          sweep.warmupIters, sweep.warmupNanos(), pingpongIters, iperfSeconds), localMem, gpuDevice, peer == null, compareCpu, json, plot);
      try (TcpBenchPass.Warm warm = pass.open(plan, peerHost, peerPort, target, gpu)) {
        report.run(warm, gpu, out);
      }
      return 0;
    } catch (EngineBenchmark.IntegrityException | EngineBenchmark.TransferFailedException e) {
      if (target != null && target.shuttingDown()) {
        // Ctrl-C/SIGTERM stopped the target under the running transfers: not a transfer failure
        System.err.println("mori4j bench: interrupted");
        return 130;
      }
      System.err.println("mori4j bench: " + e.getMessage());
      if (target != null && !target.alive()) System.err.println("target process exited" + target.stderrTail());
      return 1;
    } finally {
      if (target != null) target.close();
    }
  }
}
