package org.mori4j.bench;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import org.mori4j.cluster.ClusterSettings;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.MemoryDesc;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code mori4j cluster-bench}: the transfer benchmark between two members of a cluster that found each
 * other through the cluster alone. This process becomes a member (a clustered ActorSystem with an engine and
 * {@code ClusterEngine}); the target is a {@code mori4j node}: without {@code --seed} one is spawned in a
 * child JVM on this host (so the command works on a fresh machine) and this member joins it; with
 * {@code --seed} this member joins an existing cluster and measures against {@code --peer-engine} (or the
 * first registered engine that publishes {@value ServeCommand#BUFFER_NAME}). Nothing is addressed by
 * {@code host:port} beyond the seed: the peer's engine is registered by ClusterEngine, its descriptor comes
 * from the Receptionist's listing and the target buffer from the peer engine's published name. The rows are
 * measured and printed exactly as {@code mori4j bench} does ({@link EngineBenchmark}, {@link ResultTable});
 * the baselines are {@code bench}'s business. Exit codes: 0 done, 1 no peer or a failed transfer, 2 usage.
 */
@Command(name = "cluster-bench", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Measure transfers between this process and a mori4j node found through the cluster (spawns one when no --seed is given).")
public final class ClusterBenchCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Mixin
  SweepOptions sweep = new SweepOptions();

  @Mixin
  ClusterOptions cluster = new ClusterOptions();

  @Option(names = "--peer-engine", paramLabel = "KEY", description = "With --seed: the engine to measure against "
      + "(default: the first registered engine publishing '" + ServeCommand.BUFFER_NAME + "').")
  String peerEngine;

  @Option(names = "--wait", defaultValue = "60", paramLabel = "SECONDS",
      description = "How long to wait for the peer's engine to be registered through the cluster (default: ${DEFAULT-VALUE}).")
  int waitSeconds;

  @Option(names = "--json", paramLabel = "FILE", description = "Also write the rows as JSON to FILE.")
  Path json;

  @Option(names = "--plot", paramLabel = "FILE.svg", description = "Also draw the rows' bandwidth and latency by size as an SVG.")
  Path plot;

  @Mixin
  TcpOptions tcp = new TcpOptions();

  SweepPlan validate() {
    if (waitSeconds < 1) throw usage("--wait must be at least 1: " + waitSeconds);
    if (peerEngine != null && !joinsACluster())
      throw usage("--peer-engine needs --seed or MORI4J_SEED_NODES (without seeds, cluster-bench spawns its own peer)");
    if (peerEngine != null && peerEngine.isBlank()) throw usage("--peer-engine must not be blank");
    BenchPlot.check(plot, this::usage);
    try {
      tcp.config();
    } catch (IllegalArgumentException e) {
      throw usage(e.getMessage());
    }
    SweepPlan plan = sweep.plan(this::usage);
    cluster.settings(null, this::usage); // every cluster flag checked before a child is started
    return plan;
  }

  /** Seeds from --seed or from the configuration (MORI4J_SEED_NODES): measure a running cluster, spawn nothing. */
  private boolean joinsACluster() {
    return cluster.seeds != null || !cluster.settings(null, this::usage).seedNodes().isEmpty();
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  @Override
  public Integer call() throws Exception {
    SweepPlan plan = validate();
    PrintStream out = System.out;
    TargetProcess target = null;
    ClusterMember member = null;
    BenchBuffers buffers = new BenchBuffers();
    try {
      List<String> seeds = null;
      String peerKey = peerEngine;
      if (!joinsACluster()) {
        peerKey = "cluster-bench-target-" + ProcessHandle.current().pid();
        String host = cluster.settings(null, this::usage).host();
        List<String> nodeArgs = new ArrayList<>(List.of("--host", host, "--port", "0", "--engine-key", peerKey,
            "--buffer-size", Long.toString(plan.bufferBytes()), "--stop-on-stdin-eof"));
        nodeArgs.addAll(cluster.memberArgs());
        nodeArgs.addAll(tcp.asArgs());
        target = TargetProcess.start("node", nodeArgs, Duration.ofSeconds(90), System.err);
        String h = target.ready().host();
        seeds = List.of((h.indexOf(':') >= 0 ? "[" + h + "]" : h) + ":" + target.ready().port());
      }
      ClusterSettings settings = cluster.settings(seeds, this::usage);
      // this member publishes nothing: it only initiates
      member = ClusterMember.start(settings, null, "cluster-bench", null, tcp.config(), 0);
      if (!member.awaitUp(Duration.ofSeconds(waitSeconds))) {
        System.err.printf("mori4j cluster-bench: this member is not Up after %d s; seeds %s (running? same --system-name, same --tls and trusted certificates?)%n",
            waitSeconds, settings.seedNodes());
        return 1;
      }
      long upMs = member.elapsedNanos() / 1_000_000;
      PeerFound peer = awaitPeer(member, peerKey, target);
      if (peer == null) return 1;
      out.printf(Locale.ROOT, "mori4j cluster-bench: backend=tcp control-plane=%s op=%s batch-transfer=%s session=%s iters=%d warmup=%d/%dms points=%d%n",
          settings.tls().enabled() ? "tls" : "tcp", sweep.op.name().toLowerCase(Locale.ROOT), sweep.batchTransfer, sweep.session,
          sweep.iters, sweep.warmupIters, sweep.warmupMs, plan.points().size());
      out.printf(Locale.ROOT, "  member %s joined %s, Up %d ms after it started; peer engine '%s' (%s:%d, %s) registered through the cluster after %d ms%n",
          member.system().address(), settings.seedNodes(), upMs, peer.desc().key(), peer.desc().host(), peer.desc().port(),
          target != null ? "spawned node" : "running node", peer.registeredAfterMs());
      out.printf(Locale.ROOT, "  target buffer %s, tcp %s%n", HumanSize.format(peer.buffer().size()), tcp.config());
      out.flush();
      List<ResultRow> rows = measure(plan, member.engine(), peer.buffer(), target, buffers);
      out.print(ResultTable.render(sweep.title("cpu memory, peer found through the cluster"), rows));
      out.flush();
      if (json != null) {
        JsonRows.write(json, JsonRows.rowsToJson(rows));
        System.err.println("wrote " + json);
      }
      if (plot != null) new BenchPlot().measured("mori4j (cluster peer)", rows).write(plot, sweep.title("cpu memory, peer found through the cluster"), null);
      return 0;
    } catch (EngineBenchmark.IntegrityException | EngineBenchmark.TransferFailedException e) {
      System.err.println("mori4j cluster-bench: " + e.getMessage());
      if (target != null && !target.alive()) System.err.println("node process exited" + target.stderrTail());
      return 1;
    } finally {
      try {
        if (member != null) member.close(); // closes the engine first
      } finally {
        buffers.close();
        if (target != null) target.close();
      }
    }
  }

  private record PeerFound(EngineDesc desc, MemoryDesc buffer, long registeredAfterMs) {}

  /**
   * Waits until ClusterEngine has registered the peer ({@code key}, or with none the first registered engine
   * that publishes the bench buffer), then fetches its descriptor and buffer; prints why and returns null
   * when there is none within {@code --wait}.
   */
  private PeerFound awaitPeer(ClusterMember member, String key, TargetProcess target) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(waitSeconds).toNanos();
    Set<String> registered = Set.of();
    Set<String> without = new TreeSet<>();
    while (System.nanoTime() < deadline) {
      if (target != null && !target.alive()) {
        System.err.println("mori4j cluster-bench: the node process exited" + target.stderrTail());
        return null;
      }
      registered = member.registeredEngines();
      long at = member.elapsedNanos() / 1_000_000;
      for (String k : new TreeSet<>(registered)) {
        if (key != null && !k.equals(key)) continue;
        if (without.contains(k)) continue;
        Optional<EngineDesc> desc = member.describe(k);
        if (desc.isEmpty()) continue; // registered but not listed any more: it is leaving
        Optional<MemoryDesc> buffer = member.engine().lookupMemory(desc.get(), ServeCommand.BUFFER_NAME);
        if (buffer.isPresent()) return new PeerFound(desc.get(), buffer.get(), at);
        if (key != null) {
          System.err.printf("mori4j cluster-bench: engine '%s' publishes no '%s' (start its node with --buffer-size > 0)%n", k, ServeCommand.BUFFER_NAME);
          return null;
        }
        without.add(k);
      }
      Thread.sleep(50);
    }
    System.err.printf("mori4j cluster-bench: %s within %d s; registered engines: %s%s%n",
        key != null ? "engine '" + key + "' was not registered through the cluster" : "no registered engine publishes '" + ServeCommand.BUFFER_NAME + "'",
        waitSeconds, registered, without.isEmpty() ? "" : " (without a buffer: " + without + ")");
    return null;
  }

  /**
   * The sweep against the peer's buffer, from host buffers of this member; they go into {@code buffers}
   * and are freed only after the engine is closed, since a failed row may leave transfers in flight.
   */
  private List<ResultRow> measure(SweepPlan plan, IoEngine engine, MemoryDesc remote, TargetProcess target, BenchBuffers buffers) {
    BenchMemory local = buffers.add(BenchMemory.host(engine, Math.min(plan.bufferBytes(), remote.size())));
    BenchMemory scratch = buffers.add(BenchMemory.host(engine, 2 * EngineBenchmark.SAMPLE_BYTES));
    EngineBenchmark bench = sweep.benchmark(engine, local, remote, scratch);
    ProgressBar progress = ProgressBar.forConsole(plan.points().size());
    try {
      return bench.sweep(plan.points(), sweep.iters, sweep.warmupIters, sweep.warmupNanos(), progress, "", () -> {
        if (target != null && !target.alive()) throw new IllegalStateException("node process died" + target.stderrTail());
      });
    } finally {
      progress.finish();
    }
  }
}
