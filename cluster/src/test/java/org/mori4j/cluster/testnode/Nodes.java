package org.mori4j.cluster.testnode;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** What the multi-JVM cluster tests do with their {@link NodeProcess}es: read answers, wire nodes together. */
public final class Nodes {
  private Nodes() {}

  /** A node after READY: its member address, engine key and region descriptor (Base64). */
  public record Ready(NodeProcess node, String address, String key, String desc, long at) {
    /** {@code host:port} of the member, for seeds. */
    public String hostPort() {
      return address.substring(address.indexOf('@') + 1);
    }
  }

  public static Ready awaitReady(NodeProcess n, Duration limit) throws InterruptedException {
    String[] w = n.await(s -> s.startsWith("READY "), limit, "READY").words();
    return new Ready(n, w[1], w[2], w[3], Long.parseLong(w[4]));
  }

  /** Tells every node about every other node's region. */
  public static void exchangePeers(List<Ready> nodes) {
    for (Ready to : nodes)
      for (Ready of : nodes)
        if (to != of) to.node().send("peer " + of.desc());
  }

  /** Waits until {@code n}'s cluster actor has registered exactly {@code keys}; returns that line. */
  public static NodeProcess.Line awaitRegistered(NodeProcess n, int from, Set<String> keys, Duration limit) throws InterruptedException {
    String want = String.join(",", new TreeSet<>(keys));
    return n.awaitFrom(from, s -> s.startsWith("REGISTERED ") && registered(s).equals(want), limit, "registration of exactly [" + want + "]");
  }

  /** The keys of a REGISTERED line, comma-separated and sorted ("" for none). */
  public static String registered(String line) {
    String[] w = line.split(" ", 3);
    return w.length == 3 ? w[2] : "";
  }

  /** The STATS answer of a node, per peer key: each {@code name=value} of its line. */
  public static Map<String, Map<String, String>> stats(NodeProcess n) throws InterruptedException {
    Map<String, Map<String, String>> out = new HashMap<>();
    for (NodeProcess.Line l : n.stats(Duration.ofSeconds(30))) {
      String[] w = l.words();
      Map<String, String> kv = new HashMap<>();
      for (int i = 2; i < w.length; i++) {
        int eq = w[i].indexOf('=');
        if (eq > 0) kv.put(w[i].substring(0, eq), w[i].substring(eq + 1));
      }
      out.put(w[1], kv);
    }
    return out;
  }

  /**
   * Starts a node in each of the first {@code keys.length} namespaces of {@code net} (node 0 first, the seed of
   * the others), named {@code name + i}, with {@code env} added to their environment; waits until each is
   * READY and has registered all the others, then starts every node's write loop. {@code procs} receives each
   * process as it starts, for the caller to close.
   */
  public static List<Ready> startWritingMesh(TestNetwork net, String name, String[] keys, Map<String, String> env, int port, Duration start,
                                             List<NodeProcess> procs) throws Exception {
    List<Ready> all = new ArrayList<>();
    NodeProcess seed = NodeProcess.start(name + 0, net.exec(0), env, net.host(0), port, keys[0], 0, List.of());
    procs.add(seed);
    all.add(awaitReady(seed, start));
    List<NodeProcess> others = new ArrayList<>();
    for (int i = 1; i < keys.length; i++) {
      NodeProcess n = NodeProcess.start(name + i, net.exec(i), env, net.host(i), port, keys[i], i, List.of(all.get(0).hostPort()));
      procs.add(n);
      others.add(n);
    }
    for (NodeProcess n : others) all.add(awaitReady(n, start));
    exchangePeers(all);
    for (Ready r : all) awaitRegistered(r.node(), 0, othersOf(r, all), Duration.ofSeconds(60));
    for (Ready r : all) r.node().send("write-loop");
    return List.copyOf(all);
  }

  /**
   * Polls every node's STATS until each has moved bytes to every other one, or {@code limit} passed: the write loops are
   * known to be running without waiting a fixed time for them. The caller then asserts on the STATS it takes itself.
   */
  public static void awaitEveryPairMoved(List<Ready> nodes, Duration limit) throws InterruptedException {
    long end = System.nanoTime() + limit.toNanos();
    while (true) {
      boolean moved = true;
      for (Ready r : nodes) {
        Map<String, Map<String, String>> s = stats(r.node());
        for (Ready o : nodes) {
          if (o == r) continue;
          Map<String, String> kv = s.get(o.key());
          if (kv == null || kv.get("ok") == null || Long.parseLong(kv.get("ok")) == 0) moved = false;
        }
      }
      if (moved || System.nanoTime() - end >= 0) return;
      Thread.sleep(100);
    }
  }

  /** The engine keys of every node in {@code all} but {@code r}. */
  public static Set<String> othersOf(Ready r, List<Ready> all) {
    Set<String> out = new HashSet<>();
    for (Ready o : all) if (!o.key().equals(r.key())) out.add(o.key());
    return out;
  }

  /**
   * Takes every node's STATS, waits {@code window}, takes them again, and asserts that in between every node
   * moved bytes to every other one without a failure ({@code when} goes into the messages); returns the
   * second STATS, in the order of {@code nodes}.
   */
  public static List<Map<String, Map<String, String>>> assertEveryPairClean(List<Ready> nodes, Duration window, String when)
      throws InterruptedException {
    List<Map<String, Map<String, String>>> w0 = new ArrayList<>(), w1 = new ArrayList<>();
    for (Ready r : nodes) w0.add(stats(r.node()));
    Thread.sleep(window.toMillis());
    for (Ready r : nodes) w1.add(stats(r.node()));
    for (int i = 0; i < nodes.size(); i++) {
      Ready me = nodes.get(i);
      for (Ready o : nodes) {
        if (o == me) continue;
        long ok = num(w1.get(i), o.key(), "ok") - num(w0.get(i), o.key(), "ok");
        long failed = num(w1.get(i), o.key(), "fail") - num(w0.get(i), o.key(), "fail");
        assertEquals(0, failed, me.key() + " -> " + o.key() + " failed " + when + ":\n" + me.node().tail(40));
        assertTrue(ok > 0, me.key() + " -> " + o.key() + ": nothing moved " + when);
      }
    }
    return w1;
  }

  public static long num(Map<String, Map<String, String>> stats, String peer, String name) {
    Map<String, String> kv = stats.get(peer);
    assertNotNull(kv, "no write loop to " + peer + " in " + stats.keySet());
    return Long.parseLong(kv.get(name));
  }

  /** Median of the values (the mean of the middle two for an even count). */
  public static double median(List<Long> values) {
    List<Long> v = values.stream().sorted().toList();
    int n = v.size();
    if (n == 0) return Double.NaN;
    return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2.0;
  }
}
