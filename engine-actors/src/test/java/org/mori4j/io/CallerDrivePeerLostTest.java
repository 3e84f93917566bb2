package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.typesafe.config.ConfigFactory;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.tcp.CallerDriveStats;

/**
 * Caller-driven TCP round trips ({@code mori4j.tcp.caller-drive = on}) against a target in a child JVM
 * ({@link TargetProcessMain}) that the test stops (SIGSTOP) and then kills (SIGKILL): a caller-driven write with a
 * deadline ends with ERR_TIMEOUT at its deadline, and one whose caller waits when the peer dies ends with
 * ERR_PEER_LOST (or ERR_TRANSPORT) within seconds, never hanging. Both requests must have left from the caller's thread
 * ({@link CallerDriveStats#sent()}), or the test proves nothing about that path: before each the test waits until
 * the connections to the peer are idle ({@link CallerDriveStats#awaitIdle}) instead of assuming they are once the
 * previous transfer completed. Linux only (signals through kill).
 */
class CallerDrivePeerLostTest {
  private static final Duration DEADLINE = Duration.ofMillis(300);
  /** How late past its deadline, or past the kill, a status may end on a loaded 2-core CI machine. */
  private static final Duration SLACK = Duration.ofMillis(1500);
  private static final Set<StatusCode> LOST = Set.of(StatusCode.ERR_PEER_LOST, StatusCode.ERR_TRANSPORT);

  private static void signal(Process p, String sig) throws Exception {
    Process k = new ProcessBuilder("kill", "-" + sig, String.valueOf(p.pid())).inheritIO().start();
    assertTrue(k.waitFor(10, TimeUnit.SECONDS) && k.exitValue() == 0, "kill -" + sig + " failed");
  }

  /** kill returns once the signal is sent; the child's threads stop a little later (state T in /proc/PID/task/TID/stat). */
  private static void awaitStopped(Process p) throws Exception {
    java.nio.file.Path tasks = java.nio.file.Path.of("/proc/" + p.pid() + "/task");
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < end) {
      if (allStopped(tasks)) return; // every thread of it, not only the main one
      Thread.sleep(5);
    }
    fail("child " + p.pid() + " did not stop within 10 s");
  }

  private static boolean allStopped(java.nio.file.Path tasks) throws Exception {
    try (java.util.stream.Stream<java.nio.file.Path> ts = java.nio.file.Files.list(tasks)) {
      for (java.nio.file.Path t : ts.toList()) {
        String s;
        try {
          s = java.nio.file.Files.readString(t.resolve("stat"));
        } catch (java.nio.file.NoSuchFileException gone) {
          continue; // a thread that ended
        }
        char state = s.charAt(s.lastIndexOf(')') + 2);
        if (state != 'T' && state != 't') return false;
      }
    }
    return true;
  }

  private static void idle(String peerKey) {
    assertTrue(CallerDriveStats.awaitIdle(peerKey, Duration.ofSeconds(20)), "the connections to " + peerKey + " did not become idle");
  }

  @Test
  void deadlineAndPeerDeathEndCallerDrivenTransfersWithoutHanging() throws Exception {
    assumeFalse(TestBackends.rdma(), "TCP only: the RDMA executions need not run it again");
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp",
        System.getProperty("java.class.path"), TargetProcessMain.class.getName(), "cd-lost-target-" + ProcessHandle.current().pid(),
        String.valueOf(1L << 20)));
    Process child = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    IoEngine a = null;
    try (Arena arena = Arena.ofShared()) {
      BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      String[] ready = null;
      List<String> seen = new ArrayList<>();
      for (String line; ready == null && (line = out.readLine()) != null; ) {
        if (seen.size() < 200) seen.add(line);
        if (line.startsWith("READY ")) ready = line.split(" ");
      }
      assertNotNull(ready, "child target never became ready: " + seen);
      System.setProperty("mori4j.tcp.caller-drive", "on");
      ConfigFactory.invalidateCaches();
      try {
        a = IoEngine.create("cd-lost-init-" + ProcessHandle.current().pid(), IoEngineConfig.loopback());
      } finally {
        System.clearProperty("mori4j.tcp.caller-drive");
        ConfigFactory.invalidateCaches();
      }
      // two lanes, used in turn: each of the two requests below finds its lane idle
      a.createBackend(BackendType.TCP, TcpBackendConfig.defaults().withConnectionsPerPeer(2));
      EngineDesc t = a.discover(ready[1], Integer.parseInt(ready[2]));
      a.registerRemoteEngine(t);
      MemoryDesc remote = a.lookupMemory(t, "buf").orElseThrow();
      MemoryDesc local = a.registerMemory(arena.allocate(1L << 20, 4096));
      // warm-up: 10 writes from the caller's thread, each on idle connections. A write that finds its lane held by the
      // I/O loop's timer at that very moment rightly takes the loop's path and does not count; up to 20 writes, every
      // one must succeed.
      long sent = CallerDriveStats.sent();
      for (int i = 0; i < 20 && CallerDriveStats.sent() - sent < 10; i++) {
        idle(t.key());
        TransferStatus s = a.write(local, (i % 16) * 4096L, remote, (i % 16) * 4096L, 4096, a.allocateTransferUid());
        assertTrue(s.await(Duration.ofSeconds(20)) && s.succeeded(), "warm-up write " + i + ": " + s.message());
      }
      assertTrue(CallerDriveStats.sent() - sent >= 10, "warm-up writes did not take the caller path");

      signal(child, "STOP");
      awaitStopped(child);
      idle(t.key()); // both lanes: the two writes below take one each
      sent = CallerDriveStats.sent();
      long t0 = System.nanoTime();
      TransferStatus timed = a.write(local, 0, remote, 0, 4096, a.allocateTransferUid(), TransferOptions.deadline(DEADLINE));
      TransferStatus waiting = a.write(local, 8192, remote, 8192, 4096, a.allocateTransferUid(), TransferOptions.noDeadline());
      assertEquals(sent + 2, CallerDriveStats.sent(), "the two requests did not leave from the caller's thread");
      assertTrue(timed.await(DEADLINE.plus(SLACK).plusSeconds(20)), "the write with a deadline never ended");
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertEquals(StatusCode.ERR_TIMEOUT, timed.code(), timed.message());
      assertTrue(ms <= DEADLINE.plus(SLACK).toMillis(), "ended " + ms + " ms after its call (deadline " + DEADLINE.toMillis() + " ms)");
      // its caller awaits (drives, hands back, parks) while the peer is stopped, then killed
      assertFalse(waiting.await(Duration.ofMillis(200)), "a write to a stopped peer ended: " + waiting.code());
      signal(child, "KILL");
      long k0 = System.nanoTime();
      assertTrue(waiting.await(Duration.ofSeconds(20)), "the waiting write did not end within 20 s of the kill");
      long killMs = (System.nanoTime() - k0) / 1_000_000;
      assertTrue(LOST.contains(waiting.code()), "ended with " + waiting.code() + ": " + waiting.message());
      assertTrue(killMs <= 10_000, "ended " + killMs + " ms after the kill");
    } finally {
      child.destroyForcibly();
      child.waitFor(10, TimeUnit.SECONDS);
      if (a != null) a.close();
    }
  }
}
