package org.mori4j.bench.soak;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One soak from start to report: the network (namespaces where it can, else loopback, saying why), three
 * node JVMs, a warm-up, the "before" resource sample of every node with the workload paused, the chaos loop
 * until the tail of the run, then the workload stopped, the notification checks drained, a settle, the
 * "after" sample, and every process and namespace removed (also when anything fails, and on Ctrl-C through
 * a shutdown hook). Every wait has a bound; the whole run takes the asked minutes plus the node start-up.
 */
final class SoakRun {
  private static final Duration START = Duration.ofSeconds(120);
  private static final long WARMUP_MS = 15_000;
  private static final long SHORT_WARMUP_MS = 8_000;
  /** What the end needs after the chaos loop: recovery, stop, drain, checks, settle, samples. */
  private static final long TAIL_MS = 20_000;

  private SoakRun() {}

  static SoakReport run(double minutes, long seed, Path logDir, boolean namespaces, PrintStream log) throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    long end = t0 + (long) (minutes * 60e9);
    SoakReport report = new SoakReport();
    String noNet = namespaces ? SoakNetwork.unavailable() : "--no-namespaces given";
    SoakNetwork net = null;
    if (noNet == null) {
      try {
        net = SoakNetwork.create(SoakLayout.NODES);
      } catch (IOException e) {
        noNet = "cannot build them: " + e.getMessage();
      }
    }
    SoakNetwork network = net;
    SoakCluster cluster = new SoakCluster(net, seed, logDir, log);
    Thread hook = new Thread(() -> {
      cluster.close();
      if (network != null) network.close();
    }, "soak-cleanup");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      header(report, minutes, seed, net, noNet, logDir);
      log.printf("soak: network: %s%n", report.header.get("network"));
      cluster.startReady(0, true, START);
      cluster.start(1, false);
      cluster.start(2, false);
      for (int i = 1; i < SoakLayout.NODES; i++)
        if (!cluster.current(i).awaitReady(START)) throw new IOException("soak node " + i + " not ready within " + START.toSeconds() + " s; see " + cluster.current(i).log());
      long warmup = minutes < 5 ? SHORT_WARMUP_MS : WARMUP_MS; // a short run keeps its time for the faults
      log.printf("soak: %.1f s: three nodes Up; warm-up %d s%n", secs(t0), warmup / 1000);
      Thread.sleep(warmup);
      Map<Long, ResourceSample> before = sample(cluster, true, log);
      for (SoakNodeProcess p : cluster.currents()) p.send("RESUME");
      log.printf("soak: %.1f s: before-samples taken; chaos until %.1f s%n", secs(t0), (end - t0) / 1e9 - TAIL_MS / 1000.0);

      ChaosLoop chaos = new ChaosLoop(cluster, net, noNet, log, t0);
      try {
        chaos.run(end - TAIL_MS * 1_000_000);
      } finally {
        report.faults.addAll(chaos.ran());
        report.notRun.putAll(chaos.skipped());
      }
      Set<String> kinds = new TreeSet<>(List.of("partition", "kill", "stall", "shape"));
      for (ChaosLoop.Fault f : chaos.ran()) kinds.remove(f.kind());
      if (kinds.contains("shape") && report.notRun.containsKey("delay/loss")) kinds.remove("shape");
      kinds.removeAll(report.notRun.keySet());
      for (String k : kinds) report.notRun.put(k, "not run: no time left for it in a " + minutes + "-minute run");

      Thread.sleep(4000); // the last fault's peers find each other again before the workload stops
      for (SoakNodeProcess p : cluster.currents())
        if (p.ask("STOP", "STOPPED", Duration.ofSeconds(100)) == null) report.problems.add("node " + p.index + "#" + p.incarnation + " did not stop its workload");
      drainChecks(cluster, report);
      Thread.sleep(3000);
      Map<Long, ResourceSample> after = sample(cluster, false, log);
      for (SoakNodeProcess p : cluster.all()) {
        ResourceSample b = before.get(p.pid()), a = after.get(p.pid());
        if (b != null && a != null) report.resources.add(new SoakReport.Resources("node " + p.index + " pid " + p.pid(), b, a));
      }
      for (SoakNodeProcess p : cluster.currents()) p.send("EXIT");
      for (SoakNodeProcess p : cluster.currents())
        if (!p.awaitExit(Duration.ofSeconds(60))) report.problems.add("node " + p.index + "#" + p.incarnation + " did not exit within 60 s of EXIT");
      for (SoakNodeProcess p : cluster.all()) report.add(p.stats(), p.notif());
      report.events(cluster.badEvents());
      report.notifUncheckable = cluster.uncheckable();
      report.firstEvents.addAll(cluster.firstEvents());
      report.header.put("wall time", String.format(Locale.ROOT, "%.1f s", secs(t0)));
      report.header.put("node incarnations", cluster.all().size());
      return report;
    } finally {
      cluster.close();
      if (net != null) net.close();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException ignored) {
        // shutting down: the hook runs
      }
    }
  }

  private static void header(SoakReport r, double minutes, long seed, SoakNetwork net, String noNet, Path logDir) {
    r.header.put("minutes", minutes);
    r.header.put("seed", seed);
    r.header.put("nodes", SoakLayout.NODES + " JVMs, one cluster, TCP backend, CPU memory, " + SoakLayout.WORKERS_PER_PEER + " workers per peer");
    r.header.put("network", net != null ? "network namespaces with a bridge, 10.214.0.0/24 (nothing on the host's own interfaces)"
        : "loopback 127.0.0.1 (no namespaces: " + noNet + ")");
    String shaping;
    if (net == null) shaping = "none (needs the namespaces)";
    else if ("netem".equals(net.shaping())) shaping = "netem " + SoakNetwork.NETEM;
    else if ("tbf".equals(net.shaping()))
      shaping = net.netemMissing() + "; injected instead with tbf " + SoakNetwork.TBF + " (queueing delay and tail drops under load); fixed delay: not injected";
    else shaping = "none: " + net.netemMissing() + ", no tbf either";
    r.header.put("delay/loss", shaping);
    r.header.put("hung bound", "TransferStatus.await(deadline + 5 s) for the half of the reads with a " + SoakWorker.DEADLINE_MS
        + " ms deadline (TransferOptions), else await(TCP peer-timeout + 5 s); a hung transfer is cancelled");
    r.header.put("incarnations", "peers told apart by EngineDesc.incarnation(); notifications checked on the incarnation written to");
    r.header.put("node logs", logDir.toString());
  }

  /** Pauses (before) or finds stopped (after) every node's workload, then takes a RES sample of each; by pid. */
  private static Map<Long, ResourceSample> sample(SoakCluster cluster, boolean pause, PrintStream log) throws InterruptedException {
    if (pause) for (SoakNodeProcess p : cluster.currents()) p.ask("PAUSE", "PAUSED", Duration.ofSeconds(70));
    Thread.sleep(2000);
    Map<Long, ResourceSample> m = new HashMap<>();
    for (SoakNodeProcess p : cluster.currents()) {
      if (p.ask("RES", "RES", Duration.ofSeconds(30)) == null) {
        log.println("soak: node " + p.index + " gave no resource sample");
        continue;
      }
      ResourceSample s = p.resources();
      if (s != null) m.put(p.pid(), s);
    }
    return m;
  }

  /** Waits, bounded, until every node has popped and re-checked every notification relayed to it. */
  private static void drainChecks(SoakCluster cluster, SoakReport report) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(NotificationChecker.LOST_AFTER_MS / 1000 + 15).toNanos();
    for (SoakNodeProcess p : cluster.currents()) {
      while (true) {
        String r = p.ask("FLUSH", "FLUSHED", Duration.ofSeconds(10));
        if (r != null && r.contains("idle=true")) break;
        if (System.nanoTime() > end) {
          report.problems.add("node " + p.index + " still had notification checks outstanding: " + r);
          break;
        }
        Thread.sleep(500);
      }
    }
  }

  private static double secs(long t0) {
    return (System.nanoTime() - t0) / 1e9;
  }
}
