package org.mori4j.bench.soak;

import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The driver's three nodes: where each lives (its namespace and address, or loopback and a port fixed for
 * the whole soak, so a restart comes back on the same address), the current incarnation of each and every
 * incarnation that ever ran (their last counters all go into the report). It relays each initiator's
 * {@code LANDED} lines to the target incarnation they name, and counts the ones it cannot deliver (that
 * incarnation is gone) as notifications that could not be checked. Lines that must never appear
 * (corruption, hung transfers, lost or duplicated notifications, stuck workers) are counted here, as they
 * arrive, so even those of a JVM killed later are not lost.
 */
final class SoakCluster implements AutoCloseable {
  static final int NETNS_PORT = 25600;
  private static final int KEEP_EVENTS = 40;

  private final SoakNetwork net;
  private final long soakSeed;
  private final Path logDir;
  private final PrintStream log;
  private final String[] hosts = new String[SoakLayout.NODES];
  private final int[] ports = new int[SoakLayout.NODES];
  private final SoakNodeProcess[] current = new SoakNodeProcess[SoakLayout.NODES];
  private final int[] incarnations = new int[SoakLayout.NODES];
  private final List<SoakNodeProcess> all = new ArrayList<>();
  private final Map<String, AtomicLong> badEvents = new TreeMap<>();
  private final List<String> firstEvents = new ArrayList<>();
  private final AtomicLong uncheckable = new AtomicLong();

  SoakCluster(SoakNetwork net, long soakSeed, Path logDir, PrintStream log) throws IOException {
    this.net = net;
    this.soakSeed = soakSeed;
    this.logDir = logDir;
    this.log = log;
    for (String e : List.of("CORRUPT", "HUNG", "NOTIF-LOST", "NOTIF-DUP", "NOTIF-WRONG", "STUCK")) badEvents.put(e, new AtomicLong());
    for (int i = 0; i < SoakLayout.NODES; i++) {
      hosts[i] = net != null ? net.host(i) : "127.0.0.1";
      ports[i] = net != null ? NETNS_PORT : freePort();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  String address(int i) {
    return hosts[i] + ":" + ports[i];
  }

  /** Starts the next incarnation of node {@code i}; it joins through the other nodes ({@code founder}: node 0 founds the cluster). */
  synchronized SoakNodeProcess start(int i, boolean founder) throws IOException {
    List<String> seeds = new ArrayList<>();
    if (!founder) for (int j = 0; j < SoakLayout.NODES; j++) if (j != i) seeds.add(address(j));
    SoakNodeProcess p = SoakNodeProcess.start(i, ++incarnations[i], net != null ? net.exec(i) : List.of(), hosts[i], ports[i], soakSeed, seeds,
        logDir, this::onLine);
    current[i] = p;
    all.add(p);
    return p;
  }

  synchronized SoakNodeProcess current(int i) {
    return current[i];
  }

  synchronized List<SoakNodeProcess> all() {
    return List.copyOf(all);
  }

  synchronized List<SoakNodeProcess> currents() {
    List<SoakNodeProcess> l = new ArrayList<>();
    for (SoakNodeProcess p : current) if (p != null) l.add(p);
    return l;
  }

  /** Starts and waits for the READY line of node {@code i}; throws with the log's place when it is not ready in time. */
  SoakNodeProcess startReady(int i, boolean founder, Duration timeout) throws IOException, InterruptedException {
    SoakNodeProcess p = start(i, founder);
    if (!p.awaitReady(timeout))
      throw new IOException("soak node " + i + " (incarnation " + p.incarnation + ") not ready within " + timeout.toSeconds() + " s; see " + p.log());
    return p;
  }

  private void onLine(SoakNodeProcess from, String line) {
    String head = line.indexOf(' ') > 0 ? line.substring(0, line.indexOf(' ')) : line;
    if (head.equals("LANDED")) {
      relay(from, line);
      return;
    }
    AtomicLong bad = badEvents.get(head);
    if (bad == null) return;
    bad.incrementAndGet();
    synchronized (firstEvents) {
      if (firstEvents.size() < KEEP_EVENTS) firstEvents.add("node " + from.index + "#" + from.incarnation + ": " + line);
    }
    log.println("soak: node " + from.index + "#" + from.incarnation + ": " + line);
  }

  /** {@code LANDED <key> <incarnation> <ok> <uids>} to the incarnation it names, as {@code EXPECT <from-key> <incarnation> <ok> <uids>}. */
  private void relay(SoakNodeProcess from, String line) {
    String[] w = line.split(" ");
    if (w.length < 5) return;
    int target = SoakLayout.indexOf(w[1]);
    long incarnation = Long.parseLong(w[2]);
    boolean ok = w[3].equals("1");
    int count = w[4].split(",").length;
    SoakNodeProcess t = target < 0 ? null : current(target);
    boolean sent = t != null && t.alive() && t.engineIncarnation() == incarnation
        && t.send("EXPECT " + SoakLayout.engineKey(from.index) + " " + incarnation + " " + w[3] + " " + w[4]);
    if (!sent && ok) uncheckable.addAndGet(count);
  }

  Map<String, Long> badEvents() {
    Map<String, Long> m = new TreeMap<>();
    badEvents.forEach((k, v) -> m.put(k, v.get()));
    return m;
  }

  List<String> firstEvents() {
    synchronized (firstEvents) {
      return List.copyOf(firstEvents);
    }
  }

  long uncheckable() {
    return uncheckable.get();
  }

  /** Ends every node incarnation still running (EXIT, then SIGKILL after a bound); never throws. */
  @Override
  public void close() {
    for (SoakNodeProcess p : all()) p.requestExit(); // all at once: they stop in parallel, then each is waited for
    for (SoakNodeProcess p : all()) {
      try {
        p.close();
      } catch (RuntimeException e) {
        log.println("soak: closing node " + p.index + ": " + e);
      }
    }
  }
}
