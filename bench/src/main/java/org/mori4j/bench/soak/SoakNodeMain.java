package org.mori4j.bench.soak;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.mori4j.bench.ClusterMember;
import org.mori4j.cluster.ClusterSettings;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;

/**
 * One node of {@code mori4j soak} in a JVM of its own, spawned by the driver (in a network namespace of
 * the soak's when it has them): a cluster member with engine {@code soak-<index>} and a TCP backend, the
 * soak's published buffer, {@link SoakWorker}s against every other node, and the target half of the
 * notification check. It talks to the driver over its standard streams only (so it works in any
 * namespace): lines out ({@code SOAK-READY}, {@code STATS}, {@code NOTIF}, {@code LANDED}, {@code RES},
 * events), commands in ({@code EXPECT}, {@code PAUSE}, {@code RESUME}, {@code RES}, {@code STOP},
 * {@code FLUSH}, {@code EXIT}; stdin's end means {@code EXIT}). When its member is downed (a partition) it
 * stops the same way and exits 3.
 *
 * <p>Arguments: {@code <index> <host> <port> <soak-seed> [seed host:port ...]}.
 */
public final class SoakNodeMain {
  private static final Object OUT = new Object();

  private SoakNodeMain() {}

  static void emit(String line) {
    synchronized (OUT) {
      System.out.println(line);
      System.out.flush();
    }
  }

  public static void main(String[] args) throws Exception {
    org.slf4j.LoggerFactory.getILoggerFactory();
    if (args.length < 4) {
      System.err.println("usage: SoakNodeMain <index> <host> <port> <soak-seed> [seed ...]");
      System.exit(2);
    }
    int index = Integer.parseInt(args[0]);
    String host = args[1];
    int port = Integer.parseInt(args[2]);
    long soakSeed = Long.parseLong(args[3]);
    List<String> seeds = List.of(args).subList(4, args.length);
    System.exit(new SoakNodeMain().run(index, host, port, soakSeed, seeds));
  }

  private int run(int index, String host, int port, long soakSeed, List<String> seeds) throws Exception {
    ClusterSettings settings = ClusterSettings.builder().host(host).port(port).systemName("mori4j-soak").seeds(seeds).build();
    TcpBackendConfig tcp = TcpBackendConfig.defaults();
    Duration bound = tcp.peerTimeout().plusSeconds(5);
    Arena arena = Arena.ofShared();
    ClusterMember member = null;
    WorkGate gate = new WorkGate();
    List<Thread> threads = new ArrayList<>();
    try {
      member = ClusterMember.start(settings, SoakLayout.engineKey(index), "soak", host, tcp, 0);
      var engine = member.engine();
      MemorySegment target = arena.allocate(SoakLayout.TARGET_BYTES, 4096);
      MemorySegment local = arena.allocate(SoakLayout.LOCAL_BYTES, 4096);
      SoakPattern.fixed(target, 0, SoakLayout.READ_AREA, soakSeed); // before it is published: no reader sees it half filled
      MemoryDesc targetDesc = engine.registerMemory(target);
      MemoryDesc localDesc = engine.registerMemory(local);
      engine.publishMemory(SoakLayout.PUBLISHED_NAME, targetDesc);
      if (!member.awaitUp(Duration.ofSeconds(90))) {
        System.err.println("soak node " + index + ": not Up within 90 s; seeds " + seeds);
        return 1;
      }
      long pid = ProcessHandle.current().pid();
      long incarnation = SoakPeers.incarnation(engine.engineDesc());
      emit("SOAK-READY index=" + index + " pid=" + pid + " inc=" + incarnation + " host=" + host + " port=" + port + " bound_ms=" + bound.toMillis());

      SoakCounters counters = new SoakCounters();
      LandedWrites landed = new LandedWrites();
      NotificationChecker checker = new NotificationChecker(engine, incarnation, SoakNodeMain::emit);
      SoakPeers peers = new SoakPeers(member, index);
      long run = new SplittableRandom().nextLong(1, 1L << 31);
      AtomicLong seq = new AtomicLong();
      ClusterMember m = member;
      threads.add(Thread.ofPlatform().daemon().name("soak-peers").start(() -> {
        while (!gate.stopped() && !m.terminated()) {
          peers.refresh();
          sleep(500);
        }
      }));
      for (int p = 0; p < SoakLayout.NODES; p++) {
        if (p == index) continue;
        for (int w = 0; w < SoakLayout.WORKERS_PER_PEER; w++)
          threads.add(Thread.ofPlatform().name("soak-" + index + "->" + p + "/" + w).start(new SoakWorker(engine, local, localDesc, peers,
              index, p, w, soakSeed, bound, counters, landed, gate, () -> (run << 32) | seq.incrementAndGet(), SoakNodeMain::emit)));
      }
      Thread ticker = Thread.ofPlatform().daemon().name("soak-notify").start(() -> {
        for (long n = 0; !Thread.currentThread().isInterrupted(); n++) {
          checker.tick();
          if (n % 2 == 0) landed.flush(SoakNodeMain::emit);
          if (n % 10 == 0) {
            emit(counters.statsLine());
            emit(checker.line());
          }
          if (!sleep(100)) return;
        }
      });
      Commands commands = new Commands(gate, checker, counters, landed);
      Thread.ofPlatform().daemon().name("soak-stdin").start(commands::read);
      int code = 0;
      while (!commands.exit()) {
        if (member.terminated()) {
          emit("DOWNED"); // before the workers are joined and the system stopped, either of which may take a while
          System.err.println("soak node " + index + ": member removed from the cluster (downed); stopping");
          code = 3;
          break;
        }
        Thread.sleep(100);
      }
      gate.stop();
      for (Thread t : threads) t.join(Duration.ofSeconds(90));
      ticker.interrupt();
      ticker.join(Duration.ofSeconds(5));
      landed.flush(SoakNodeMain::emit);
      checker.tick();
      emit(counters.statsLine());
      emit(checker.line());
      emit("EXIT code=" + code);
      return code;
    } finally {
      gate.stop();
      if (member != null) member.close(); // the engine is closed before its memory is freed
      arena.close();
    }
  }

  private static boolean sleep(long ms) {
    try {
      Thread.sleep(ms);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The driver's commands on stdin. */
  private static final class Commands {
    private final WorkGate gate;
    private final NotificationChecker checker;
    private final SoakCounters counters;
    private final LandedWrites landed;
    private volatile boolean exit;

    Commands(WorkGate gate, NotificationChecker checker, SoakCounters counters, LandedWrites landed) {
      this.gate = gate;
      this.checker = checker;
      this.counters = counters;
      this.landed = landed;
    }

    boolean exit() {
      return exit;
    }

    void read() {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          try {
            if (!handle(line.trim())) break;
          } catch (RuntimeException | InterruptedException e) {
            System.err.println("soak node: command '" + line + "' failed: " + e);
          }
        }
      } catch (IOException e) {
        // the driver is gone: exit below
      }
      exit = true;
    }

    private boolean handle(String line) throws InterruptedException {
      String[] w = line.split(" ");
      switch (w[0]) {
        case "EXPECT" -> {
          String[] list = w[4].split(",");
          long[] uids = new long[list.length];
          for (int i = 0; i < list.length; i++) uids[i] = Long.parseLong(list[i]);
          checker.expect(w[1], Long.parseLong(w[2]), w[3].equals("1"), uids);
        }
        case "PAUSE" -> {
          gate.pause(true);
          emit("PAUSED idle=" + gate.awaitIdle(60_000));
        }
        case "RESUME" -> gate.pause(false);
        case "RES" -> emit(ResourceSample.measure().line());
        case "STOP" -> {
          gate.stop();
          boolean idle = gate.awaitIdle(90_000);
          landed.flush(SoakNodeMain::emit); // before STOPPED: the driver relays these before it starts draining the checks
          emit(counters.statsLine());
          emit("STOPPED idle=" + idle);
        }
        case "FLUSH" -> {
          checker.tick();
          emit("FLUSHED idle=" + checker.idle() + " " + checker.line());
        }
        case "EXIT" -> {
          return false;
        }
        default -> System.err.println("soak node: unknown command '" + line + "'");
      }
      return true;
    }
  }
}
