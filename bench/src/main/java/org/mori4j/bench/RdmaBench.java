package org.mori4j.bench;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.mori4j.bench.baseline.Baselines;
import org.mori4j.io.BackendConfig;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.IoEngineSession;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * {@code mori4j bench --backend rdma}: the RDMA backend between this JVM and a target ({@code serve --backend
 * rdma} in a child JVM given the same provider as {@code -Dmori4j.rdma.provider}, or a running one by
 * {@code --peer}). The initiator's engine has only the RDMA backend, and the run stops if the engine would not
 * route the pair over it, so no row labelled rdma can have moved over TCP. With {@code --compare-tcp} (the
 * default) a second engine with only the TCP backend measures the same points against the same target buffer,
 * one point at a time, alternating with the RDMA rows, so that both see the same load on a shared machine; the
 * two sets of rows are printed in one table, each row naming its backend. The software provider's rows say
 * {@code rdma (software provider: emulation)} in the table, the comparison lines and the JSON: they measure a
 * user-space RDMA device over TCP, never a NIC.
 */
final class RdmaBench {
  private RdmaBench() {}

  /** What {@code bench} passes on: the sweep, the provider and both backends' settings, the memory of each end. */
  record Settings(SweepPlan plan, SweepOptions sweep, RdmaFlags.Provider provider, RdmaBackendConfig rdma, List<String> rdmaArgs,
                  TcpBackendConfig tcp, List<String> tcpArgs, boolean compareTcp, String localMem, int gpuDevice, String targetMem,
                  int targetDevice, String peer, Integer peerNio, String host, Path json, boolean baselines, int pingpongIters,
                  int iperfSeconds, Path plot) {}

  /** One initiator engine's view of the target: its buffers and the benchmark that moves them. */
  private record Side(EngineBenchmark bench, String remoteWhere) {}

  static int run(Settings s, GpuRuntime gpu, PrintStream out) throws Exception {
    RdmaFlags.Provider provider = s.provider();
    TargetProcess target = null;
    try {
      String peerHost;
      int peerPort;
      int nioPort;
      String targetNote;
      if (s.peer() == null) {
        List<String> serveArgs = new ArrayList<>(List.of("--backend", "rdma", "--host", "127.0.0.1", "--port", "0", "--buffer-size",
            Long.toString(s.plan().bufferBytes())));
        serveArgs.addAll(s.tcpArgs());
        serveArgs.addAll(s.rdmaArgs());
        if (s.targetMem().equals("gpu")) serveArgs.addAll(List.of("--mem-type", "gpu", "--gpu-device", Integer.toString(s.targetDevice())));
        // the provider as the child's engine configuration, the way MORI4J_RDMA_PROVIDER would set it
        target = TargetProcess.start(RdmaFlags.jvmArgs(provider), "serve", serveArgs, Duration.ofSeconds(60), System.err);
        peerHost = target.ready().host();
        peerPort = target.ready().port();
        nioPort = target.ready().nioPort();
        targetNote = "child JVM, " + HumanSize.format(s.plan().bufferBytes()) + " buffer, provider " + provider.name();
      } else {
        PeerAddress a = PeerAddress.parse(s.peer(), IllegalArgumentException::new);
        peerHost = a.host();
        peerPort = a.port();
        nioPort = s.peerNio() == null ? 0 : s.peerNio();
        targetNote = "running serve, which needs --backend rdma --rdma-provider " + provider.name();
      }
      SweepOptions sw = s.sweep();
      String op = sw.op.name().toLowerCase(Locale.ROOT);
      out.printf(Locale.ROOT, "mori4j bench: backend=%s op=%s mem=%s target-mem=%s batch-transfer=%s session=%s iters=%d warmup=%d/%dms points=%d%s%n",
          provider.label(), op, s.localMem(), s.peer() == null ? s.targetMem() : "(serve's)", sw.batchTransfer, sw.session, sw.iters,
          sw.warmupIters, sw.warmupMs, s.plan().points().size(), s.compareTcp() ? " compare-tcp" : "");
      out.printf(Locale.ROOT, "  target %s:%d (%s), rdma %s%s%n", peerHost, peerPort, targetNote, s.rdma(),
          s.compareTcp() ? ", tcp " + s.tcp() : "");
      if (provider.emulated()) {
        out.println("  the software provider is a user-space RDMA device in Java over TCP (emulation): its rows are not NIC performance");
      } else {
        out.println("  ibverbs provider, RDMA devices " + provider.devices() + " (MORI_RDMA_DEVICES selects among them)");
      }
      if (gpu != null) out.printf(Locale.ROOT, "  gpu runtime %s: %s%n", gpu.name(), gpu.version());
      out.flush();

      List<ResultRow> rdmaRows = new ArrayList<>();
      List<ResultRow> tcpRows = new ArrayList<>();
      List<String> paths = new ArrayList<>();
      String[] where = new String[1];
      long[] capacity = new long[1];
      TargetProcess t = target;
      Runnable alive = () -> {
        if (t != null && !t.alive()) throw new IllegalStateException("target process died" + t.stderrTail());
      };
      String key = "initiator-" + ProcessHandle.current().pid();
      // closed in reverse order: the engines before the buffers they may still touch
      try (BenchBuffers buffers = new BenchBuffers();
           IoEngine rdmaEngine = RdmaFlags.withProvider(provider, () -> IoEngine.create("rdma-" + key, new IoEngineConfig(s.host(), 0)));
           IoEngine tcpEngine = s.compareTcp() ? IoEngine.create("tcp-" + key, new IoEngineConfig(s.host(), 0)) : null) {
        Side rdma;
        try {
          rdma = side(s, rdmaEngine, BackendType.RDMA, s.rdma(), peerHost, peerPort, buffers, gpu);
        } catch (IoEngineException e) {
          System.err.println("mori4j bench: the RDMA backend on the " + provider.name() + " provider failed: " + e.getMessage());
          if (target != null && !target.alive()) System.err.println("target process exited" + target.stderrTail());
          return 1;
        }
        Side tcp = tcpEngine != null ? side(s, tcpEngine, BackendType.TCP, s.tcp(), peerHost, peerPort, buffers, gpu) : null;
        where[0] = rdma.remoteWhere();
        capacity[0] = rdma.bench().capacity();
        ProgressBar progress = ProgressBar.forConsole((tcp != null ? 2 : 1) * s.plan().points().size());
        try {
          for (SweepPlan.Point p : s.plan().points()) {
            if (p.msgSize() > rdma.bench().capacity())
              throw new IllegalStateException("the target buffer (" + HumanSize.format(rdma.bench().capacity()) + ") is smaller than the message size "
                  + HumanSize.format(p.msgSize()) + "; give the target a larger --buffer-size");
            // alternating per point: a burst of load from the machine's neighbours then hits both backends alike
            progress.show("rdma " + HumanSize.format(p.msgSize()) + " x " + p.batchSize());
            rdmaRows.add(rdma.bench().run(p, sw.iters, sw.warmupIters, sw.warmupNanos()));
            progress.step();
            alive.run();
            if (tcp != null) {
              progress.show("tcp " + HumanSize.format(p.msgSize()) + " x " + p.batchSize());
              tcpRows.add(tcp.bench().run(p, sw.iters, sw.warmupIters, sw.warmupNanos()));
              progress.step();
              alive.run();
            }
          }
        } finally {
          progress.finish();
        }
        // while the engines are open: what each series' rows really took, and what registering their buffers cost
        paths.add("path of every " + provider.label() + " row: " + rdma.bench().pathLine());
        if (tcp != null) paths.add("path of every tcp row: " + tcp.bench().pathLine());
        paths.add("registration (" + provider.label() + " engine): " + rdmaEngine.registrationStats());
      }

      List<String> labels = new ArrayList<>();
      List<ResultRow> all = new ArrayList<>();
      for (int i = 0; i < rdmaRows.size(); i++) {
        labels.add(provider.label());
        all.add(rdmaRows.get(i));
        if (i < tcpRows.size()) {
          labels.add("tcp");
          all.add(tcpRows.get(i));
        }
      }
      String mem = s.localMem().equals("cpu") && where[0].equals("cpu") ? "cpu memory"
          : (s.localMem().equals("gpu") ? "GPU" + s.gpuDevice() : "cpu") + " <-> target " + where[0] + " memory";
      String title = String.format(Locale.ROOT, "mori4j %s over %s%s, %s (batch-transfer %s, session %s%s)", op, provider.label(),
          s.compareTcp() ? " beside tcp (same target, alternating per point)" : "", mem, sw.batchTransfer ? "on" : "off", sw.session ? "on" : "off",
          sw.reversedBlocks() ? ", blocks reversed" : "");
      out.print(ResultTable.renderWithBackend(title, labels, all));
      for (String p : paths) out.println(p);
      // EngineBenchmark.run throws on the first wrong byte, so reaching this line means every row's sample matched
      out.printf(Locale.ROOT, "bytes verified: %d row(s), each row's sample (first and last %d B of the first, middle and last slot) "
          + "matched its pattern%n", all.size(), EngineBenchmark.SAMPLE_BYTES);
      out.flush();

      List<BaselineRow> base = List.of();
      if (s.baselines()) {
        ProgressBar progress = ProgressBar.forConsole(Baselines.steps(s.plan()));
        // the NIO stream cycles over the same bytes as the rows did, so its points match theirs
        base = Baselines.run(s.plan(), new Baselines.Settings(peerHost, nioPort, capacity[0], sw.iters, sw.warmupIters, sw.warmupNanos(),
            s.pingpongIters(), s.iperfSeconds()), progress);
        progress.finish();
        out.print(ResultTable.renderBaselines("Baselines (same run)", base));
      }
      List<String> cmp = new ArrayList<>(tcpLines(provider.label(), rdmaRows, tcpRows));
      if (s.baselines()) {
        for (String l : Comparison.lines(rdmaRows, base)) cmp.add(provider.label() + " " + l);
        for (String l : Comparison.lines(tcpRows, base)) cmp.add("tcp " + l);
      }
      if (!cmp.isEmpty()) {
        out.println("Comparison (same run):");
        for (String l : cmp) out.println("  " + l);
      }
      out.flush();
      if (s.json() != null) {
        JsonRows.write(s.json(), JsonRows.rowsToJson(rdmaRows, "rdma", provider.name(), provider.emulated()));
        List<Path> also = new ArrayList<>();
        if (s.compareTcp()) {
          JsonRows.write(JsonRows.tcpRowsPath(s.json()), JsonRows.rowsToJson(tcpRows, "tcp", null, false));
          also.add(JsonRows.tcpRowsPath(s.json()));
        }
        if (s.baselines()) {
          JsonRows.write(JsonRows.baselinesPath(s.json()), JsonRows.baselinesToJson(base));
          also.add(JsonRows.baselinesPath(s.json()));
        }
        System.err.println("wrote " + s.json() + (also.isEmpty() ? "" : " and " + String.join(", ", also.stream().map(Path::toString).toList())));
      }
      if (s.plot() != null) {
        new BenchPlot().measured(provider.label(), rdmaRows).measured("tcp", tcpRows).baselines(base)
            .write(s.plot(), title, gpu != null ? gpu.name() + " " + gpu.version() : null);
      }
      return 0;
    } catch (EngineBenchmark.IntegrityException | EngineBenchmark.TransferFailedException e) {
      if (target != null && target.shuttingDown()) {
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

  /**
   * Creates {@code type}'s backend on {@code engine} (its only one), finds the target, registers this side's
   * buffers and checks that the engine routes the pair over {@code type}: a row is labelled by the backend that
   * moved it, never by the one that was asked for.
   */
  private static Side side(Settings s, IoEngine engine, BackendType type, BackendConfig config, String peerHost, int peerPort,
                           BenchBuffers buffers, GpuRuntime gpu) {
    engine.createBackend(type, config);
    EngineDesc remoteEngine = engine.discover(peerHost, peerPort);
    engine.registerRemoteEngine(remoteEngine);
    MemoryDesc remote = engine.lookupMemory(remoteEngine, ServeCommand.BUFFER_NAME).orElseThrow(() ->
        new IllegalStateException("target " + remoteEngine.key() + " publishes no '" + ServeCommand.BUFFER_NAME + "'"));
    long localBytes = Math.min(s.plan().bufferBytes(), remote.size());
    boolean localGpu = s.localMem().equals("gpu");
    BenchMemory local = buffers.add(localGpu ? BenchMemory.gpu(engine, gpu, s.gpuDevice(), localBytes) : BenchMemory.host(engine, localBytes));
    BenchMemory scratch = buffers.add(localGpu ? BenchMemory.gpu(engine, gpu, s.gpuDevice(), 2 * EngineBenchmark.SAMPLE_BYTES)
        : BenchMemory.host(engine, 2 * EngineBenchmark.SAMPLE_BYTES));
    Optional<IoEngineSession> route = engine.createSession(local.desc(), remote);
    if (route.isEmpty() || route.get().backendType() != type) {
      throw new IllegalStateException("the engine does not route " + local.desc().location() + " -> " + remoteEngine.key() + " over " + type + " ("
          + route.map(r -> "it chose " + r.backendType()).orElse("no backend serves the pair") + ")"
          + (type == BackendType.RDMA && s.peer() != null ? "; a --peer serve needs --backend rdma and the same --rdma-provider" : "")
          + "; see the log for why");
    }
    SweepOptions sw = s.sweep();
    EngineBenchmark bench = new EngineBenchmark(engine, local, remote, scratch, sw.session ? route.get() : null, sw.op, sw.batchTransfer)
        .reversedBlocks(sw.reversedBlocks());
    String remoteWhere = remote.location() == MemoryLocationType.GPU ? "GPU" + remote.deviceId() : "cpu";
    return new Side(bench, remoteWhere);
  }

  /**
   * For each point, the RDMA row against the TCP row of the same point: average bandwidth as a share of TCP's
   * and both p50 latencies; a row at less than half TCP's bandwidth says so, since issue 11 asks for the notes to
   * explain that at 64 MiB.
   */
  static List<String> tcpLines(String label, List<ResultRow> rdmaRows, List<ResultRow> tcpRows) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < Math.min(rdmaRows.size(), tcpRows.size()); i++) {
      ResultRow r = rdmaRows.get(i);
      ResultRow t = tcpRows.get(i);
      double share = t.avgBwGBps() > 0 ? r.avgBwGBps() / t.avgBwGBps() : Double.NaN;
      out.add(String.format(Locale.ROOT, "%s x %d: %s avg BW %.2f GB/s = %.0f%% of tcp (%.2f GB/s); p50 %.2f us vs tcp %.2f us%s",
          HumanSize.format(r.msgSize()), r.batchSize(), label, r.avgBwGBps(), 100 * share, t.avgBwGBps(), r.p50LatUs(), t.p50LatUs(),
          share < 0.5 ? " (more than 2x slower than tcp)" : ""));
    }
    return out;
  }
}
