package org.mori4j.bench;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.mori4j.bench.baseline.XgmiCopyBaseline;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineSession;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.XgmiBackendConfig;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * {@code mori4j bench --backend xgmi}: the XGMI backend between GPU buffers of this host, the target engine in
 * a child JVM ({@code serve --backend xgmi}, the default: IPC handles) or in this JVM
 * ({@code --xgmi-single-process}: direct peer copies). Both engines have only the XGMI backend, and the run
 * stops with a clear error if the engine would not route the pair over it. The rows are MORI's table; the
 * baselines are the driver's raw copies between the same two devices in the same run
 * ({@link XgmiCopyBaseline}), and the comparison lines are issue 4's ratios: large writes as a share of the
 * raw copy bandwidth, the 4 KiB p50 against a raw 4 KiB copy + synchronize, batches of 4 KiB blocks in GB/s
 * against a loop of raw copies.
 */
final class XgmiBench {
  private XgmiBench() {}

  /** What {@code bench} passes on: the sweep and the XGMI flags. */
  record Settings(SweepPlan plan, EngineBenchmark.Op op, boolean batchTransfer, boolean session, int iters, int warmupIters,
                  long warmupNanos, long maxBuffer, boolean reversedBlocks, boolean singleProcess, int device, int targetDevice, String host, Path json,
                  boolean baselines, Path plot) {}

  static int run(Settings s, GpuRuntime gpu, PrintStream out) throws Exception {
    String op = s.op().name().toLowerCase(Locale.ROOT);
    out.printf(Locale.ROOT, "mori4j bench: backend=xgmi op=%s GPU%d -> target GPU%d (%s) batch-transfer=%s session=%s iters=%d warmup=%d/%dms points=%d%n",
        op, s.device(), s.targetDevice(), s.singleProcess() ? "same process" : "child JVM", s.batchTransfer(), s.session(), s.iters(),
        s.warmupIters(), s.warmupNanos() / 1_000_000, s.plan().points().size());
    out.printf(Locale.ROOT, "  gpu runtime %s: %s; GPU%d %s%s%n", gpu.name(), gpu.version(), s.device(), gpu.deviceName(s.device()),
        s.device() == s.targetDevice() ? " (one device: device-to-device copies)"
            : ", peer access GPU" + s.device() + "->GPU" + s.targetDevice() + ": " + gpu.canAccessPeer(s.device(), s.targetDevice()));
    out.flush();
    List<ResultRow> rows;
    String title;
    List<String> paths = new ArrayList<>();
    TargetProcess target = null;
    IoEngine targetEngine = null;
    BenchMemory targetBuffer = null;
    try {
      MemoryDesc remote;
      EngineDesc remoteEngine;
      String key = "xgmi-initiator-" + ProcessHandle.current().pid();
      try (BenchBuffers buffers = new BenchBuffers(); IoEngine engine = IoEngine.create(key, new IoEngineConfig(s.host(), 0))) {
        engine.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
        if (s.singleProcess()) {
          targetEngine = IoEngine.create("xgmi-target-" + ProcessHandle.current().pid(), new IoEngineConfig(s.host(), 0));
          targetEngine.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
          targetBuffer = BenchMemory.gpu(targetEngine, gpu, s.targetDevice(), s.plan().bufferBytes());
          remote = targetBuffer.desc();
          remoteEngine = targetEngine.engineDesc();
        } else {
          target = TargetProcess.start(List.of("--host", "127.0.0.1", "--port", "0", "--buffer-size", Long.toString(s.plan().bufferBytes()),
              "--mem-type", "gpu", "--gpu-device", Integer.toString(s.targetDevice()), "--backend", "xgmi"), Duration.ofSeconds(60), System.err);
          remoteEngine = engine.discover(target.ready().host(), target.ready().port());
          remote = engine.lookupMemory(remoteEngine, ServeCommand.BUFFER_NAME).orElseThrow(() ->
              new IllegalStateException("the target publishes no '" + ServeCommand.BUFFER_NAME + "'"));
        }
        engine.registerRemoteEngine(remoteEngine);
        long localBytes = Math.min(s.plan().bufferBytes(), remote.size());
        BenchMemory local = buffers.add(BenchMemory.gpu(engine, gpu, s.device(), localBytes));
        BenchMemory scratch = buffers.add(BenchMemory.gpu(engine, gpu, s.device(), 2 * EngineBenchmark.SAMPLE_BYTES));
        Optional<IoEngineSession> route = engine.createSession(local.desc(), remote);
        if (route.isEmpty() || route.get().backendType() != BackendType.XGMI)
          throw new IllegalStateException("the engine does not route GPU" + s.device() + " -> GPU" + s.targetDevice() + " over XGMI ("
              + route.map(r -> "it chose " + r.backendType()).orElse("no backend serves the pair") + "); see the log for why");
        EngineBenchmark bench = new EngineBenchmark(engine, local, remote, scratch, s.session() ? route.get() : null, s.op(), s.batchTransfer())
            .reversedBlocks(s.reversedBlocks());
        rows = new ArrayList<>();
        ProgressBar progress = ProgressBar.forConsole(s.plan().points().size());
        try {
          for (SweepPlan.Point p : s.plan().points()) {
            if (p.msgSize() > bench.capacity())
              throw new IllegalStateException("the buffers (" + HumanSize.format(bench.capacity()) + ") are smaller than the message size "
                  + HumanSize.format(p.msgSize()));
            progress.show(HumanSize.format(p.msgSize()) + " x " + p.batchSize());
            rows.add(bench.run(p, s.iters(), s.warmupIters(), s.warmupNanos()));
            progress.step();
            if (target != null && !target.alive()) throw new IllegalStateException("target process died" + target.stderrTail());
          }
        } finally {
          progress.finish();
        }
        paths.add("path of every row: " + bench.pathLine());
        paths.add("registration (initiator engine): " + engine.registrationStats());
      }
      title = String.format(Locale.ROOT, "mori4j %s over xgmi, GPU%d <-> target GPU%d memory, %s (batch-transfer %s, session %s%s)", op,
          s.device(), s.targetDevice(), s.singleProcess() ? "same process" : "two processes", s.batchTransfer() ? "on" : "off", s.session() ? "on" : "off",
          s.reversedBlocks() ? ", blocks reversed" : "");
      out.print(ResultTable.render(title, rows));
      for (String p : paths) out.println(p);
      out.flush();
    } catch (EngineBenchmark.IntegrityException | EngineBenchmark.TransferFailedException e) {
      System.err.println("mori4j bench: " + e.getMessage());
      if (target != null && !target.alive()) System.err.println("target process exited" + target.stderrTail());
      return 1;
    } finally {
      if (targetEngine != null) targetEngine.close();
      if (targetBuffer != null) targetBuffer.close();
      if (target != null) target.close();
    }
    List<BaselineRow> base = List.of();
    if (s.baselines()) {
      long bwSize = Math.min(Math.max(rows.stream().mapToLong(ResultRow::msgSize).max().orElse(0), 256L << 20), s.maxBuffer());
      // no 4 KiB batch row, no loop of raw copies to compare it with: a 4,096-copy loop per iteration made a 10,000-iteration
      // 4 KiB latency run's baselines take minutes (the 1x H100 record of 0f746f3 lost them to its time limit)
      int blocks = rows.stream().filter(r -> r.msgSize() == XgmiCopyBaseline.SMALL && r.batchSize() > 1).mapToInt(ResultRow::batchSize).max().orElse(0);
      base = XgmiCopyBaseline.run(gpu, s.device(), s.targetDevice(), bwSize, blocks, s.iters(), s.warmupIters(), s.warmupNanos());
      out.print(ResultTable.renderBaselines("Baselines (same run, raw driver copies)", base));
      List<String> cmp = comparison(rows, base, gpu, s.device(), s.targetDevice());
      if (!cmp.isEmpty()) {
        out.println("Comparison (same run):");
        for (String l : cmp) out.println("  " + l);
      }
    }
    if (s.json() != null) {
      JsonRows.write(s.json(), JsonRows.rowsToJson(rows));
      if (s.baselines()) JsonRows.write(JsonRows.baselinesPath(s.json()), JsonRows.baselinesToJson(base));
      System.err.println("wrote " + s.json() + (s.baselines() ? " and " + JsonRows.baselinesPath(s.json()) : ""));
    }
    if (s.plot() != null) {
      new BenchPlot().measured("mori4j xgmi GPU" + s.device() + "->GPU" + s.targetDevice(), rows).baselines(base)
          .write(s.plot(), title, gpu.name() + " " + gpu.version() + ", GPU" + s.device() + " " + gpu.deviceName(s.device()));
    }
    return 0;
  }

  /** Issue 4's ratios for the rows of this run; a missing baseline is named as missing. */
  static List<String> comparison(List<ResultRow> rows, List<BaselineRow> base, GpuRuntime gpu, int device, int peer) {
    List<String> out = new ArrayList<>();
    Optional<ResultRow> bw = find(base, XgmiCopyBaseline.copySeries(gpu, device, peer));
    Optional<ResultRow> lat = find(base, XgmiCopyBaseline.latencySeries(gpu, device, peer));
    for (ResultRow r : rows) {
      if (r.batchSize() == 1 && r.msgSize() >= (1 << 20)) {
        out.add(String.format(Locale.ROOT, "%s x 1: avg BW %.2f GB/s = %s", HumanSize.format(r.msgSize()), r.avgBwGBps(),
            bw.filter(b -> b.avgBwGBps() > 0).map(b -> String.format(Locale.ROOT, "%.0f%% of the raw copy (%.2f GB/s at %s)",
                100 * r.avgBwGBps() / b.avgBwGBps(), b.avgBwGBps(), HumanSize.format(b.msgSize()))).orElse("raw copy not measured")));
      } else if (r.batchSize() == 1 && r.msgSize() == XgmiCopyBaseline.SMALL) {
        out.add(String.format(Locale.ROOT, "4 KiB x 1: p50 %.2f us = %s", r.p50LatUs(), lat.map(b -> String.format(Locale.ROOT,
            "%.2fx the raw 4 KiB copy + synchronize p50 (%.2f us)", r.p50LatUs() / b.p50LatUs(), b.p50LatUs())).orElse("raw latency not measured")));
      } else if (r.batchSize() > 1 && r.msgSize() == XgmiCopyBaseline.SMALL) {
        Optional<ResultRow> loop = find(base, XgmiCopyBaseline.loopSeries(gpu, device, peer, r.batchSize()));
        out.add(String.format(Locale.ROOT, "4 KiB x %d: avg BW %.2f GB/s; %s", r.batchSize(), r.avgBwGBps(), loop.map(b -> String.format(Locale.ROOT,
            "a loop of raw copies: %.2f GB/s (%.1fx)", b.avgBwGBps(), r.avgBwGBps() / b.avgBwGBps())).orElse("raw copy loop of that batch not measured")));
      }
    }
    return out;
  }

  private static Optional<ResultRow> find(List<BaselineRow> base, String series) {
    return base.stream().filter(b -> b.series().equals(series) && b.row() != null).map(BaselineRow::row).findFirst();
  }
}
