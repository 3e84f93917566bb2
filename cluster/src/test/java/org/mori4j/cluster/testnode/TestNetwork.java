package org.mori4j.cluster.testnode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;

/**
 * A private network for partition tests, built with iproute2 and torn down by {@link #close()}: one network
 * namespace per node and a hub namespace holding a bridge, each node joined to the bridge by a veth pair
 * created inside the namespaces (nothing is added to the machine's own namespace). Node {@code i} has
 * {@code 10.213.0.(i+1)/24} on its end; the namespaces are isolated, so the range cannot meet any other
 * network. Cutting a node off sets its port on the bridge down: its packets go nowhere, its sockets see
 * silence (no reset), which is what a failed switch port or cable looks like.
 *
 * <p>Names carry the test JVM's pid ({@code m4j<pid>h}, {@code m4j<pid>n<i>}); namespaces of this pattern
 * whose pid is no longer alive are left-overs of a killed run and are removed first. Where namespaces
 * cannot be created (no {@code ip}, not root, no CAP_NET_ADMIN, no bridge support) {@link #create} skips
 * the test through a JUnit assumption that says why.
 */
public final class TestNetwork implements AutoCloseable {
  private static final Pattern OURS = Pattern.compile("m4j(\\d+)(h|n\\d+)");
  private final String ip;
  private final String hub;
  private final List<String> nodes = new ArrayList<>();

  private TestNetwork(String ip, String prefix) {
    this.ip = ip;
    this.hub = prefix + "h";
  }

  /** Builds the namespaces, bridge and veth pairs for {@code n} nodes, or skips the test saying why not. */
  public static TestNetwork create(int n) throws Exception {
    String ip = null;
    for (String dir : List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin"))
      if (Files.isExecutable(Path.of(dir, "ip"))) {
        ip = dir + "/ip";
        break;
      }
    Assumptions.assumeTrue(ip != null, "partition test skipped: no iproute2 'ip' binary (apt-get install iproute2)");
    removeLeftovers(ip);
    TestNetwork net = new TestNetwork(ip, "m4j" + ProcessHandle.current().pid());
    Result hub = run(ip, "netns", "add", net.hub);
    Assumptions.assumeTrue(hub.ok(), "partition test skipped: cannot create a network namespace (not root or no CAP_NET_ADMIN?): "
        + "'ip netns add' said: " + hub.output().trim());
    boolean done = false;
    try {
      Result br = run(ip, "-n", net.hub, "link", "add", "br0", "type", "bridge");
      Assumptions.assumeTrue(br.ok(), "partition test skipped: cannot create a bridge in a namespace: " + br.output().trim());
      net.must("-n", net.hub, "link", "set", "br0", "up");
      for (int i = 0; i < n; i++) {
        String ns = "m4j" + ProcessHandle.current().pid() + "n" + i;
        net.must("netns", "add", ns);
        net.nodes.add(ns);
        net.must("-n", ns, "link", "add", "v" + i, "type", "veth", "peer", "name", "p" + i, "netns", net.hub);
        net.must("-n", ns, "addr", "add", "10.213.0." + (i + 1) + "/24", "dev", "v" + i);
        net.must("-n", ns, "link", "set", "v" + i, "up");
        net.must("-n", ns, "link", "set", "lo", "up");
        net.must("-n", net.hub, "link", "set", "p" + i, "master", "br0");
        net.must("-n", net.hub, "link", "set", "p" + i, "up");
      }
      done = true;
      return net;
    } finally {
      if (!done) net.close();
    }
  }

  /** The address of node {@code i}. */
  public String host(int i) {
    return "10.213.0." + (i + 1);
  }

  /** The prefix that starts a command inside node {@code i}'s namespace. */
  public List<String> exec(int i) {
    return List.of(ip, "netns", "exec", nodes.get(i));
  }

  /** Cuts node {@code i} off: its port on the bridge goes down. */
  public void cut(int i) throws Exception {
    must("-n", hub, "link", "set", "p" + i, "down");
  }

  /** Connects node {@code i} again. */
  public void heal(int i) throws Exception {
    must("-n", hub, "link", "set", "p" + i, "up");
  }

  /** Deletes every namespace this network made (their veths and the bridge go with them); never throws. */
  @Override
  public void close() {
    List<String> all = new ArrayList<>(nodes);
    all.add(hub);
    for (String ns : all) {
      try {
        Result r = run(ip, "netns", "del", ns);
        if (!r.ok() && !r.output().contains("No such file")) System.err.println("cannot delete namespace " + ns + ": " + r.output().trim());
      } catch (Exception e) {
        System.err.println("cannot delete namespace " + ns + ": " + e);
      }
    }
  }

  private static void removeLeftovers(String ip) throws Exception {
    Result list = run(ip, "netns", "list");
    if (!list.ok()) return;
    for (String line : list.output().split("\n")) {
      String name = line.trim().split(" ")[0];
      Matcher m = OURS.matcher(name);
      if (!m.matches()) continue;
      long pid = Long.parseLong(m.group(1));
      if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) continue;
      run(ip, "netns", "del", name);
    }
  }

  private void must(String... args) throws Exception {
    Result r = run(ip, args);
    if (!r.ok()) throw new IllegalStateException("ip " + String.join(" ", args) + " failed: " + r.output().trim());
  }

  private record Result(int status, String output) {
    boolean ok() {
      return status == 0;
    }
  }

  private static Result run(String ip, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(ip);
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return new Result(-1, "timed out: " + out);
    }
    return new Result(p.exitValue(), out);
  }
}
