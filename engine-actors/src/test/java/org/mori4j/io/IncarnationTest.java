package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Peer incarnations: a target engine killed and restarted under the same key and control address (in this JVM,
 * and as a child JVM) is a new incarnation. Descriptors and sessions of the old one are refused with a message
 * naming both incarnations, the new one is registered at once (no deregistration, no timeout), no byte reaches
 * the new process through an old descriptor, a handshake meant for the old incarnation is refused by the new
 * process itself, and an initiator restarted under its key does not find its old self's notifications.
 */
class IncarnationTest {
  private static final long BUF = 1 << 20;
  private static final Duration WAIT = Duration.ofSeconds(20);

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static void fill(MemorySegment m, long n, byte seed) {
    for (long i = 0; i < n; i++) m.set(ValueLayout.JAVA_BYTE, i, (byte) (seed + i * 31));
  }

  private static TransferStatus done(TransferStatus s) {
    assertTrue(s.await(WAIT), "transfer did not finish within " + WAIT);
    return s;
  }

  private static void assertStale(TransferStatus s, long oldInc, long newInc) {
    done(s);
    assertEquals(StatusCode.ERR_NOT_FOUND, s.code(), s.message());
    assertTrue(s.message().contains(EngineDesc.incarnationText(oldInc)) && s.message().contains(EngineDesc.incarnationText(newInc)),
        "the message names both incarnations: " + s.message());
  }

  @Test
  void aTargetRestartedInThisJvmReplacesTheOldOneAtOnce() throws Exception {
    int port = freePort();
    String key = "inc-target-" + ProcessHandle.current().pid();
    try (Arena arena = Arena.ofShared(); IoEngine a = IoEngine.create("inc-init-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      TestBackends.create(a);
      MemorySegment src = arena.allocate(BUF, 4096);
      fill(src, BUF, (byte) 3);
      MemoryDesc aMem = a.registerMemory(src);

      IoEngine b1 = IoEngine.create(key, new IoEngineConfig("127.0.0.1", port));
      TestBackends.create(b1);
      MemoryDesc b1Mem = b1.registerMemory(arena.allocate(BUF, 4096));
      EngineDesc b1Desc = b1.engineDesc();
      assertNotEquals(0, b1Desc.incarnation(), "a running engine states its incarnation");
      assertEquals(b1Desc.incarnation(), b1Mem.ownerIncarnation(), "its descriptors carry it");
      a.registerRemoteEngine(b1Desc);
      IoEngineSession oldSession = a.createSession(aMem, b1Mem).orElseThrow();
      assertTrue(done(a.write(aMem, 0, b1Mem, 0, 4096, a.allocateTransferUid())).succeeded());
      b1.close();

      IoEngine b2 = IoEngine.create(key, new IoEngineConfig("127.0.0.1", port));
      try {
        TestBackends.create(b2);
        MemorySegment b2Buf = arena.allocate(BUF, 4096);
        MemoryDesc b2Mem = b2.registerMemory(b2Buf);
        EngineDesc b2Desc = b2.engineDesc();
        assertEquals(b1Desc.port(), b2Desc.port(), "same control address");
        assertNotEquals(b1Desc.incarnation(), b2Desc.incarnation());

        // the new incarnation replaces the old registration without a deregistration, and without waiting for a timeout
        // (once the control plane reaches the new process: Artery re-opens its stream to an address whose system closed)
        awaitControlPlane(a, port);
        long t0 = System.nanoTime();
        a.registerRemoteEngine(b2Desc);
        long replaceMs = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(replaceMs < 5_000, "registered at once, not after a timeout: " + replaceMs + " ms");
        assertFalse(oldSession.alive(), "the old session died with its incarnation");

        assertStale(a.write(aMem, 0, b1Mem, 0, 4096, a.allocateTransferUid()), b1Desc.incarnation(), b2Desc.incarnation());
        assertStale(a.read(aMem, 0, b1Mem, 0, 4096, a.allocateTransferUid()), b1Desc.incarnation(), b2Desc.incarnation());
        assertStale(a.batchWrite(List.of(aMem), List.of(new long[] {0, 8192}), List.of(b1Mem), List.of(new long[] {0, 8192}),
            List.of(new long[] {4096, 4096}), new long[] {a.allocateTransferUid()}).get(0), b1Desc.incarnation(), b2Desc.incarnation());
        IoEngineException stale = assertThrows(IoEngineException.class, () -> a.createSession(aMem, b1Mem));
        assertEquals(StatusCode.ERR_NOT_FOUND, stale.code());
        TransferStatus viaOldSession = done(oldSession.write(0, 0, 4096, a.allocateTransferUid()));
        assertTrue(viaOldSession.failed(), viaOldSession.toString());

        // nothing of the old descriptor landed in the new process; the new descriptor works at once, byte for byte
        for (long i = 0; i < BUF; i += 8) assertEquals(0L, b2Buf.get(ValueLayout.JAVA_LONG, i), "byte " + i + " of the new target changed");
        assertTrue(done(a.write(aMem, 4096, b2Mem, 8192, 65536, a.allocateTransferUid())).succeeded());
        assertEquals(-1, src.asSlice(4096, 65536).mismatch(b2Buf.asSlice(8192, 65536)));
        IoEngineSession s = a.createSession(aMem, b2Mem).orElseThrow();
        assertTrue(done(s.write(0, 0, 4096, s.allocateTransferUid())).succeeded());
        assertEquals(-1, src.asSlice(0, 4096).mismatch(b2Buf.asSlice(0, 4096)));

        // the target-side check: a handshake still meant for the old incarnation reaches the new process, which refuses it
        a.deregisterRemoteEngine(b2Desc);
        IoEngineException refused = assertThrows(IoEngineException.class, () -> a.registerRemoteEngine(b1Desc));
        assertTrue(refused.getMessage().contains(EngineDesc.incarnationText(b2Desc.incarnation()))
            && refused.getMessage().contains(EngineDesc.incarnationText(b1Desc.incarnation())), refused.getMessage());
        a.registerRemoteEngine(b2Desc);
        assertTrue(done(a.write(aMem, 0, b2Mem, 0, 4096, a.allocateTransferUid())).succeeded());
      } finally {
        b2.close();
      }
    }
  }

  /** Waits (bounded) until {@code a}'s control plane gets an answer from the engine at {@code port}. */
  private static void awaitControlPlane(IoEngine a, int port) {
    var remote = org.apache.pekko.actor.typed.ActorRefResolver.get(a.actorSystem())
        .<IoEngineProtocol.Command>resolveActorRef("pekko://mori4j@127.0.0.1:" + port + "/user");
    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    for (int i = 0; i < 60 && System.nanoTime() < end; i++) {
      try {
        org.apache.pekko.actor.typed.javadsl.AskPattern.<IoEngineProtocol.Command, EngineDesc>ask(remote, IoEngineProtocol.GetEngineDesc::new,
            Duration.ofMillis(500), a.actorSystem().scheduler()).toCompletableFuture().get();
        return;
      } catch (Exception notYet) {
        // the stream is being re-opened
      }
    }
    fail("no answer over the control plane from 127.0.0.1:" + port + " within 30 s");
  }

  @Test
  void anInitiatorRestartedUnderItsKeyDoesNotFindItsOldNotifications() throws Exception {
    String key = "inc-restarted-init-" + ProcessHandle.current().pid();
    TcpBackendConfig notify = TcpBackendConfig.defaults().withEnableNotification(true);
    try (Arena arena = Arena.ofShared(); IoEngine b = IoEngine.create("inc-notified-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      TestBackends.create(b, notify);
      MemoryDesc bMem = b.registerMemory(arena.allocate(BUF, 4096));
      MemorySegment src = arena.allocate(BUF, 4096);
      fill(src, BUF, (byte) 9);
      long uid;
      try (IoEngine a1 = IoEngine.create(key, IoEngineConfig.loopback())) {
        TestBackends.create(a1, notify);
        MemoryDesc m = a1.registerMemory(src);
        a1.registerRemoteEngine(b.engineDesc());
        uid = a1.allocateTransferUid();
        assertTrue(done(a1.write(m, 0, bMem, 0, 4096, uid)).succeeded());
      }
      try (IoEngine a2 = IoEngine.create(key, IoEngineConfig.loopback())) {
        TestBackends.create(a2, notify);
        MemoryDesc m = a2.registerMemory(src);
        a2.registerRemoteEngine(b.engineDesc());
        assertTrue(b.popInboundTransferStatus(key, uid).isEmpty(), "the old incarnation's notification is gone once the new one shook hands");
        long uid2 = a2.allocateTransferUid();
        assertEquals(uid, uid2, "uids start again in the new incarnation: the reason the old entries must go");
        assertTrue(done(a2.write(m, 0, bMem, 0, 4096, uid2)).succeeded());
        Optional<TransferStatus> n = pollPop(b, key, uid2);
        assertTrue(n.isPresent() && n.get().succeeded(), "the new incarnation's write is notified");
        assertTrue(b.popInboundTransferStatus(key, uid2).isEmpty(), "exactly once");
      }
    }
  }

  private static Optional<TransferStatus> pollPop(IoEngine b, String key, long uid) throws InterruptedException {
    long end = System.nanoTime() + WAIT.toNanos();
    while (System.nanoTime() < end) {
      var n = b.popInboundTransferStatus(key, uid);
      if (n.isPresent()) return n;
      Thread.sleep(5);
    }
    return Optional.empty();
  }

  @Test
  void aChildTargetRestartedOnTheSameAddressIsANewIncarnation() throws Exception {
    int port = freePort();
    String key = "inc-child-" + ProcessHandle.current().pid();
    Process first = startChild(key, port);
    Process second = null;
    try (Arena arena = Arena.ofShared(); IoEngine a = IoEngine.create("inc-child-init-" + ProcessHandle.current().pid(), IoEngineConfig.loopback())) {
      TestBackends.create(a);
      MemorySegment src = arena.allocate(BUF, 4096);
      fill(src, BUF, (byte) 5);
      MemorySegment back = arena.allocate(BUF, 4096);
      MemoryDesc aMem = a.registerMemory(src);
      MemoryDesc backMem = a.registerMemory(back);
      EngineDesc d1 = a.discover("127.0.0.1", port);
      MemoryDesc r1 = a.lookupMemory(d1, "buf").orElseThrow();
      a.registerRemoteEngine(d1);
      assertTrue(done(a.write(aMem, 0, r1, 0, 4096, a.allocateTransferUid())).succeeded());
      first.destroyForcibly();
      assertTrue(first.waitFor(20, TimeUnit.SECONDS));

      second = startChild(key, port);
      EngineDesc d2 = a.discover("127.0.0.1", port);
      assertEquals(d1.key(), d2.key());
      assertNotEquals(d1.incarnation(), d2.incarnation());
      MemoryDesc r2 = a.lookupMemory(d2, "buf").orElseThrow();
      assertEquals(d2.incarnation(), r2.ownerIncarnation());
      a.registerRemoteEngine(d2); // replaces the dead one at once
      assertStale(a.write(aMem, 0, r1, 0, 4096, a.allocateTransferUid()), d1.incarnation(), d2.incarnation());
      assertStale(a.read(backMem, 0, r1, 0, 4096, a.allocateTransferUid()), d1.incarnation(), d2.incarnation());
      // the new process's whole buffer is still zero: nothing came through the old descriptor
      assertTrue(done(a.read(backMem, 0, r2, 0, BUF, a.allocateTransferUid())).succeeded());
      for (long i = 0; i < BUF; i += 8) assertEquals(0L, back.get(ValueLayout.JAVA_LONG, i), "byte " + i + " of the new target changed");
      assertTrue(done(a.write(aMem, 0, r2, 0, BUF, a.allocateTransferUid())).succeeded());
      assertTrue(done(a.read(backMem, 0, r2, 0, BUF, a.allocateTransferUid())).succeeded());
      assertEquals(-1, src.mismatch(back));
    } finally {
      first.destroyForcibly();
      if (second != null) {
        second.getOutputStream().close();
        if (!second.waitFor(20, TimeUnit.SECONDS)) second.destroyForcibly();
      }
    }
  }

  private static Process startChild(String key, int port) throws Exception {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "-Xmx256m"));
    cmd.addAll(TestBackends.childJvmFlags());
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), TargetProcessMain.class.getName(), key, String.valueOf(BUF),
        String.valueOf(port)));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    List<String> seen = new ArrayList<>();
    String line;
    boolean ready = false;
    while ((line = out.readLine()) != null) {
      if (seen.size() < 200) seen.add(line);
      if (line.startsWith("READY ")) {
        ready = true;
        break;
      }
    }
    assertTrue(ready, "child target never became ready: " + seen);
    Thread drain = new Thread(() -> {
      try {
        while (out.readLine() != null) {
          // keep the pipe empty
        }
      } catch (java.io.IOException ignored) {
        // child gone
      }
    });
    drain.setDaemon(true);
    drain.start();
    return p;
  }
}
