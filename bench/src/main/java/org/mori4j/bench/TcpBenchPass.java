package org.mori4j.bench;

import java.util.ArrayList;
import java.util.List;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.transport.tcp.CallerDriveStats;

/**
 * The measuring part of {@code mori4j bench --backend tcp}: one initiator engine against the target, its buffers,
 * and the sweep (or, with {@code --compare-cpu}, the GPU and the CPU sweeps, in passes or alternating rounds), with
 * the line that names each pass's path and the caller-drive counts. It is separate from {@link BenchCommand}, which
 * checks the flags, starts the target and prints the report, because running the engine is a phase of its own; it
 * is made from the flags that command checked. {@link #open} keeps the engine, its connections and buffers warm
 * between the sweeps of {@code --rounds}, so that a later round measures the same engine and not a new one's start.
 */
final class TcpBenchPass {
  /** What one engine pass measured: the main rows, the CPU rows of --compare-cpu, and both ends' memory. */
  record EngineRun(List<ResultRow> rows, List<ResultRow> cpuRows, String localWhere, String remoteWhere, int remoteGpu,
                   List<String> paths, String registration, List<String> ratioLines) {}

  private final String host;
  private final TcpOptions tcp;
  private final SweepOptions sweep;
  /** "cpu" or "gpu". */
  private final String localMem;
  private final int gpuDevice;
  private final boolean compareCpu;
  private final int compareCpuRounds;

  TcpBenchPass(String host, TcpOptions tcp, SweepOptions sweep, String localMem, int gpuDevice, boolean compareCpu, int compareCpuRounds) {
    this.host = host;
    this.tcp = tcp;
    this.sweep = sweep;
    this.localMem = localMem;
    this.gpuDevice = gpuDevice;
    this.compareCpu = compareCpu;
    this.compareCpuRounds = compareCpuRounds;
  }

  /** The engine connected to the target with both benchmarks' buffers registered; {@link Warm#sweep} as often as asked. */
  Warm open(SweepPlan plan, String peerHost, int peerPort, TargetProcess target, GpuRuntime gpu) {
    BenchBuffers buffers = new BenchBuffers();
    IoEngine engine = null;
    try {
      engine = IoEngine.create("initiator-" + ProcessHandle.current().pid(), new IoEngineConfig(host, 0));
      engine.createBackend(BackendType.TCP, tcp.config());
      EngineDesc remoteEngine = engine.discover(peerHost, peerPort);
      engine.registerRemoteEngine(remoteEngine);
      MemoryDesc remote = lookup(engine, remoteEngine, ServeCommand.BUFFER_NAME, "");
      MemoryDesc remoteCpu = compareCpu
          ? lookup(engine, remoteEngine, ServeCommand.CPU_BUFFER_NAME, " (start serve with --cpu-buffer for --compare-cpu)") : null;
      boolean localGpu = localMem.equals("gpu");
      EngineBenchmark main = bench(plan, engine, buffers, localGpu ? gpu : null, remote);
      EngineBenchmark cpu = compareCpu ? bench(plan, engine, buffers, null, remoteCpu) : null;
      return new Warm(plan, engine, buffers, remote, main, cpu, target);
    } catch (RuntimeException | Error e) {
      // the engine first: it may touch the buffers until it is closed
      try {
        if (engine != null) engine.close();
      } finally {
        buffers.close();
      }
      throw e;
    }
  }

  /**
   * The open engine of {@link #open}; closing it (once, later closes do nothing) closes the engine, then frees the
   * buffers. {@link #capacity} and {@link #remoteGpu} still answer after the close.
   */
  final class Warm implements AutoCloseable {
    private final SweepPlan plan;
    private final IoEngine engine;
    private final BenchBuffers buffers;
    private final MemoryDesc remote;
    private final EngineBenchmark main;
    private final EngineBenchmark cpu;
    private final TargetProcess target;
    private boolean closed;

    private Warm(SweepPlan plan, IoEngine engine, BenchBuffers buffers, MemoryDesc remote, EngineBenchmark main, EngineBenchmark cpu,
                 TargetProcess target) {
      this.plan = plan;
      this.engine = engine;
      this.buffers = buffers;
      this.remote = remote;
      this.main = main;
      this.cpu = cpu;
      this.target = target;
    }

    /** Bytes the main benchmark's blocks cycle over: the NIO baseline cycles over as many. */
    long capacity() {
      return main.capacity();
    }

    /** The target buffer's device, or -1 for host memory (known before any sweep: the raw-copy baselines need it). */
    int remoteGpu() {
      return remote.location() == MemoryLocationType.GPU ? remote.deviceId() : -1;
    }

    /** One sweep of the plan (both series with --compare-cpu), with its path lines and the caller-drive counts so far. */
    EngineRun sweep() {
      if (closed) throw new IllegalStateException("the engine was closed");
      int passes = cpu != null ? 2 : 1;
      ProgressBar progress = ProgressBar.forConsole(passes * plan.points().size() * Math.max(1, compareCpuRounds));
      Runnable alive = () -> {
        if (target != null && !target.alive()) throw new IllegalStateException("target process died" + target.stderrTail());
      };
      try {
        List<String> paths = new ArrayList<>();
        List<ResultRow> rows, cpuRows;
        List<String> ratios = List.of();
        if (compareCpuRounds > 0) {
          CpuGpuRounds.Result r = CpuGpuRounds.run(plan.points(), main, cpu, compareCpuRounds, sweep, progress, alive);
          rows = r.gpuRows();
          cpuRows = r.cpuRows();
          ratios = r.ratioLines();
          paths.add("path of every row: " + main.pathLine());
          paths.add("path of every cpu row: " + cpu.pathLine());
        } else {
          rows = pass(main, progress, "", paths, alive);
          cpuRows = cpu != null ? pass(cpu, progress, "cpu ", paths, alive) : List.of();
        }
        // which way the small requests went (a run's latency mode shows here: spins that expire park the caller)
        paths.add(String.format("tcp caller-drive (this engine, all rows and warm-up so far): sent %d, read by the caller %d,"
            + " spin expired %d, handed off %d, abandoned %d", CallerDriveStats.sent(), CallerDriveStats.driven(),
            CallerDriveStats.spinExpired(), CallerDriveStats.handedOff(), CallerDriveStats.abandoned()));
        int remoteGpu = remoteGpu();
        return new EngineRun(rows, cpuRows, localMem.equals("gpu") ? "GPU" + gpuDevice : "cpu", remoteGpu >= 0 ? "GPU" + remoteGpu : "cpu",
            remoteGpu, paths, "registration (this engine): " + engine.registrationStats(), ratios);
      } finally {
        progress.finish();
      }
    }

    private List<ResultRow> pass(EngineBenchmark bench, ProgressBar progress, String label, List<String> paths, Runnable alive) {
      List<ResultRow> rows = bench.sweep(plan.points(), sweep.iters, sweep.warmupIters, sweep.warmupNanos(), progress, label, alive);
      // every row of a pass moves the same pair of buffers, so one explanation names the path of each of them
      paths.add("path of every " + label + "row: " + bench.pathLine());
      return rows;
    }

    @Override
    public void close() {
      if (closed) return;
      closed = true;
      try {
        engine.close();
      } finally {
        buffers.close();
      }
    }
  }

  private static MemoryDesc lookup(IoEngine engine, EngineDesc remoteEngine, String name, String hint) {
    return engine.lookupMemory(remoteEngine, name).orElseThrow(() ->
        new IllegalStateException("target " + remoteEngine.key() + " publishes no '" + name + "'" + hint));
  }

  /** The benchmark from a new local buffer on {@code gpu}'s {@link #gpuDevice} (host memory when null) to {@code remote}. */
  private EngineBenchmark bench(SweepPlan plan, IoEngine engine, BenchBuffers buffers, GpuRuntime gpu, MemoryDesc remote) {
    long localBytes = Math.min(plan.bufferBytes(), remote.size());
    BenchMemory local = buffers.add(gpu != null ? BenchMemory.gpu(engine, gpu, gpuDevice, localBytes) : BenchMemory.host(engine, localBytes));
    // same memory type as the local buffer, so a gpu<->gpu run reads its samples back over the same path
    BenchMemory scratch = buffers.add(gpu != null ? BenchMemory.gpu(engine, gpu, gpuDevice, 2 * EngineBenchmark.SAMPLE_BYTES)
        : BenchMemory.host(engine, 2 * EngineBenchmark.SAMPLE_BYTES));
    return sweep.benchmark(engine, local, remote, scratch);
  }
}
