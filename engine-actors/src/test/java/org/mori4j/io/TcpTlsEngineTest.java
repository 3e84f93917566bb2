package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;
import static org.mori4j.io.Bytes.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.transport.tcp.TlsTestStores;

/**
 * Two engines whose TCP data path runs TLS ({@link TcpTlsConfig#on}) move bytes exactly through every call of
 * the public API (single reads and writes, a striped write, batches, a session, target notifications), and
 * an engine with TLS and one without refuse each other with a message that says so, instead of hanging.
 * The refusals of untrusted and misnamed certificates are {@code TlsDataPathTest}'s (transport).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TcpTlsEngineTest {
  private static final long MiB = 1L << 20;
  @TempDir
  static Path dir;
  private TlsTestStores stores;
  private IoEngine initiator;
  private IoEngine target;
  private final Arena arena = Arena.ofShared();
  private MemorySegment localBuf;
  private MemorySegment remoteBuf;
  private MemoryDesc local;
  private MemoryDesc remote;

  private TcpBackendConfig tls() {
    return TcpBackendConfig.defaults().withEnableNotification(true)
        .withTls(TcpTlsConfig.on(stores.node, TlsTestStores.PASSWORD, stores.trust, TlsTestStores.PASSWORD));
  }

  @BeforeAll
  void start() throws Exception {
    stores = new TlsTestStores(dir);
    initiator = IoEngine.create("tls-initiator", IoEngineConfig.loopback());
    target = IoEngine.create("tls-target", IoEngineConfig.loopback());
    initiator.createBackend(BackendType.TCP, tls());
    target.createBackend(BackendType.TCP, tls());
    initiator.registerRemoteEngine(target.engineDesc());
    target.registerRemoteEngine(initiator.engineDesc());
    localBuf = arena.allocate(20 * MiB, 4096);
    remoteBuf = arena.allocate(20 * MiB, 4096);
    local = initiator.registerMemory(localBuf);
    remote = target.registerMemory(remoteBuf);
  }

  @AfterAll
  void stop() {
    if (initiator != null) initiator.close();
    if (target != null) target.close();
    arena.close();
  }

  private void assertNotifiedOnce(long uid) {
    Optional<TransferStatus> first = target.popInboundTransferStatus(initiator.key(), uid);
    assertTrue(first.isPresent() && first.get().succeeded(), "uid " + uid + " recorded on the target: " + first);
    assertTrue(target.popInboundTransferStatus(initiator.key(), uid).isEmpty(), "uid " + uid + " popped twice");
  }

  @Test
  void singleTransfersAreByteExactAndNotified() {
    long[][] cases = {{0, 0, 1}, {3, 5, 4096}, {100, 7, 16 * 1024 + 1}, {1, 2, 3 * MiB + 7}, {1, 2, 17 * MiB}};
    int seed = 1;
    for (long[] c : cases) {
      randomize(localBuf, seed++);
      long uid = initiator.allocateTransferUid();
      assertSucceeds(initiator.write(local, c[0], remote, c[1], c[2], uid), "write " + c[2]);
      assertRangeEquals(localBuf, c[0], remoteBuf, c[1], c[2], "write " + c[2]);
      assertNotifiedOnce(uid);
      randomize(remoteBuf, seed++);
      assertSucceeds(initiator.read(local, c[0], remote, c[1], c[2], initiator.allocateTransferUid()), "read " + c[2]);
      assertRangeEquals(localBuf, c[0], remoteBuf, c[1], c[2], "read " + c[2]);
    }
  }

  @Test
  void batchesAndSessionsAreByteExact() {
    randomize(localBuf, 11);
    long[] lo = {0, 5000, 90_000, MiB}, ro = {100, 20_000, 400_000, 2 * MiB}, s = {10, 300, 70_000, MiB + 1};
    List<TransferStatus> w = initiator.batchWrite(List.of(local), List.of(lo), List.of(remote), List.of(ro), List.of(s),
        new long[] {initiator.allocateTransferUid()});
    assertEquals(StatusCode.SUCCESS, initiator.waitAll(w, Duration.ofSeconds(30)));
    for (int i = 0; i < lo.length; i++) assertRangeEquals(localBuf, lo[i], remoteBuf, ro[i], s[i], "batch write block " + i);
    randomize(remoteBuf, 12);
    List<TransferStatus> r = initiator.batchRead(List.of(local), List.of(lo), List.of(remote), List.of(ro), List.of(s),
        new long[] {initiator.allocateTransferUid()});
    assertEquals(StatusCode.SUCCESS, initiator.waitAll(r, Duration.ofSeconds(30)));
    for (int i = 0; i < lo.length; i++) assertRangeEquals(localBuf, lo[i], remoteBuf, ro[i], s[i], "batch read block " + i);

    IoEngineSession session = initiator.createSession(local, remote).orElseThrow(() -> new AssertionError("no session over TLS"));
    assertEquals(BackendType.TCP, session.backendType());
    randomize(localBuf, 13);
    long uid = session.allocateTransferUid();
    assertSucceeds(session.write(8, 16, 2 * MiB, uid), "session write");
    assertRangeEquals(localBuf, 8, remoteBuf, 16, 2 * MiB, "session write");
    assertNotifiedOnce(uid);
    randomize(remoteBuf, 14);
    assertSucceeds(session.batchRead(new long[] {0, 4 * MiB}, new long[] {MiB, 6 * MiB}, new long[] {4096, 100_001},
        session.allocateTransferUid()), "session batch read");
    assertRangeEquals(localBuf, 0, remoteBuf, MiB, 4096, "session batch read 0");
    assertRangeEquals(localBuf, 4 * MiB, remoteBuf, 6 * MiB, 100_001, "session batch read 1");
  }

  @Test
  void anEngineWithoutTlsIsRefusedWithAMessageNotAHang() {
    IoEngine plain = IoEngine.create("plain-initiator", IoEngineConfig.loopback());
    try {
      plain.createBackend(BackendType.TCP, TcpBackendConfig.defaults().withTls(TcpTlsConfig.off()));
      // the backend handshake runs when the engine is registered: the refusal comes there, naming both sides
      IoEngineException e = assertThrows(IoEngineException.class, () -> plain.registerRemoteEngine(target.engineDesc()));
      assertTrue(e.getMessage().contains("'tls-target' runs its TCP data path with TLS") && e.getMessage().contains("mori4j.tcp.tls"),
          e.getMessage());
    } finally {
      plain.close();
    }
  }
}
