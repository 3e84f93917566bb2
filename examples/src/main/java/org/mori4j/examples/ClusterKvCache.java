package org.mori4j.examples;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.mori4j.cluster.ClusterEngine;
import org.mori4j.cluster.ClusterSettings;
import org.mori4j.cluster.DescriptorDirectory;
import org.mori4j.cluster.DirectoryEvent;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * A KV cache shared through the cluster, in three JVMs on 127.0.0.1: this process is node 0 and starts nodes
 * 1 and 2 as child processes (same java, same class path). Every node registers a "KV cache" region of 8
 * blocks of 64 KiB, publishes it in the {@link DescriptorDirectory} as {@code kv-cache/node-<i>/layer-0}, looks
 * up the others' by name and reads them through its engine, checking every byte against the owner's known
 * pattern. Then node 2 is killed with SIGKILL: the cluster downs it, the directory drops its entry on every
 * survivor, and nodes 0 and 1 keep reading each other's cache throughout, without a single failure. The
 * process exits non-zero if any check fails.
 */
public final class ClusterKvCache {
  private ClusterKvCache() {}

  static final int BLOCKS = 8;
  static final int BLOCK = 64 * 1024;
  static final int SIZE = BLOCKS * BLOCK;
  static final String PREFIX = "kv-cache/";
  static final Duration LIMIT = Duration.ofSeconds(60);

  static String regionName(int node) {
    return PREFIX + "node-" + node + "/layer-0";
  }

  static int ownerOf(String name) {
    return Integer.parseInt(name.substring((PREFIX + "node-").length(), name.indexOf('/', PREFIX.length())));
  }

  /** The bytes node {@code owner}'s cache holds: block b from its own seed, so any reader can check them. */
  static void fill(MemorySegment seg, int owner) {
    for (int b = 0; b < BLOCKS; b++) {
      java.util.Random r = new java.util.Random(owner * 1000L + b);
      for (long o = (long) b * BLOCK; o < (long) (b + 1) * BLOCK; o += 8) seg.set(ValueLayout.JAVA_LONG, o, r.nextLong());
    }
  }

  /** One member: a clustered ActorSystem, an engine with a TCP backend, its directory, its published cache. */
  static final class Node implements AutoCloseable {
    final int index;
    final ActorSystem<Void> system;
    final IoEngine engine;
    final DescriptorDirectory dir;
    final Arena arena = Arena.ofShared();
    final Map<Integer, MemorySegment> expected = new ConcurrentHashMap<>();
    final Map<Integer, MemoryDesc> scratch = new ConcurrentHashMap<>();
    final Map<Integer, MemorySegment> scratchMem = new ConcurrentHashMap<>();

    Node(int index, String seed) {
      this.index = index;
      ClusterSettings.Builder b = ClusterSettings.builder().host("127.0.0.1").port(0);
      if (seed != null) b.seed(seed);
      system = b.build().startSystem();
      engine = IoEngine.create(system, "node-" + index, IoEngineConfig.loopback());
      engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      ClusterEngine.start(engine);          // engines of all members register each other
      dir = DescriptorDirectory.start(engine);
    }

    int port() {
      return Cluster.get(system).selfMember().address().getPort().get();
    }

    /**
     * Waits until this member sees {@code members} members Up. A member still Joining or WeaklyUp when another one
     * dies does not count toward the split-brain resolver's majority: with two of three Up and one of those killed,
     * the survivors would be the smaller side and down themselves.
     */
    void awaitUp(int members) throws InterruptedException {
      long deadline = System.nanoTime() + LIMIT.toNanos();
      for (long up; (up = upMembers()) < members; Thread.sleep(100)) {
        if (System.nanoTime() > deadline) throw new IllegalStateException("node " + index + " sees " + up + " of " + members + " members Up after " + LIMIT);
      }
    }

    private long upMembers() {
      long up = 0;
      for (Member m : Cluster.get(system).state().getMembers()) if (m.status() == MemberStatus.up()) up++;
      return up;
    }

    void publish() throws Exception {
      MemorySegment cache = arena.allocate(SIZE, 4096);
      fill(cache, index);
      dir.publish(regionName(index), engine.registerMemory(cache)).toCompletableFuture().get(LIMIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** Reads node {@code owner}'s whole cache and checks it; returns null or what went wrong. */
    String readAndCheck(int owner, MemoryDesc remote) {
      MemorySegment want = expected.computeIfAbsent(owner, o -> {
        MemorySegment s = arena.allocate(SIZE, 8);
        fill(s, o);
        return s;
      });
      MemoryDesc local = scratch.computeIfAbsent(owner, o -> {
        MemorySegment s = arena.allocate(SIZE, 4096);
        scratchMem.put(o, s);
        return engine.registerMemory(s);
      });
      MemorySegment got = scratchMem.get(owner);
      got.fill((byte) 0);
      TransferStatus st = engine.read(local, 0, remote, 0, SIZE, engine.allocateTransferUid());
      if (!st.await(Duration.ofSeconds(10))) return "read still in progress after 10 s";
      if (!st.succeeded()) return st.code() + " " + st.message();
      long at = got.mismatch(want);
      return at == -1 ? null : "bytes differ at offset " + at;
    }

    /** Looks {@code owner}'s cache up and reads it, retrying while its engine is not registered here yet. */
    void firstRead(int owner) throws Exception {
      MemoryDesc remote = dir.lookup(regionName(owner), LIMIT).toCompletableFuture().get(LIMIT.toSeconds() * 2, TimeUnit.SECONDS);
      long deadline = System.nanoTime() + LIMIT.toNanos();
      String why;
      while ((why = readAndCheck(owner, remote)) != null) {
        if (System.nanoTime() > deadline) throw new IllegalStateException("node " + index + " cannot read " + regionName(owner) + ": " + why);
        Thread.sleep(100); // ClusterEngine registers a new member's engine within a second or two
      }
    }

    @Override
    public void close() throws Exception {
      engine.close();
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      arena.close();
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 3 && args[0].equals("--node")) {
      int index = Integer.parseInt(args[1]);
      try {
        runChild(index, args[2]);
      } catch (Exception e) {
        say(index, "FAILED " + e);
        Runtime.getRuntime().halt(1);
      }
    } else if (args.length == 0) runCoordinator();
    else throw new IllegalArgumentException("usage: ClusterKvCache   (or, for the child nodes it starts: --node <i> <seed host:port>)");
  }

  // ---- nodes 1 and 2 ----

  /**
   * A child node: publish, read node 0's and the other child's cache, then keep reading every cache its
   * directory lists until told to exit; {@code report} prints its counts per owner.
   */
  static void runChild(int index, String seed) throws Exception {
    try (Node node = new Node(index, seed)) {
      node.publish();
      say(index, "PUBLISHED " + regionName(index));
      for (int other = 0; other < 3; other++) {
        if (other == index) continue;
        node.firstRead(other); // the other child may publish later: the lookup waits for the name
        say(index, "READ " + regionName(other) + " OK (" + SIZE + " bytes checked)");
      }
      Map<String, MemoryDesc> listed = new ConcurrentHashMap<>();
      try (DescriptorDirectory.Subscription sub = node.dir.subscribe(PREFIX, e -> {
        if (e instanceof DirectoryEvent.Published p) listed.put(p.name(), p.desc());
        else listed.remove(e.name());
      })) {
        Map<Integer, long[]> counts = new ConcurrentHashMap<>(); // owner -> {ok, failed}
        Thread reader = Thread.ofPlatform().daemon().name("kv-reader").start(() -> {
          while (!Thread.currentThread().isInterrupted()) {
            for (Map.Entry<String, MemoryDesc> e : listed.entrySet()) {
              int owner = ownerOf(e.getKey());
              if (owner == index) continue;
              String why = node.readAndCheck(owner, e.getValue());
              long[] c = counts.computeIfAbsent(owner, o -> new long[2]);
              // a read of a node that just died fails (ERR_PEER_LOST) until the directory drops its entry:
              // counted, and the first one shown; node 0 decides which failures are acceptable
              if (why != null && c[1] == 0) say(index, "MISS reading " + e.getKey() + ": " + why + " (further misses only counted)");
              c[why == null ? 0 : 1]++;
            }
            try {
              Thread.sleep(50);
            } catch (InterruptedException stop) {
              return;
            }
          }
        });
        say(index, "READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null && !line.equals("exit"); ) {
          if (line.equals("report")) {
            StringBuilder b = new StringBuilder("REPORT");
            new TreeMap<>(counts).forEach((o, c) -> b.append(" node-").append(o).append("=").append(c[0]).append("/").append(c[1]));
            say(index, b.append(" listed=").append(new TreeMap<>(listed).keySet()).toString());
          }
        }
        reader.interrupt();
        reader.join(15_000);
      }
    }
    say(index, "EXIT");
  }

  private static void say(int index, String line) {
    synchronized (System.out) {
      System.out.println("NODE " + index + " " + line);
      System.out.flush();
    }
  }

  // ---- node 0: starts the others, kills one, checks the rest ----

  /** A child JVM and the lines it printed that start with "NODE". */
  record Child(int index, Process process, BlockingQueue<String> lines, Writer in) {
    String await(String prefix) throws InterruptedException {
      long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
      while (System.nanoTime() < deadline) {
        String l = lines.poll(1, TimeUnit.SECONDS);
        if (l == null) {
          if (!process.isAlive()) throw new IllegalStateException("node " + index + " exited with " + process.exitValue());
          continue;
        }
        if (l.startsWith("NODE " + index + " FAILED")) throw new IllegalStateException(l);
        if (l.startsWith("NODE " + index + " " + prefix)) return l;
      }
      throw new IllegalStateException("node " + index + " printed no '" + prefix + "' line within 180 s");
    }

    void send(String command) throws java.io.IOException {
      in.write(command + "\n");
      in.flush();
    }
  }

  static Child spawn(int index, String seed) throws Exception {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow", "-Xmx256m"));
    String logConfig = System.getProperty("logback.configurationFile");
    if (logConfig != null) cmd.add("-Dlogback.configurationFile=" + logConfig); // the same logging as this node
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ClusterKvCache.class.getName(), "--node", Integer.toString(index), seed));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread.ofPlatform().daemon().name("node-" + index + "-output").start(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String l; (l = r.readLine()) != null; ) {
          if (l.startsWith("NODE ")) lines.add(l);
          System.out.println(l.startsWith("NODE ") ? l : "  [node " + index + "] " + l);
        }
      } catch (java.io.IOException gone) {
        // the process died
      }
    });
    return new Child(index, p, lines, new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8));
  }

  static void runCoordinator() throws Exception {
    List<Child> children = new ArrayList<>();
    try (Node node0 = new Node(0, null)) {
      String seed = "127.0.0.1:" + node0.port();
      node0.publish();
      System.out.println("NODE 0 PUBLISHED " + regionName(0) + " (cluster seed " + seed + ")");
      for (int i = 1; i <= 2; i++) children.add(spawn(i, seed));
      for (Child c : children) c.await("READY");
      for (int i = 1; i <= 2; i++) {
        node0.firstRead(i);
        System.out.println("NODE 0 READ " + regionName(i) + " OK (" + SIZE + " bytes checked)");
      }
      BlockingQueue<DirectoryEvent> events = new LinkedBlockingQueue<>();
      try (DescriptorDirectory.Subscription sub = node0.dir.subscribe(PREFIX, events::add)) {
        Child one = children.get(0), two = children.get(1);
        node0.awaitUp(3); // before the kill: see awaitUp
        one.send("report");
        long node1ReadsBefore = readsOf(one.await("REPORT"), 0);

        long killed = System.nanoTime();
        two.process().destroyForcibly(); // SIGKILL: no goodbye, no unpublish
        two.process().waitFor(30, TimeUnit.SECONDS);
        System.out.println("killed node 2 (pid " + two.process().pid() + ", exit " + two.process().exitValue() + ")");

        MemoryDesc cache1 = node0.dir.lookup(regionName(1)).toCompletableFuture().get(LIMIT.toSeconds(), TimeUnit.SECONDS);
        long dropped = 0;
        int reads = 0;
        // node 0 keeps reading node 1 until node 2's entry is gone from its directory, and 3 s more
        while (dropped == 0 || System.nanoTime() - dropped < Duration.ofSeconds(3).toNanos()) {
          if (System.nanoTime() - killed > Duration.ofSeconds(90).toNanos())
            throw new IllegalStateException("node 2's directory entry is still listed 90 s after the kill");
          String why = node0.readAndCheck(1, cache1);
          if (why != null) throw new IllegalStateException("node 0 failed to read node 1's cache after the kill: " + why);
          reads++;
          for (DirectoryEvent e; (e = events.poll()) != null; ) {
            if (e instanceof DirectoryEvent.Unpublished u && u.name().equals(regionName(2))) {
              dropped = System.nanoTime();
              System.out.printf("NODE 0 directory: %s unpublished %.1f s after the kill (owner gone: %s)%n", u.name(),
                  (dropped - killed) / 1e9, u.ownerGone());
            }
          }
          Thread.sleep(50);
        }
        if (node0.dir.entries(PREFIX).toCompletableFuture().get(30, TimeUnit.SECONDS).containsKey(regionName(2)))
          throw new IllegalStateException("node 0 still lists " + regionName(2));
        one.send("report");
        String report = one.await("REPORT");
        long node1Reads = readsOf(report, 0);
        if (failuresOf(report, 0) != 0) throw new IllegalStateException("node 1 failed to read node 0's cache: " + report);
        if (node1Reads <= node1ReadsBefore) throw new IllegalStateException("node 1 stopped reading node 0's cache: " + report);
        if (report.contains(regionName(2))) throw new IllegalStateException("node 1 still lists node 2's cache: " + report);
        System.out.printf("survivors kept working: node 0 read node 1's cache %d times after the kill, node 1 read node 0's %d times, "
            + "every byte checked, no failure%n", reads, node1Reads - node1ReadsBefore);
        one.send("exit");
        one.await("EXIT");
        if (!one.process().waitFor(30, TimeUnit.SECONDS) || one.process().exitValue() != 0)
          throw new IllegalStateException("node 1 did not exit cleanly");
      }
    } finally {
      for (Child c : children) c.process().destroyForcibly();
    }
  }

  /** Successful reads of node {@code owner}'s cache in a REPORT line ("node-0=12/0": 12 ok, 0 failed). */
  static long readsOf(String report, int owner) {
    return count(report, owner, 0);
  }

  static long failuresOf(String report, int owner) {
    return count(report, owner, 1);
  }

  private static long count(String report, int owner, int which) {
    for (String w : report.split(" ")) {
      if (w.startsWith("node-" + owner + "=")) return Long.parseLong(w.substring(w.indexOf('=') + 1).split("/")[which]);
    }
    return 0;
  }
}
