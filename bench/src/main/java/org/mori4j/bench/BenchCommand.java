package org.mori4j.bench;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.mori4j.bench.baseline.Baselines;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineSession;
import org.mori4j.io.MemoryDesc;
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
 * names and defaults where MORI has them; flags that name hardware this build does not drive fail at once
 * with a message naming the flag and its value, before anything is started.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Measure mori4j transfers between two processes and print MORI's table with baselines beside it.")
public final class BenchCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--backend", defaultValue = "tcp", description = "Transfer backend: tcp (rdma, xgmi: not in this build).")
  String backend;

  @Option(names = "--op-type", defaultValue = "write", converter = OpConverter.class, description = "read or write (default: ${DEFAULT-VALUE}).")
  EngineBenchmark.Op op;

  @Option(names = "--buffer-size", defaultValue = "4096", converter = SizeConverter.class, description = "Message size per transfer, e.g. 4096 or 1M (default: ${DEFAULT-VALUE}).")
  long bufferSize;

  @Option(names = "--all", description = "Sweep message sizes from --sweep-start-size to --sweep-max-size, doubling.")
  boolean all;

  @Option(names = "--sweep-start-size", defaultValue = "8", converter = SizeConverter.class, description = "First size of --all (default: ${DEFAULT-VALUE}).")
  long sweepStart;

  @Option(names = "--sweep-max-size", defaultValue = "64M", converter = SizeConverter.class, description = "Last size of --all (default: ${DEFAULT-VALUE}).")
  long sweepMax;

  @Option(names = "--all-batch", description = "Also sweep batch sizes 1, 2, 4, ... up to --transfer-batch-size.")
  boolean allBatch;

  @Option(names = "--transfer-batch-size", defaultValue = "128", description = "Transfers per iteration (default: ${DEFAULT-VALUE}).")
  int batchSize;

  @Option(names = "--enable-batch-transfer", description = "Send each iteration's transfers as one batch call.")
  boolean batchTransfer;

  @Option(names = "--enable-sess", description = "Transfer through an IoEngineSession.")
  boolean session;

  @Option(names = "--iters", defaultValue = "128", description = "Measured iterations per row (default: ${DEFAULT-VALUE}).")
  int iters;

  @Option(names = "--warmup-iters", defaultValue = "16", description = "Unmeasured iterations before each row (default: ${DEFAULT-VALUE}).")
  int warmupIters;

  @Option(names = "--warmup-ms", defaultValue = "1000", description = "Least warm-up time per row in ms, besides --warmup-iters, "
      + "so that rows are measured on JIT-compiled code; the baselines get the same (default: ${DEFAULT-VALUE}).")
  long warmupMs;

  @Option(names = "--mem-type", defaultValue = "cpu", description = "cpu (gpu: not in this build).")
  String memType;

  @Option(names = "--peer", paramLabel = "HOST:PORT", description = "Use a running 'mori4j serve' instead of starting one.")
  String peer;

  @Option(names = "--peer-nio", paramLabel = "PORT", description = "With --peer: the nio= port from serve's READY line, for the NIO baseline.")
  Integer peerNio;

  @Option(names = "--host", defaultValue = "127.0.0.1", description = "Host this side's engine binds; the target must reach it (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(names = "--json", paramLabel = "FILE", description = "Also write the rows as JSON to FILE and the baselines to FILE.baselines.json.")
  Path json;

  @Option(names = "--baselines", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Measure the NIO, iperf3 and ucx_perftest baselines in the same run (default: on).")
  boolean baselines;

  @Option(names = "--max-buffer-size", defaultValue = "256M", converter = SizeConverter.class,
      description = "Cap on each side's buffer; bigger batches reuse slots (default: ${DEFAULT-VALUE}).")
  long maxBuffer;

  @Option(names = "--pingpong-iters", defaultValue = "10000", description = "Round trips of the NIO ping-pong baseline (default: ${DEFAULT-VALUE}).")
  int pingpongIters;

  @Option(names = "--iperf-seconds", defaultValue = "5", description = "Duration of the iperf3 baseline (default: ${DEFAULT-VALUE}).")
  int iperfSeconds;

  @Mixin
  TcpOptions tcp = new TcpOptions();

  /** Bytes the measured blocks cycle over (both buffers), known once the target's buffer was looked up. */
  private long capacity;

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
    if (b.equals("rdma") || b.equals("xgmi"))
      throw usage("--backend " + backend + " is not available in this build (only tcp)");
    if (!b.equals("tcp")) throw usage("unknown --backend '" + backend + "' (expected tcp)");
    String m = memType.toLowerCase(Locale.ROOT);
    if (m.equals("gpu")) throw usage("--mem-type gpu is not available in this build (CPU memory only)");
    if (!m.equals("cpu")) throw usage("unknown --mem-type '" + memType + "' (expected cpu)");
    if (iters < 1) throw usage("--iters must be at least 1: " + iters);
    if (warmupIters < 0) throw usage("--warmup-iters must not be negative: " + warmupIters);
    if (warmupMs < 0) throw usage("--warmup-ms must not be negative: " + warmupMs);
    if (pingpongIters < 1) throw usage("--pingpong-iters must be at least 1: " + pingpongIters);
    if (iperfSeconds < 1 || iperfSeconds > 60) throw usage("--iperf-seconds must be in 1..60: " + iperfSeconds);
    if (peerNio != null && peer == null) throw usage("--peer-nio needs --peer");
    if (peer != null) PeerAddress.parse(peer, this::usage);
    try {
      tcp.config();
      return SweepPlan.of(bufferSize, batchSize, all, allBatch, sweepStart, sweepMax, maxBuffer);
    } catch (IllegalArgumentException e) {
      throw usage(e.getMessage());
    }
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  @Override
  public Integer call() throws Exception {
    SweepPlan plan = validate();
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
      out.printf(Locale.ROOT, "mori4j bench: backend=tcp op=%s mem=cpu batch-transfer=%s session=%s iters=%d warmup=%d/%dms points=%d%n",
          op.name().toLowerCase(Locale.ROOT), batchTransfer, session, iters, warmupIters, warmupMs, plan.points().size());
      out.printf(Locale.ROOT, "  target %s:%d (%s), tcp %s%n", peerHost, peerPort, targetNote, tcp.config());
      out.flush();
      List<ResultRow> rows = runEngine(plan, peerHost, peerPort, target);
      out.print(ResultTable.render(title(), rows));
      out.flush();
      List<BaselineRow> base = List.of();
      if (baselines) {
        ProgressBar progress = ProgressBar.forConsole(Baselines.steps(plan));
        base = Baselines.run(plan, new Baselines.Settings(peerHost, nioPort, capacity, iters, warmupIters,
            warmupMs * 1_000_000L, pingpongIters, iperfSeconds), progress);
        progress.finish();
        out.print(ResultTable.renderBaselines("Baselines (same run)", base));
        List<String> cmp = Comparison.lines(rows, base);
        if (!cmp.isEmpty()) {
          out.println("Comparison (same run):");
          for (String l : cmp) out.println("  " + l);
        }
      }
      if (json != null) {
        JsonRows.write(json, JsonRows.rowsToJson(rows));
        if (baselines) JsonRows.write(JsonRows.baselinesPath(json), JsonRows.baselinesToJson(base));
        System.err.println("wrote " + json + (baselines ? " and " + JsonRows.baselinesPath(json) : ""));
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

  private String title() {
    return String.format(Locale.ROOT, "mori4j %s over tcp, cpu memory (batch-transfer %s, session %s)",
        op.name().toLowerCase(Locale.ROOT), batchTransfer ? "on" : "off", session ? "on" : "off");
  }

  private List<ResultRow> runEngine(SweepPlan plan, String peerHost, int peerPort, TargetProcess target) {
    String key = "initiator-" + ProcessHandle.current().pid();
    try (Arena arena = Arena.ofShared(); IoEngine engine = IoEngine.create(key, new IoEngineConfig(host, 0))) {
      engine.createBackend(BackendType.TCP, tcp.config());
      EngineDesc remoteEngine = engine.discover(peerHost, peerPort);
      engine.registerRemoteEngine(remoteEngine);
      MemoryDesc remote = engine.lookupMemory(remoteEngine, ServeCommand.BUFFER_NAME).orElseThrow(() ->
          new IllegalStateException("target " + remoteEngine.key() + " publishes no '" + ServeCommand.BUFFER_NAME + "'"));
      long localBytes = Math.min(plan.bufferBytes(), remote.size());
      MemorySegment localSeg = arena.allocate(localBytes, 4096);
      MemoryDesc local = engine.registerMemory(localSeg);
      MemorySegment scratchSeg = arena.allocate(2 * EngineBenchmark.SAMPLE_BYTES, 4096);
      MemoryDesc scratch = engine.registerMemory(scratchSeg);
      IoEngineSession sess = null;
      if (session) {
        sess = engine.createSession(local, remote).orElseThrow(() ->
            new IllegalStateException("no backend can serve a session between " + local + " and " + remote));
      }
      EngineBenchmark bench = new EngineBenchmark(engine, local, localSeg, remote, scratch, scratchSeg, sess, op, batchTransfer);
      capacity = bench.capacity();
      ProgressBar progress = ProgressBar.forConsole(plan.points().size());
      List<ResultRow> rows = new ArrayList<>();
      try {
        for (SweepPlan.Point p : plan.points()) {
          if (p.msgSize() > bench.capacity())
            throw new IllegalStateException("the target buffer (" + HumanSize.format(remote.size()) + ") is smaller than the message size "
                + HumanSize.format(p.msgSize()) + "; start serve with a larger --buffer-size");
          progress.show(HumanSize.format(p.msgSize()) + " x " + p.batchSize());
          rows.add(bench.run(p, iters, warmupIters, warmupMs * 1_000_000L));
          progress.step();
          if (target != null && !target.alive()) throw new IllegalStateException("target process died" + target.stderrTail());
        }
      } finally {
        progress.finish();
      }
      return rows;
    }
  }
}
