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

/**
 * The measuring part of {@code mori4j bench --backend tcp}: one initiator engine against the target, its buffers,
 * and the sweep (or, with {@code --compare-cpu}, the GPU and the CPU sweeps, in passes or alternating rounds), with
 * the line that names each pass's path and the caller-drive counts. It is separate from {@link BenchCommand}, which
 * checks the flags, starts the target and prints the report, because running the engine is a phase of its own; it
 * is made from the flags that command checked.
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
  /** Bytes the measured blocks cycle over (both buffers), known once the target's buffer was looked up. */
  private long capacity;

  TcpBenchPass(String host, TcpOptions tcp, SweepOptions sweep, String localMem, int gpuDevice, boolean compareCpu, int compareCpuRounds) {
    this.host = host;
    this.tcp = tcp;
    this.sweep = sweep;
    this.localMem = localMem;
    this.gpuDevice = gpuDevice;
    this.compareCpu = compareCpu;
    this.compareCpuRounds = compareCpuRounds;
  }

  /** Bytes the main benchmark's blocks cycled over (0 before {@link #run}). */
  long capacity() {
    return capacity;
  }

  EngineRun run(SweepPlan plan, String peerHost, int peerPort, TargetProcess target, GpuRuntime gpu) {
    String key = "initiator-" + ProcessHandle.current().pid();
    // closed after the engine (resources close in reverse order): the engine may touch the buffers until then
    try (BenchBuffers buffers = new BenchBuffers(); IoEngine engine = IoEngine.create(key, new IoEngineConfig(host, 0))) {
      engine.createBackend(BackendType.TCP, tcp.config());
      EngineDesc remoteEngine = engine.discover(peerHost, peerPort);
      engine.registerRemoteEngine(remoteEngine);
      MemoryDesc remote = lookup(engine, remoteEngine, ServeCommand.BUFFER_NAME, "");
      boolean localGpu = localMem.equals("gpu");
      MemoryDesc remoteCpu = compareCpu
          ? lookup(engine, remoteEngine, ServeCommand.CPU_BUFFER_NAME, " (start serve with --cpu-buffer for --compare-cpu)") : null;
      int passes = compareCpu ? 2 : 1;
      ProgressBar progress = ProgressBar.forConsole(passes * plan.points().size() * Math.max(1, compareCpuRounds));
      try {
        List<String> paths = new ArrayList<>();
        List<ResultRow> rows, cpuRows;
        List<String> ratios = List.of();
        if (compareCpuRounds > 0) {
          Runnable alive = () -> {
            if (target != null && !target.alive()) throw new IllegalStateException("target process died" + target.stderrTail());
          };
          EngineBenchmark g = bench(plan, engine, buffers, localGpu ? gpu : null, remote, true);
          EngineBenchmark c = bench(plan, engine, buffers, null, remoteCpu, false);
          CpuGpuRounds.Result r = CpuGpuRounds.run(plan.points(), g, c, compareCpuRounds, sweep, progress, alive);
          rows = r.gpuRows();
          cpuRows = r.cpuRows();
          ratios = r.ratioLines();
          paths.add("path of every row: " + g.pathLine());
          paths.add("path of every cpu row: " + c.pathLine());
        } else {
          rows = pass(plan, engine, buffers, localGpu ? gpu : null, remote, target, progress, "", paths);
          cpuRows = compareCpu ? pass(plan, engine, buffers, null, remoteCpu, target, progress, "cpu ", paths) : List.of();
        }
        // which way the small requests went (a run's latency mode shows here: spins that expire park the caller)
        paths.add(String.format("tcp caller-drive (this engine, all rows and warm-up): sent %d, read by the caller %d,"
              + " spin expired %d, handed off %d, abandoned %d", org.mori4j.transport.tcp.CallerDriveStats.sent(),
              org.mori4j.transport.tcp.CallerDriveStats.driven(), org.mori4j.transport.tcp.CallerDriveStats.spinExpired(),
              org.mori4j.transport.tcp.CallerDriveStats.handedOff(), org.mori4j.transport.tcp.CallerDriveStats.abandoned()));
        boolean remoteOnGpu = remote.location() == MemoryLocationType.GPU;
        return new EngineRun(rows, cpuRows, localGpu ? "GPU" + gpuDevice : "cpu", remoteOnGpu ? "GPU" + remote.deviceId() : "cpu",
            remoteOnGpu ? remote.deviceId() : -1, paths, "registration (this engine): " + engine.registrationStats(), ratios);
      } finally {
        progress.finish();
      }
    }
  }

  private static MemoryDesc lookup(IoEngine engine, EngineDesc remoteEngine, String name, String hint) {
    return engine.lookupMemory(remoteEngine, name).orElseThrow(() ->
        new IllegalStateException("target " + remoteEngine.key() + " publishes no '" + name + "'" + hint));
  }

  /** The benchmark from a new local buffer on {@code gpu}'s {@link #gpuDevice} (host memory when null) to {@code remote}. */
  private EngineBenchmark bench(SweepPlan plan, IoEngine engine, BenchBuffers buffers, GpuRuntime gpu, MemoryDesc remote, boolean main) {
    long localBytes = Math.min(plan.bufferBytes(), remote.size());
    BenchMemory local = buffers.add(gpu != null ? BenchMemory.gpu(engine, gpu, gpuDevice, localBytes) : BenchMemory.host(engine, localBytes));
    // same memory type as the local buffer, so a gpu<->gpu run reads its samples back over the same path
    BenchMemory scratch = buffers.add(gpu != null ? BenchMemory.gpu(engine, gpu, gpuDevice, 2 * EngineBenchmark.SAMPLE_BYTES)
        : BenchMemory.host(engine, 2 * EngineBenchmark.SAMPLE_BYTES));
    EngineBenchmark bench = sweep.benchmark(engine, local, remote, scratch);
    if (main) capacity = bench.capacity();
    return bench;
  }

  /** One sweep against {@code remote}, from a local buffer on {@code gpu}'s {@link #gpuDevice} (host memory when null). */
  private List<ResultRow> pass(SweepPlan plan, IoEngine engine, BenchBuffers buffers, GpuRuntime gpu, MemoryDesc remote, TargetProcess target,
                               ProgressBar progress, String label, List<String> paths) {
    EngineBenchmark bench = bench(plan, engine, buffers, gpu, remote, label.isEmpty());
    List<ResultRow> rows = bench.sweep(plan.points(), sweep.iters, sweep.warmupIters, sweep.warmupNanos(), progress, label, () -> {
      if (target != null && !target.alive()) throw new IllegalStateException("target process died" + target.stderrTail());
    });
    // every row of a pass moves the same pair of buffers, so one explanation names the path of each of them
    paths.add("path of every " + (label.isEmpty() ? "" : label) + "row: " + bench.pathLine());
    return rows;
  }
}
