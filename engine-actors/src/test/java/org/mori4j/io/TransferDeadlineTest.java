package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;

import com.typesafe.config.ConfigFactory;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.junit.jupiter.api.Test;

/**
 * Per-transfer deadlines and cancellation on TCP, against a target that stalls: the target runs in a child JVM
 * ({@link TargetProcessMain}) that the test stops with SIGSTOP, so it neither reads requests nor answers them, and
 * resumes with SIGCONT. While it is stopped: single writes (striped, mid-payload), reads, inline writes, a batch, a
 * session call, an actor-message write with a deadline, an engine whose configured default deadline applies, and
 * {@code cancel()} end with ERR_TIMEOUT at their deadline (+ {@link #SLACK}); a write with {@code noDeadline()}
 * waits. After it resumes: the late READ data did not reach the caller's buffer, the caller's reuse of its write
 * buffers changed nothing that landed, later transfers on the same connections are byte-exact, and the target holds
 * exactly one notification for each cancelled write whose bytes landed (with the bytes as they were at the call)
 * and none for one that did not land. Linux only (signals through {@code kill}). TCP only: the RDMA executions do
 * not run it (an RDMA work request cannot be taken back; there a late completion is only ignored).
 */
class TransferDeadlineTest {
  private static final long BUF = 64L << 20;
  private static final Duration DEADLINE = Duration.ofMillis(300);
  /** How late past its deadline a status may end on a loaded 2-core CI machine. */
  private static final Duration SLACK = Duration.ofMillis(1500);
  private static final Duration WAIT = Duration.ofSeconds(20);

  private static void signal(Process p, String sig) throws Exception {
    Process k = new ProcessBuilder("kill", "-" + sig, String.valueOf(p.pid())).inheritIO().start();
    assertTrue(k.waitFor(10, TimeUnit.SECONDS) && k.exitValue() == 0, "kill -" + sig + " failed");
  }

  private static void pattern(MemorySegment m, long off, long len, int seed) {
    for (long i = 0; i < len; i += 8) m.set(ValueLayout.JAVA_LONG_UNALIGNED, off + i, (seed * 0x9E3779B97F4A7C15L) ^ (off + i));
  }

  /** One transfer issued during the stall, with what is needed to judge it afterwards. */
  private record Issued(String what, TransferStatus status, long calledNanos, long uid, long remoteOffset, long size, int seed) {}

  private static void assertTimedOutAtDeadline(Issued t, Duration deadline) {
    assertTrue(t.status().await(deadline.plus(SLACK).plus(WAIT)), t.what() + " never ended");
    assertEquals(StatusCode.ERR_TIMEOUT, t.status().code(), t.what() + ": " + t.status().message());
  }

  @Test
  void transfersPastTheirDeadlineEndWithTimeoutAndLaterTransfersStayCorrect() throws Exception {
    String targetKey = "deadline-target-" + ProcessHandle.current().pid();
    Process child = startChild(targetKey);
    PrintWriter cmd = new PrintWriter(new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8), true);
    BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    String[] ready = awaitReady(out);
    String initKey = "deadline-init-" + ProcessHandle.current().pid();
    String defKey = "deadline-default-" + ProcessHandle.current().pid();
    System.setProperty("mori4j.engine.transfer-deadline", "250ms");
    ConfigFactory.invalidateCaches();
    IoEngine withDefault;
    try {
      withDefault = IoEngine.create(defKey, IoEngineConfig.loopback());
    } finally {
      System.clearProperty("mori4j.engine.transfer-deadline");
      ConfigFactory.invalidateCaches();
    }
    try (Arena arena = Arena.ofShared(); IoEngine a = IoEngine.create(initKey, IoEngineConfig.loopback()); IoEngine d = withDefault) {
      a.createBackend(BackendType.TCP, TcpBackendConfig.defaults().withConnectionsPerPeer(2).withStripeThreshold(4L << 20));
      d.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
      EngineDesc target = a.discover(ready[1], Integer.parseInt(ready[2]));
      MemoryDesc remote = a.lookupMemory(target, "buf").orElseThrow();
      a.registerRemoteEngine(target);
      d.registerRemoteEngine(target);
      MemorySegment src = arena.allocate(BUF, 4096);
      MemorySegment dst = arena.allocate(BUF, 4096);
      MemoryDesc srcDesc = a.registerMemory(src);
      MemoryDesc dstDesc = a.registerMemory(dst);
      MemoryDesc dSrc = d.registerMemory(src);
      IoEngineSession session = a.createSession(srcDesc, remote).orElseThrow();
      // warm: the lanes are open before the stall
      assertTrue(a.write(srcDesc, 0, remote, 0, 4096, a.allocateTransferUid()).await(WAIT));
      assertTrue(d.write(dSrc, 0, remote, 0, 4096, d.allocateTransferUid()).await(WAIT));

      List<Issued> timed = new ArrayList<>();
      MemorySegment readSnapshot = arena.allocate(3L << 20);
      TransferOptions opt = TransferOptions.deadline(DEADLINE);
      TransferStatus noDeadline;
      signal(child, "STOP");
      try {
        long big = 24L << 20; // striped over both lanes, larger than the socket buffers: stuck mid-payload
        timed.add(write(a, src, srcDesc, remote, 1 << 20, 0, big, 1, opt, "striped 24 MiB write"));
        for (int i = 0; i < 4; i++)
          timed.add(write(a, src, srcDesc, remote, (40L << 20) + i * 8192L, (40L << 20) + i * 8192L, 4096, 10 + i, opt, "inline write " + i));
        long rUid = a.allocateTransferUid();
        dst.asSlice(0, 1 << 20).fill((byte) 0xEE);
        long t = System.nanoTime();
        timed.add(new Issued("read 1 MiB", a.read(dstDesc, 0, remote, 0, 1 << 20, rUid, opt), t, rUid, 0, 0, 0));
        long bUid = a.allocateTransferUid();
        pattern(src, 44L << 20, 8192, 20);
        t = System.nanoTime();
        timed.add(new Issued("batch write", a.batchWrite(List.of(srcDesc), List.of(new long[] {44L << 20, (44L << 20) + 4096}), List.of(remote),
            List.of(new long[] {44L << 20, (44L << 20) + 4096}), List.of(new long[] {4096, 4096}), new long[] {bUid}, opt).get(0), t, bUid,
            44L << 20, 8192, 20));
        long sUid = session.allocateTransferUid();
        pattern(src, 46L << 20, 4096, 21);
        t = System.nanoTime();
        timed.add(new Issued("session write", session.write(46L << 20, 46L << 20, 4096, sUid, opt), t, sUid, 46L << 20, 4096, 21));
        long mUid = a.allocateTransferUid();
        pattern(src, 47L << 20, 4096, 22);
        t = System.nanoTime();
        CompletableFuture<TransferStatus> viaActor = AskPattern.<IoEngineProtocol.Command, TransferStatus>ask(a.actorRef(),
            r -> new IoEngineProtocol.Write(srcDesc, 47L << 20, remote, 47L << 20, 4096, mUid, opt, r), WAIT, a.actorSystem().scheduler())
            .toCompletableFuture();
        long dUid = d.allocateTransferUid();
        pattern(src, 48L << 20, 4096, 23);
        long td = System.nanoTime();
        Issued byDefault = new Issued("write under the engine default (250 ms)", d.write(dSrc, 48L << 20, remote, 48L << 20, 4096, dUid), td,
            dUid, 48L << 20, 4096, 23);
        long nUid = a.allocateTransferUid();
        pattern(src, 49L << 20, 4096, 24);
        noDeadline = a.write(srcDesc, 49L << 20, remote, 49L << 20, 4096, nUid, TransferOptions.noDeadline());
        long cUid = a.allocateTransferUid();
        TransferStatus cancelled = a.read(dstDesc, 2L << 20, remote, 0, 1 << 20, cUid);
        assertTrue(cancelled.cancel(), "cancel() of a transfer in progress");
        assertFalse(cancelled.cancel(), "a second cancel() finds it ended");
        assertEquals(StatusCode.ERR_TIMEOUT, cancelled.code());
        assertTrue(cancelled.message().contains("cancelled by the caller"), cancelled.message());

        for (Issued i : timed) {
          assertTimedOutAtDeadline(i, DEADLINE);
          assertTrue(i.status().message().contains("deadline"), i.what() + ": " + i.status().message());
        }
        TransferStatus actorStatus = viaActor.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        assertEquals(StatusCode.ERR_TIMEOUT, actorStatus.code(), "actor-message write: " + actorStatus.message());
        timed.add(new Issued("actor-message write", actorStatus, t, mUid, 47L << 20, 4096, 22));
        assertTimedOutAtDeadline(byDefault, Duration.ofMillis(250));
        timed.add(byDefault);
        long elapsedMs = (System.nanoTime() - timed.get(0).calledNanos()) / 1_000_000;
        assertTrue(elapsedMs >= DEADLINE.toMillis() && elapsedMs <= DEADLINE.plus(SLACK).toMillis(),
            "the first transfer ended " + elapsedMs + " ms after its call (deadline " + DEADLINE.toMillis() + " ms + slack " + SLACK.toMillis() + ")");
        assertTrue(noDeadline.inProgress(), "a write without a deadline waits for the stalled target");
        // the caller reuses its buffers at once: nothing of this may reach the target or come back
        src.asSlice(0, 50L << 20).fill((byte) 0x55);
        readSnapshot.copyFrom(dst.asSlice(0, 3L << 20));
      } finally {
        signal(child, "CONT");
      }

      assertTrue(noDeadline.await(WAIT), "the write without a deadline finishes once the target resumes");
      assertEquals(StatusCode.SUCCESS, noDeadline.code(), noDeadline.message());
      // later transfers on the same connections are correct, both ways
      pattern(src, 32L << 20, 6L << 20, 99);
      assertSucceeds(a.write(srcDesc, 32L << 20, remote, 50L << 20, 6L << 20, a.allocateTransferUid()));
      assertSucceeds(a.read(dstDesc, 32L << 20, remote, 50L << 20, 6L << 20, a.allocateTransferUid()));
      assertEquals(-1, src.asSlice(32L << 20, 6L << 20).mismatch(dst.asSlice(32L << 20, 6L << 20)));
      for (int i = 0; i < 16; i++) {
        pattern(src, 60L << 20, 4096, 200 + i);
        assertSucceeds(a.write(srcDesc, 60L << 20, remote, 60L << 20, 4096, a.allocateTransferUid()));
        assertSucceeds(a.read(dstDesc, 60L << 20, remote, 60L << 20, 4096, a.allocateTransferUid()));
        assertEquals(-1, src.asSlice(60L << 20, 4096).mismatch(dst.asSlice(60L << 20, 4096)), "round " + i);
      }
      // the cancelled reads' late data went to scratch memory, not into the caller's buffer
      assertEquals(-1, readSnapshot.mismatch(dst.asSlice(0, 3L << 20)), "late READ data reached the caller's buffer after its status ended");

      // exactly one notification per cancelled write that landed, with the bytes as they were at the call; none otherwise
      int landed = 0;
      for (Issued i : timed) {
        if (i.size() == 0) continue; // the read
        String engine = i.what().contains("default") ? defKey : initKey;
        String first = pop(cmd, out, engine, i.uid());
        assertEquals("POPPED NONE", pop(cmd, out, engine, i.uid()), i.what() + ": a second pop finds nothing");
        assertSucceeds(a.read(dstDesc, 0, remote, i.remoteOffset(), i.size(), a.allocateTransferUid()));
        MemorySegment got = dst.asSlice(0, i.size());
        if (first.equals("POPPED SUCCESS")) {
          landed++;
          // an offset-keyed pattern: expected bytes are those the pattern wrote at the source offset
          MemorySegment want = arena.allocate(i.size(), 8);
          long srcOff = i.what().startsWith("striped") ? 1 << 20 : i.remoteOffset();
          for (long k = 0; k < i.size(); k += 8)
            want.set(ValueLayout.JAVA_LONG_UNALIGNED, k, (i.seed() * 0x9E3779B97F4A7C15L) ^ (srcOff + k));
          assertEquals(-1, want.mismatch(got), i.what() + ": notified, so its bytes (as at the call) must be there");
        } else {
          assertEquals("POPPED NONE", first, i.what());
          // a striped write may have landed in part (a stripe not yet sent is not sent): only whole requests are atomic
          if (i.what().startsWith("striped")) continue;
          for (long k = 0; k < i.size(); k += 8)
            assertEquals(0L, got.get(ValueLayout.JAVA_LONG_UNALIGNED, k), i.what() + ": not notified, so nothing of it may have landed (byte " + k + ")");
        }
      }
      System.out.println("TransferDeadlineTest: " + landed + " of " + (timed.size() - 1) + " cancelled writes had landed (notified once each)");
    } finally {
      child.getOutputStream().close();
      if (!child.waitFor(20, TimeUnit.SECONDS)) child.destroyForcibly();
    }
  }

  private static Issued write(IoEngine e, MemorySegment src, MemoryDesc local, MemoryDesc remote, long localOff, long remoteOff, long size,
                              int seed, TransferOptions o, String what) {
    pattern(src, localOff, size, seed);
    long uid = e.allocateTransferUid();
    long t = System.nanoTime();
    return new Issued(what, e.write(local, localOff, remote, remoteOff, size, uid, o), t, uid, remoteOff, size, seed);
  }

  private static void assertSucceeds(TransferStatus s) {
    assertTrue(s.await(WAIT), "no answer within " + WAIT);
    assertEquals(StatusCode.SUCCESS, s.code(), s.message());
  }

  private static String pop(PrintWriter cmd, BufferedReader out, String key, long uid) throws Exception {
    cmd.println("POP " + key + " " + uid);
    long end = System.nanoTime() + WAIT.toNanos();
    String line;
    while (System.nanoTime() < end && (line = out.readLine()) != null) if (line.startsWith("POPPED ")) return line;
    throw new AssertionError("no answer to POP from the target");
  }

  private static Process startChild(String key) throws Exception {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
        TargetProcessMain.class.getName(), key, String.valueOf(BUF)));
    return new ProcessBuilder(cmd).redirectErrorStream(true).start();
  }

  private static String[] awaitReady(BufferedReader out) throws Exception {
    List<String> seen = new ArrayList<>();
    String line;
    while ((line = out.readLine()) != null) {
      if (seen.size() < 200) seen.add(line);
      if (line.startsWith("READY ")) return line.split(" ");
    }
    throw new AssertionError("child target never became ready: " + seen);
  }
}
