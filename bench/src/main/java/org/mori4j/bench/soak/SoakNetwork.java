package org.mori4j.bench.soak;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The soak's private network, built with iproute2 and removed by {@link #close()}: a namespace per node
 * ({@code m4s<pid>n<i>}, address {@code 10.214.0.(i+1)/24}) joined by veth pairs to a bridge in a hub
 * namespace ({@code m4s<pid>h}); nothing is added to the machine's own namespace, and the range cannot meet
 * another network. {@link #cut} sets a node's bridge port down (its packets vanish, as with a failed
 * switch port); {@link #shape} puts a queueing discipline on both ends of a node's link: netem delay and
 * loss where the kernel has netem, else a token bucket (tbf) whose small rate and short queue add
 * queueing delay and tail drops under load. Namespaces of this pattern whose pid is dead are left-overs of
 * a killed run and are removed first.
 */
final class SoakNetwork implements AutoCloseable {
  private static final Pattern OURS = Pattern.compile("m4s(\\d+)(h|n\\d+)");
  /** netem's delay and loss when the kernel has it. */
  static final String NETEM = "delay 40ms 10ms loss 1%";
  /** tbf's rate, burst and queue limit (as latency) otherwise. */
  static final String TBF = "rate 40mbit burst 64kb latency 40ms";

  private final String ip;
  private final String tc;
  private final String hub;
  private final List<String> nodes = new ArrayList<>();
  private String shaping;
  private String netemProbe = "not probed";

  private SoakNetwork(String ip, String tc, String prefix) {
    this.ip = ip;
    this.tc = tc;
    this.hub = prefix + "h";
  }

  /** The reason the soak cannot build namespaces here, or null when it can try. */
  static String unavailable() {
    if (find("ip") == null) return "no iproute2 'ip' binary";
    if (!"root".equals(System.getProperty("user.name"))) return "not root (network namespaces need CAP_NET_ADMIN)";
    return null;
  }

  private static String find(String name) {
    for (String dir : List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin"))
      if (Files.isExecutable(Path.of(dir, name))) return dir + "/" + name;
    return null;
  }

  /** Builds the network for {@code n} nodes; throws with {@code ip}'s message when a step fails (nothing is left behind). */
  static SoakNetwork create(int n) throws IOException, InterruptedException {
    String ip = find("ip");
    if (ip == null) throw new IOException("no iproute2 'ip' binary");
    removeLeftovers(ip);
    String prefix = "m4s" + ProcessHandle.current().pid();
    SoakNetwork net = new SoakNetwork(ip, find("tc"), prefix);
    boolean done = false;
    try {
      net.must(ip, "netns", "add", net.hub);
      net.must(ip, "-n", net.hub, "link", "add", "br0", "type", "bridge");
      net.must(ip, "-n", net.hub, "link", "set", "br0", "up");
      for (int i = 0; i < n; i++) {
        String ns = prefix + "n" + i;
        net.must(ip, "netns", "add", ns);
        net.nodes.add(ns);
        net.must(ip, "-n", ns, "link", "add", "v" + i, "type", "veth", "peer", "name", "p" + i, "netns", net.hub);
        net.must(ip, "-n", ns, "addr", "add", "10.214.0." + (i + 1) + "/24", "dev", "v" + i);
        net.must(ip, "-n", ns, "link", "set", "v" + i, "up");
        net.must(ip, "-n", ns, "link", "set", "lo", "up");
        net.must(ip, "-n", net.hub, "link", "set", "p" + i, "master", "br0");
        net.must(ip, "-n", net.hub, "link", "set", "p" + i, "up");
      }
      done = true;
      return net.withShaping();
    } finally {
      if (!done) net.close();
    }
  }

  /** Probes which qdisc the kernel offers on the hub's loopback: netem, else tbf, else none. */
  private SoakNetwork withShaping() throws IOException, InterruptedException {
    if (tc == null) return this;
    Result netem = run(tc, "-n", hub, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms");
    netemProbe = netem.output().trim();
    if (netem.ok()) shaping = "netem";
    else if (run(tc, "-n", hub, "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "1mbit", "burst", "32kb", "latency", "50ms").ok()) shaping = "tbf";
    run(tc, "-n", hub, "qdisc", "del", "dev", "lo", "root");
    return this;
  }

  /** "netem", "tbf" or null (no tc, or neither qdisc in this kernel). */
  String shaping() {
    return shaping;
  }

  /** Why netem is not what {@link #shape} uses, for the report; null when it is. */
  String netemMissing() {
    if (tc == null) return "no 'tc' binary";
    return "netem".equals(shaping) ? null : "netem: unavailable in this kernel (tc said: " + netemProbe + ")";
  }

  String host(int i) {
    return "10.214.0." + (i + 1);
  }

  /** The prefix that runs a command in node {@code i}'s namespace. */
  List<String> exec(int i) {
    return List.of(ip, "netns", "exec", nodes.get(i));
  }

  void cut(int i) throws IOException, InterruptedException {
    must(ip, "-n", hub, "link", "set", "p" + i, "down");
  }

  void heal(int i) throws IOException, InterruptedException {
    must(ip, "-n", hub, "link", "set", "p" + i, "up");
  }

  /** Shapes both directions of node {@code i}'s link (its veth's egress and its bridge port's egress). */
  void shape(int i) throws IOException, InterruptedException {
    if (shaping == null) throw new IOException("no qdisc to shape with (" + netemMissing() + ", no tbf either)");
    String[] params = ("netem".equals(shaping) ? NETEM : TBF).split(" ");
    for (String[] dev : devices(i)) {
      List<String> cmd = new ArrayList<>(List.of(tc, "-n", dev[0], "qdisc", "add", "dev", dev[1], "root", shaping));
      cmd.addAll(List.of(params));
      must(cmd.toArray(String[]::new));
    }
  }

  /** Removes the shaping; returns the packets its qdiscs dropped, read from {@code tc -s} just before. */
  long unshape(int i) throws IOException, InterruptedException {
    long dropped = 0;
    for (String[] dev : devices(i)) {
      Result r = run(tc, "-s", "-n", dev[0], "qdisc", "show", "dev", dev[1]);
      Matcher m = Pattern.compile("dropped (\\d+)").matcher(r.output());
      if (m.find()) dropped += Long.parseLong(m.group(1));
      run(tc, "-n", dev[0], "qdisc", "del", "dev", dev[1], "root");
    }
    return dropped;
  }

  private String[][] devices(int i) {
    return new String[][] {{nodes.get(i), "v" + i}, {hub, "p" + i}};
  }

  /** Deletes every namespace this network made (veths and bridge go with them); never throws. */
  @Override
  public void close() {
    List<String> all = new ArrayList<>(nodes);
    all.add(hub);
    for (String ns : all) {
      try {
        Result r = run(ip, "netns", "del", ns);
        if (!r.ok() && !r.output().contains("No such file")) System.err.println("soak: cannot delete namespace " + ns + ": " + r.output().trim());
      } catch (Exception e) {
        System.err.println("soak: cannot delete namespace " + ns + ": " + e);
      }
    }
  }

  private static void removeLeftovers(String ip) throws IOException, InterruptedException {
    Result list = run(ip, "netns", "list");
    if (!list.ok()) return;
    for (String line : list.output().split("\n")) {
      String name = line.trim().split(" ")[0];
      Matcher m = OURS.matcher(name);
      if (!m.matches()) continue;
      if (ProcessHandle.of(Long.parseLong(m.group(1))).map(ProcessHandle::isAlive).orElse(false)) continue;
      run(ip, "netns", "del", name);
    }
  }

  private void must(String... cmd) throws IOException, InterruptedException {
    Result r = run(cmd);
    if (!r.ok()) throw new IOException(String.join(" ", cmd) + " failed: " + r.output().trim());
  }

  private record Result(int status, String output) {
    boolean ok() {
      return status == 0;
    }
  }

  private static Result run(String... cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return new Result(-1, "timed out: " + out);
    }
    return new Result(p.exitValue(), out);
  }
}
