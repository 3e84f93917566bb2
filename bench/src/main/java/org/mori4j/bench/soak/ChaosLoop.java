package org.mori4j.bench.soak;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The faults, one at a time with a quiet spell between them, on node 1 or node 2 in turn (node 0 stays up
 * the whole run, so one JVM lives from the first resource sample to the last): a partition (the node's
 * bridge port down until its own Split Brain Resolver downs it and its process exits, then the port up and
 * a new incarnation on the same address), a crash (SIGKILL, then a new incarnation on the same address), a
 * stall (SIGSTOP for {@value #STALL_MS} ms, under the cluster's acceptable heartbeat pause, so only the
 * data path waits; then SIGCONT) and link shaping (netem, else tbf, for {@value #SHAPE_MS} ms). A fault
 * that needs namespaces or a qdisc the machine lacks is skipped with the reason; one that would not end
 * before the soak's deadline is not started. Only faults that were applied are recorded.
 */
final class ChaosLoop {
  static final long STALL_MS = 2000;
  static final long SHAPE_MS = 10_000;
  private static final long QUIET_MS = 4000;
  private static final Duration READY = Duration.ofSeconds(90);

  /** One fault applied. */
  record Fault(String kind, int node, long atMs, long tookMs, String detail) {}

  private enum Kind {
    // typical durations on a loaded 2-core VM (cut to the new incarnation Up: ~25 s; kill to Up: ~20 s); a slow
    // one overruns the chaos window by at most its own bounds (60 s to exit, 90 s to be Up), eating the tail
    PARTITION(30_000), KILL(22_000), STALL(STALL_MS + 1000), SHAPE(SHAPE_MS + 2000);
    final long estimateMs;

    Kind(long estimateMs) {
      this.estimateMs = estimateMs;
    }
  }

  private final SoakCluster cluster;
  private final SoakNetwork net;
  private final PrintStream log;
  private final long startNanos;
  private final List<Fault> ran = new ArrayList<>();
  private final Map<String, String> skipped = new LinkedHashMap<>();

  ChaosLoop(SoakCluster cluster, SoakNetwork net, String noNetReason, PrintStream log, long startNanos) {
    this.cluster = cluster;
    this.net = net;
    this.log = log;
    this.startNanos = startNanos;
    if (net == null) {
      skipped.put("partition", "not run: no network namespaces (" + noNetReason + ")");
      skipped.put("delay/loss", "not run: no network namespaces (" + noNetReason + ")");
    } else if (net.shaping() == null) {
      skipped.put("delay/loss", "not run: " + net.netemMissing() + ", and no tbf qdisc either");
    }
  }

  /** Applies faults until {@code endNanos}; returns early only when interrupted. Throws when a node cannot be brought back. */
  void run(long endNanos) throws IOException, InterruptedException {
    int turn = 0;
    while (System.nanoTime() < endNanos) {
      Kind kind = Kind.values()[turn % Kind.values().length];
      int victim = 1 + (turn + turn / Kind.values().length) % 2; // each kind hits node 1 and node 2 in turn
      turn++;
      if (kind == Kind.PARTITION && skipped.containsKey("partition")) continue;
      if (kind == Kind.SHAPE && skipped.containsKey("delay/loss")) continue;
      long leftMs = (endNanos - System.nanoTime()) / 1_000_000;
      if (leftMs < Kind.STALL.estimateMs + QUIET_MS) break; // not even the shortest fault fits
      if (leftMs < kind.estimateMs + QUIET_MS) continue; // a shorter one may

      long at = System.nanoTime();
      String detail = switch (kind) {
        case PARTITION -> partition(victim);
        case KILL -> kill(victim);
        case STALL -> stall(victim);
        case SHAPE -> shape(victim);
      };
      Fault f = new Fault(kind.name().toLowerCase(), victim, (at - startNanos) / 1_000_000, (System.nanoTime() - at) / 1_000_000, detail);
      ran.add(f);
      log.printf("soak: %6.1f s  %-9s node %d: %s (%d ms)%n", f.atMs() / 1000.0, f.kind(), victim, detail, f.tookMs());
      Thread.sleep(Math.max(0, Math.min(QUIET_MS, (endNanos - System.nanoTime()) / 1_000_000)));
    }
  }

  private String partition(int v) throws IOException, InterruptedException {
    SoakNodeProcess p = cluster.current(v);
    long t0 = System.nanoTime();
    net.cut(v);
    String how;
    try {
      if (p.awaitExit(Duration.ofSeconds(60))) how = "downed itself and exited (status " + p.exitCode() + ") after " + ms(t0) + " ms";
      else {
        long downed = p.downedAt();
        String dump = p.threadDump();
        p.kill();
        how = (downed == 0 ? "was not downed within 60 s of the cut: killed"
            : "downed itself after " + (downed - t0) / 1_000_000 + " ms, but had not exited 60 s after the cut ("
              + (p.reportedExit() ? "final counters reported, its ActorSystem still stopping" : "before its final counters") + "): killed")
            + " (" + dump + ")";
      }
    } finally {
      net.heal(v);
    }
    SoakNodeProcess n = cluster.startReady(v, false, READY);
    return "bridge port down; the node " + how + "; port up, incarnation " + n.incarnation + " (pid " + n.pid() + ") Up " + ms(t0) + " ms after the cut";
  }

  private String kill(int v) throws IOException, InterruptedException {
    SoakNodeProcess p = cluster.current(v);
    long t0 = System.nanoTime();
    p.kill();
    SoakNodeProcess n = cluster.startReady(v, false, READY);
    return "SIGKILL pid " + p.pid() + "; incarnation " + n.incarnation + " (pid " + n.pid() + ") on the same address Up after " + ms(t0) + " ms";
  }

  private String stall(int v) throws IOException, InterruptedException {
    SoakNodeProcess p = cluster.current(v);
    p.signal("STOP");
    try {
      Thread.sleep(STALL_MS);
    } finally {
      p.signal("CONT");
    }
    return "SIGSTOP pid " + p.pid() + " for " + STALL_MS + " ms (its reads and everything else stalled), then SIGCONT";
  }

  private String shape(int v) throws IOException, InterruptedException {
    long dropped;
    net.shape(v);
    try {
      Thread.sleep(SHAPE_MS);
    } finally {
      dropped = net.unshape(v);
    }
    return ("netem".equals(net.shaping()) ? "netem " + SoakNetwork.NETEM : "tbf " + SoakNetwork.TBF + " (queueing delay and tail drops)")
        + " on both ends of its link for " + SHAPE_MS + " ms; the qdiscs dropped " + dropped + " packets";
  }

  private static long ms(long since) {
    return (System.nanoTime() - since) / 1_000_000;
  }

  List<Fault> ran() {
    return List.copyOf(ran);
  }

  Map<String, String> skipped() {
    return skipped;
  }
}
