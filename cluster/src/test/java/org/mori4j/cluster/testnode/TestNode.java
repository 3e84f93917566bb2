package org.mori4j.cluster.testnode;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.SelfRemoved;
import org.apache.pekko.cluster.typed.Subscribe;
import org.mori4j.cluster.ClusterEngine;
import org.mori4j.cluster.ClusterSettings;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;

/**
 * One cluster member in its own JVM, driven by a test over stdin/stdout lines: a clustered ActorSystem
 * ({@link ClusterSettings}) on the given host and port, an embedded engine with a TCP backend bound to that
 * host, {@link ClusterEngine}, and one registered region of {@value #SLOTS} slots of {@value #CHUNK} bytes
 * that other nodes write into (node {@code i} uses slot {@code i}).
 *
 * <p>Lines it prints (times are epoch milliseconds, comparable between processes of one machine):
 * {@code STARTED <processStart> <systemStart>}, {@code READY <address> <engineKey> <memDescBase64> <t>},
 * {@code REGISTERED <t> <keys>} whenever the set of engines its cluster actor registered changes,
 * {@code MEMBER <t> <event> <address>}, {@code REACH <t> <event> <address>}, {@code SELF-REMOVED <t>},
 * {@code FAIL <t> <peerKey> <op> <code> <message>} for every failed transfer of the write loop,
 * {@code STATS ...} lines answering {@code stats}, and on the way out {@code SHUTDOWN <t> <reason>},
 * {@code ENGINE-CLOSED <t> pending=<n> newWrite=<code> <message>}, {@code TERMINATED <t>} (or {@code TERMINATION-HUNG <t>}, see
 * {@link org.mori4j.cluster.MemberStop}) and {@code EXIT <t>}.
 *
 * <p>Commands: {@code peer <memDescBase64>} (a region of another node to write to; replaces an earlier one
 * with the same engine key), {@code write-loop} (one thread per peer: write a fresh pattern into its slot,
 * read it back, compare, every {@code --pace-ms}), {@code forget <engineKey>} (stop writing to it),
 * {@code stats}, {@code exit}.
 */
public final class TestNode {
  static final int CHUNK = 64 * 1024;
  static final int SLOTS = 8;
  private static final Duration TRANSFER_LIMIT = Duration.ofSeconds(20);
  private static final PrintStream OUT = System.out;

  private final IoEngine engine;
  private final Arena arena;
  private final int index;
  private final long paceMs;
  private final Map<String, MemoryDesc> peers = new ConcurrentHashMap<>();
  private final Map<String, PeerLoop> loops = new ConcurrentHashMap<>();
  private volatile boolean looping;

  private TestNode(IoEngine engine, Arena arena, int index, long paceMs) {
    this.engine = engine;
    this.arena = arena;
    this.index = index;
    this.paceMs = paceMs;
  }

  static void emit(String line) {
    synchronized (OUT) {
      OUT.println(line);
      OUT.flush();
    }
  }

  static long now() {
    return System.currentTimeMillis();
  }

  public static void main(String[] args) throws Exception {
    String host = "127.0.0.1", key = null;
    int port = 0, index = 0;
    long pace = 5;
    List<String> seeds = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--host" -> host = args[++i];
        case "--port" -> port = Integer.parseInt(args[++i]);
        case "--key" -> key = args[++i];
        case "--index" -> index = Integer.parseInt(args[++i]);
        case "--seed" -> seeds.add(args[++i]);
        case "--pace-ms" -> pace = Long.parseLong(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (key == null || index < 0 || index >= SLOTS) throw new IllegalArgumentException("--key and --index 0.." + (SLOTS - 1) + " are required");
    long processStart = ProcessHandle.current().info().startInstant().map(java.time.Instant::toEpochMilli).orElse(-1L);
    long systemStart = now();
    emit("STARTED " + processStart + " " + systemStart);

    ActorSystem<Void> sys = ClusterSettings.builder().host(host).port(port).seeds(seeds).build().startSystem();
    IoEngine engine = IoEngine.create(sys, key, new IoEngineConfig(host, 0));
    engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    Arena arena = Arena.ofShared();
    MemoryDesc own = engine.registerMemory(arena.allocate((long) CHUNK * SLOTS, 4096));
    TestNode node = new TestNode(engine, arena, index, pace);
    node.reportShutdown(sys);
    ActorRef<ClusterEngine.Command> member = ClusterEngine.start(engine);
    sys.systemActorOf(observer(), "testnode-observer", Props.empty());
    emit("READY " + sys.address() + " " + key + " " + Base64.getEncoder().encodeToString(own.toBytes()) + " " + now());
    node.watchRegistrations(sys, member);

    org.mori4j.cluster.MemberStop.whenStopped(sys).thenRun(() -> {
      node.stopLoops();
      emit((sys.getWhenTerminated().toCompletableFuture().isDone() ? "TERMINATED " : "TERMINATION-HUNG ") + now());
      arena.close(); // the engine is closed: nothing refers to the region any more
      emit("EXIT " + now());
      Runtime.getRuntime().halt(0);
    });
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] w = line.trim().split(" ", 2);
      switch (w[0]) {
        case "peer" -> node.addPeer(MemoryDesc.fromBytes(Base64.getDecoder().decode(w[1])));
        case "write-loop" -> node.startLoops();
        case "forget" -> node.forget(w[1]);
        case "stats" -> node.printStats();
        case "exit" -> sys.terminate();
        case "" -> { }
        default -> emit("ERROR unknown command '" + line + "'");
      }
    }
    sys.terminate(); // the test went away
  }

  /** Prints membership and reachability changes as this member sees them. */
  private static Behavior<Object> observer() {
    return Behaviors.setup(ctx -> {
      var subs = Cluster.get(ctx.getSystem()).subscriptions();
      subs.tell(Subscribe.create(ctx.getSelf().narrow(), ClusterEvent.MemberEvent.class));
      subs.tell(Subscribe.create(ctx.getSelf().narrow(), ClusterEvent.ReachabilityEvent.class));
      subs.tell(Subscribe.create(ctx.getSelf().narrow(), SelfRemoved.class));
      return Behaviors.receive(Object.class).onAnyMessage(m -> {
        if (m instanceof ClusterEvent.MemberEvent e)
          emit("MEMBER " + now() + " " + e.getClass().getSimpleName() + " " + e.member().address() + " " + e.member().status());
        else if (m instanceof ClusterEvent.ReachabilityEvent e)
          emit("REACH " + now() + " " + e.getClass().getSimpleName() + " " + e.member().address());
        else if (m instanceof SelfRemoved)
          emit("SELF-REMOVED " + now());
        return Behaviors.same();
      }).build();
    });
  }

  /** Polls the cluster actor (every 20 ms) and prints the registered set whenever it changes. */
  private void watchRegistrations(ActorSystem<?> sys, ActorRef<ClusterEngine.Command> member) {
    Thread t = new Thread(() -> {
      Set<String> last = null;
      while (!sys.getWhenTerminated().toCompletableFuture().isDone()) {
        try {
          Set<String> got = AskPattern.<ClusterEngine.Command, Set<String>>ask(member, ClusterEngine.GetRegisteredEngines::new,
              Duration.ofSeconds(5), sys.scheduler()).toCompletableFuture().get(6, TimeUnit.SECONDS);
          if (!got.equals(last)) {
            last = got;
            emit("REGISTERED " + now() + " " + String.join(",", new TreeSet<>(got)));
          }
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        } catch (Exception e) {
          // the system is stopping, or the actor is busy: ask again
        }
      }
    }, "testnode-registrations");
    t.setDaemon(true);
    t.start();
  }

  /**
   * The node's own view of its end: when coordinated shutdown starts (this member was downed, or told to
   * exit) it says so, and once ClusterEngine's task has closed the engine (phase service-stop) it checks that
   * nothing of the write loop is still in progress and that the engine refuses new transfers.
   */
  private void reportShutdown(ActorSystem<?> sys) {
    CoordinatedShutdown cs = CoordinatedShutdown.get(sys);
    cs.addTask(CoordinatedShutdown.PhaseBeforeServiceUnbind(), "testnode-report", () -> {
      emit("SHUTDOWN " + now() + " " + cs.getShutdownReason().map(Object::toString).orElse("unknown"));
      return CompletableFuture.completedFuture(Done.getInstance());
    });
    cs.addTask(CoordinatedShutdown.PhaseBeforeClusterShutdown(), "testnode-check-engine-closed", () -> CompletableFuture.supplyAsync(() -> {
      int pending = 0;
      for (PeerLoop l : loops.values()) {
        TransferStatus s = l.current;
        if (s != null && s.inProgress()) pending++;
      }
      stopLoops();
      MemoryDesc any = peers.values().stream().findFirst().orElse(null);
      String probe = "none";
      if (any != null) {
        // the local descriptor does not matter: a closed engine refuses before looking at it
        TransferStatus s = engine.write(any, 0, any, 0, 1, 1);
        probe = s.code() + " " + s.message();
      }
      printStats();
      emit("ENGINE-CLOSED " + now() + " pending=" + pending + " newWrite=" + probe);
      return Done.getInstance();
    }));
  }

  private void addPeer(MemoryDesc d) {
    peers.put(d.engineKey(), d);
    if (looping) loops.computeIfAbsent(d.engineKey(), this::startLoop);
  }

  /** Stops writing to {@code peerKey} and forgets its region (a node the test is done with). */
  private void forget(String peerKey) {
    peers.remove(peerKey);
    PeerLoop l = loops.remove(peerKey);
    if (l != null) l.running = false;
  }

  private synchronized void startLoops() {
    looping = true;
    for (String k : peers.keySet()) loops.computeIfAbsent(k, this::startLoop);
  }

  private void stopLoops() {
    looping = false;
    for (PeerLoop l : loops.values()) l.running = false;
    for (PeerLoop l : loops.values()) {
      try {
        l.thread.join(TRANSFER_LIMIT.toMillis() * 2 + 1000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void printStats() {
    for (PeerLoop l : loops.values()) emit(l.stats());
    emit("STATS-END " + now());
  }

  private PeerLoop startLoop(String peerKey) {
    PeerLoop l = new PeerLoop(peerKey);
    l.thread = new Thread(l::run, "loop-" + peerKey);
    l.thread.setDaemon(true);
    l.thread.start();
    return l;
  }

  /** Writes a fresh pattern into this node's slot of one peer, reads it back and compares, until stopped. */
  private final class PeerLoop {
    final String peerKey;
    volatile boolean running = true;
    volatile TransferStatus current;
    Thread thread;
    long ok, fail, lost, hung, mismatched;
    volatile long firstLostAt = -1, lastNonLostAt = -1, lastOkAt = -1, lastFailAt = -1;
    final Map<StatusCode, Integer> codes = new EnumMap<>(StatusCode.class);

    PeerLoop(String peerKey) {
      this.peerKey = peerKey;
    }

    synchronized String stats() {
      return "STATS " + peerKey + " ok=" + ok + " fail=" + fail + " lost=" + lost + " hung=" + hung + " mismatched=" + mismatched
          + " firstLost=" + firstLostAt + " lastNonLost=" + lastNonLostAt + " lastOk=" + lastOkAt + " lastFail=" + lastFailAt
          + " codes=" + codes.toString().replace(" ", "");
    }

    void run() {
      MemorySegment scratch;
      MemoryDesc local;
      try {
        scratch = arena.allocate(2L * CHUNK, 4096);
        local = engine.registerMemory(scratch);
      } catch (RuntimeException e) {
        emit("ERROR loop " + peerKey + " cannot start: " + e);
        return;
      }
      long slot = (long) index * CHUNK;
      long seq = 0;
      while (running) {
        MemoryDesc peer = peers.get(peerKey);
        if (peer == null) return;
        java.util.SplittableRandom r = new java.util.SplittableRandom(((long) index << 40) ^ seq++);
        for (long o = 0; o < CHUNK; o += 8) scratch.set(ValueLayout.JAVA_LONG, o, r.nextLong());
        boolean good = outcome("write", engine.write(local, 0, peer, slot, CHUNK, engine.allocateTransferUid()));
        if (good) good = outcome("read", engine.read(local, CHUNK, peer, slot, CHUNK, engine.allocateTransferUid()));
        if (good && MemorySegment.mismatch(scratch, 0, CHUNK, scratch, CHUNK, 2L * CHUNK) >= 0) {
          synchronized (this) {
            mismatched++;
            fail++;
            lastFailAt = lastNonLostAt = now();
          }
          emit("FAIL " + now() + " " + peerKey + " compare BYTES the bytes read back differ from the bytes written");
          good = false;
        }
        try {
          Thread.sleep(good ? paceMs : 20);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    /** Waits for one transfer (bounded) and records how it ended. */
    private boolean outcome(String op, TransferStatus s) {
      current = s;
      boolean done = s.await(TRANSFER_LIMIT);
      long t = now();
      synchronized (this) {
        if (!done) {
          hung++;
          fail++;
          lastFailAt = lastNonLostAt = t;
        } else if (s.succeeded()) {
          ok++;
          lastOkAt = lastNonLostAt = t;
        } else {
          fail++;
          lastFailAt = t;
          codes.merge(s.code(), 1, Integer::sum);
          if (s.code() == StatusCode.ERR_PEER_LOST) {
            lost++;
            if (firstLostAt < 0) firstLostAt = t;
          } else {
            lastNonLostAt = t;
          }
        }
      }
      if (!done) emit("FAIL " + t + " " + peerKey + " " + op + " HUNG still in progress after " + TRANSFER_LIMIT.toSeconds() + " s");
      else if (!s.succeeded()) emit("FAIL " + t + " " + peerKey + " " + op + " " + s.code() + " " + s.message());
      return done && s.succeeded();
    }
  }
}
