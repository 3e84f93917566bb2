package org.mori4j.transport.tcp.fuzz;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.transport.tcp.fuzz.FuzzTarget.*;
import static org.mori4j.transport.tcp.fuzz.RawClient.*;

import com.sun.management.UnixOperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/**
 * Peers that hold the target's resources without using them: thousands of connections that never say hello,
 * and authenticated peers that stop inside a request or stop reading a response. The target must keep
 * serving a well-behaved peer meanwhile, spend little memory on each idle connection, and close each of them
 * on its own clock (the connect timeout for a missing hello, the peer timeout for a stalled exchange), with
 * one log line per reason, while authenticated idle lanes stay open.
 */
class TcpIdleAndStallFuzzTest {
  private static final int IDLE = 2000;
  /** Direct memory an unauthenticated connection may hold (before the buffers behind the hello were deferred: ~120 KiB). */
  private static final long IDLE_BYTES_PER_CONNECTION = 64 * 1024;

  private FuzzTarget t;

  /** Connections are opened for at most this long, so that none is closed for its missing hello before all are open. */
  private static final long OPEN_FOR_NANOS = 3_000_000_000L;
  private static final Duration IDLE_HELLO_TIMEOUT = Duration.ofSeconds(5);

  @BeforeEach
  void start(TestInfo info) throws Exception {
    long seed = TcpWireFuzzTest.SEED ^ info.getDisplayName().hashCode();
    t = info.getTestMethod().orElseThrow().getName().startsWith("thousands") ? new FuzzTarget(seed, IDLE_HELLO_TIMEOUT)
        : new FuzzTarget(seed);
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (t != null) t.close();
  }

  /** Idle connections this process can afford: each is two descriptors here (both ends live in this JVM). */
  private static int idleBudget() {
    if (ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean os) {
      long free = os.getMaxFileDescriptorCount() - os.getOpenFileDescriptorCount();
      return (int) Math.max(50, Math.min(IDLE, (free - 200) / 3));
    }
    return IDLE;
  }

  @Test
  void thousandsOfConnectionsWithoutAHelloAreClosedAfterTheHelloTimeout() throws Exception {
    long token = t.token(FUZZER);
    List<RawClient> lanes = new ArrayList<>();
    List<RawClient> idle = new ArrayList<>();
    int n = idleBudget();
    try {
      for (int i = 0; i < 4; i++) lanes.add(t.authenticated(token));
      long started = System.nanoTime();
      for (int i = 0; i < n && System.nanoTime() - started < OPEN_FOR_NANOS; i++) {
        RawClient c = new RawClient(t.address(), 50);
        idle.add(c);
        if (i % 10 == 0) c.send(hello(FUZZER, token).limit(40)); // half a header, then nothing
      }
      long opened = System.nanoTime();
      System.out.printf("%d idle connections opened in %d ms (at most %d, for at most %d ms)%n", idle.size(),
          (opened - started) / 1_000_000, n, OPEN_FOR_NANOS / 1_000_000);
      assertTrue(idle.size() >= Math.min(n, 200), "only " + idle.size() + " connections opened in " + OPEN_FOR_NANOS / 1_000_000 + " ms");
      n = idle.size();
      long deadline = opened + 10_000_000_000L;
      while (fdsNow() < t.baselineFds + 2L * n && System.nanoTime() < deadline) Thread.sleep(10);
      assertTrue(fdsNow() >= t.baselineFds + 2L * n, "the target did not accept " + n + " connections (seed " + t.seed + ")");
      long perConnection = (FuzzTarget.direct() - t.baselineDirect) / n;
      System.out.printf("%d idle connections accepted; direct memory %d B each%n", n, perConnection);
      assertTrue(perConnection <= IDLE_BYTES_PER_CONNECTION, "an idle connection holds " + perConnection + " B of direct memory");
      t.awaitGoodRounds(3, 10_000); // served while they wait
      long closeBy = System.nanoTime() + IDLE_HELLO_TIMEOUT.toNanos() + 5_000_000_000L;
      for (int i = 0; i < idle.size(); i++) {
        long left = Math.max(1, (closeBy - System.nanoTime()) / 1_000_000);
        assertTrue(idle.get(i).closedWithin(left), "idle connection " + i + " still open after the hello timeout (seed " + t.seed + ")");
      }
      System.out.printf("all closed %d ms after the last opened%n", (System.nanoTime() - opened) / 1_000_000);
      for (RawClient c : lanes) { // authenticated lanes may idle for ever
        c.send(request(T_READ, 0, 1, OPEN_ID, t.open.accessKey(), t.open.address(), 64, new long[] {0}, new long[] {64}, null));
        Response r = c.response();
        assertNotNull(r, "an authenticated idle lane was closed");
        assertEquals(0, r.status(), r.text());
      }
    } finally {
      idle.forEach(RawClient::close);
      lanes.forEach(RawClient::close);
    }
    t.assertHealthy("idle connections", "no hello in time");
  }

  private static long fdsNow() {
    return FuzzTarget.fds();
  }

  /** Waits for the target's WARN line naming {@code reason}; returns the ms it took. */
  private long awaitWarning(String reason, long millis) throws InterruptedException {
    long start = System.nanoTime();
    while (t.warnings().stream().noneMatch(l -> l.contains(": " + reason + " ("))) {
      assertTrue(System.nanoTime() - start < millis * 1_000_000, "no '" + reason + "' within " + millis + " ms: " + t.warnings());
      Thread.sleep(20);
    }
    return (System.nanoTime() - start) / 1_000_000;
  }

  @Test
  void aPeerThatStopsReadingMidResponseIsClosedAfterThePeerTimeout() throws Exception {
    try (RawClient c = t.authenticated(t.token(FUZZER))) {
      // 32 reads of the whole 4 MiB region, never read: far more than the sockets buffer
      for (int i = 0; i < 32; i++)
        c.send(request(T_READ, 0, i, OPEN_ID, t.open.accessKey(), t.open.address(), OPEN_SIZE, new long[] {0}, new long[] {OPEN_SIZE}, null));
      t.awaitGoodRounds(3, 10_000); // the loop is not blocked by the stalled response
      long growth = FuzzTarget.direct() - t.baselineDirect;
      assertTrue(growth < (16L << 20), "direct memory grew by " + growth + " B behind a reader that stopped");
      long ms = awaitWarning("no progress for peer-timeout", PEER_TIMEOUT.toMillis() + 5000);
      System.out.printf("stopped reader closed %d ms after its requests (peer-timeout %d ms)%n", ms, PEER_TIMEOUT.toMillis());
      assertTrue(t.warnings().stream().anyMatch(l -> l.contains("stopped reading a response")), t.warnings().toString());
      assertTrue(c.closedWithin(10_000), "the stalled connection was not closed");
    }
    t.assertHealthy("a peer that stops reading", "no progress for peer-timeout");
  }

  @Test
  void aPeerThatStopsMidRequestIsClosedAfterThePeerTimeout() throws Exception {
    try (RawClient c = t.authenticated(t.token(FUZZER))) {
      // a 1 MiB write whose payload stops after 1000 bytes, the connection left open
      c.send(request(T_WRITE, 0, 1, OPEN_ID, t.open.accessKey(), t.open.address(), 1 << 20, new long[] {0},
          new long[] {1 << 20}, new byte[1000]));
      t.awaitGoodRounds(3, 10_000);
      long ms = awaitWarning("no progress for peer-timeout", PEER_TIMEOUT.toMillis() + 5000);
      System.out.printf("stalled writer closed %d ms after its request (peer-timeout %d ms)%n", ms, PEER_TIMEOUT.toMillis());
      assertTrue(t.warnings().stream().anyMatch(l -> l.contains("stopped inside a request")), t.warnings().toString());
      assertTrue(c.closedWithin(5000), "the stalled connection was not closed");
    }
    t.assertHealthy("a peer that stops mid-request", "no progress for peer-timeout");
  }
}
