package org.mori4j.cluster.testnode;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.HashMap;
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
