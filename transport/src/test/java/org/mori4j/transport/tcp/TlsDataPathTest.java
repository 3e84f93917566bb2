package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.mori4j.transport.TransportException;

/**
 * The TCP data path over TLS between two real backends on loopback: every transfer kind arrives byte-exact
 * (single reads and writes around TLS record and staging-chunk sizes, stripes, batches, bursts of small
 * inline writes, GPU staging through the in-memory device), and the peers TLS must keep out are refused with
 * a valid token in hand, so only TLS can have refused them: an initiator or a target whose certificate
 * nobody trusts, a target whose certificate names another host, a plain client speaking the wire protocol to
 * a TLS target, and engines that disagree on TLS.
 */
class TlsDataPathTest {
  private static final int CHUNK = 64 * 1024;
  private static final long SIZE = 12L << 20;

  @TempDir
  static Path dir;
  private static TlsTestStores stores;

  private final Arena arena = Arena.ofShared();
  private final List<TcpBackend> backends = new ArrayList<>();
  private final List<HostBackedDeviceStaging> stagings = new ArrayList<>();
  private final LoopDrivers drivers = new LoopDrivers();

  @BeforeAll
  static void keys() throws IOException {
    stores = new TlsTestStores(dir);
  }

  private static TcpSettings settings(TcpTls tls) {
    return new TcpSettings("127.0.0.1", 0, 2, 1, 4L << 20, 0, Duration.ofSeconds(10), Duration.ofSeconds(5), 1024, true, CHUNK, tls);
  }

  private TcpBackend backend(String key, TcpTls tls) {
    HostBackedDeviceStaging staging = new HostBackedDeviceStaging(100);
    stagings.add(staging);
    TcpBackend b = new TcpBackend(key, settings(tls), staging);
    b.start(BackendListener.NONE);
    backends.add(b);
    drivers.drive(b);
    return b;
  }

  private static Object connect(TcpBackend from, String fromKey, TcpBackend to, String toKey) {
    return from.connect(toKey, to.acceptHandshake(fromKey, from.handshakeRequest(toKey)));
  }

  @AfterEach
  void close() throws InterruptedException {
    for (TcpBackend b : backends) b.close();
    drivers.close();
    for (HostBackedDeviceStaging s : stagings) {
      assertEquals(0, s.openSlots.get(), "staging buffers left open");
      s.shutdown();
    }
    arena.close();
  }

  private LocalRegion region(TcpBackend owner, long id, boolean gpu) {
    MemorySegment s = arena.allocate(SIZE, 4096);
    LocalRegion r = gpu ? LocalRegion.gpu(id, id * 7 + 1, s.address(), SIZE, 0) : new LocalRegion(id, id * 7 + 1, s, false, -1);
    owner.registerMemory(r);
    return r;
  }

  private static MemorySegment mem(LocalRegion r) {
    return MemorySegment.ofAddress(r.address()).reinterpret(r.size());
  }

  private static void fill(LocalRegion r, long seed) {
    MemorySegment m = mem(r);
    Random rnd = new Random(seed);
    byte[] chunk = new byte[1 << 16];
    for (long off = 0; off < m.byteSize(); off += chunk.length) {
      rnd.nextBytes(chunk);
      MemorySegment.copy(chunk, 0, m, ValueLayout.JAVA_BYTE, off, (int) Math.min(chunk.length, m.byteSize() - off));
    }
  }

  private static void assertSame(LocalRegion x, long xo, LocalRegion y, long yo, long size, String what) {
    long mismatch = mem(x).asSlice(xo, size).mismatch(mem(y).asSlice(yo, size));
    assertEquals(-1, mismatch, what + ": first differing byte at " + mismatch);
  }

  private static RecordingOp submit(TcpBackend a, Object peer, byte kind, LocalRegion local, long lo, LocalRegion remote, long ro, long size) {
    RecordingOp op = new RecordingOp();
    op.initSingle(kind, local, lo, peer, remote.id(), remote.accessKey(), remote.address(), ro, size, 42);
    op.notifyTarget(true);
    a.submit(op);
    return op;
  }

  @Test
  void everyTransferKindIsByteExactOverTls() throws InterruptedException {
    TcpBackend a = backend("A", stores.tls(stores.node));
    TcpBackend b = backend("B", stores.tls(stores.node));
    Object peer = connect(a, "A", b, "B");
    LocalRegion aCpu = region(a, 1, false), aGpu = region(a, 2, true), bCpu = region(b, 3, false), bGpu = region(b, 4, true);
    int seed = 1;
    // around a TLS record (16 KiB), the inline limit, a staging chunk, and a striped transfer (>= 4 MiB over 2 lanes)
    long[] sizes = {1, 100, 16383, 16385, CHUNK + 1, (1 << 20) + 3, (9L << 20) + 5};
    LocalRegion[][] pairs = {{aCpu, bCpu}, {aCpu, bGpu}, {aGpu, bCpu}, {aGpu, bGpu}};
    for (LocalRegion[] p : pairs) {
      for (long size : sizes) {
        String what = (p[0].gpu() ? "gpu" : "cpu") + "->" + (p[1].gpu() ? "gpu" : "cpu") + " " + size + " B";
        fill(p[0], seed++);
        RecordingOp w = submit(a, peer, TransferOp.WRITE, p[0], 3, p[1], 5, size).await();
        assertNull(w.error, what + " write: " + w.message);
        assertSame(p[0], 3, p[1], 5, size, what + " write");
        fill(p[1], seed++);
        RecordingOp r = submit(a, peer, TransferOp.READ, p[0], 3, p[1], 5, size).await();
        assertNull(r.error, what + " read: " + r.message);
        assertSame(p[0], 3, p[1], 5, size, what + " read");
      }
    }
    assertTrue(stagings.get(0).copies.get() > 0 && stagings.get(1).copies.get() > 0, "both sides staged through their device");

    // batches: one request, many blocks
    long[] lo = {0, 100_000, 300_001, 1_000_003};
    long[] ro = {7, 200_000, 500_000, 2_000_000};
    long[] sz = {70_000, 150_001, 3, 2_500_000};
    for (LocalRegion[] p : pairs) {
      for (byte kind : new byte[] {TransferOp.WRITE, TransferOp.READ}) {
        fill(p[0], seed++);
        fill(p[1], seed++);
        RecordingOp op = new RecordingOp();
        op.initBatch(kind, p[0], lo.clone(), peer, p[1].id(), p[1].accessKey(), p[1].address(), ro.clone(), sz.clone(), 7);
        a.submit(op);
        assertNull(op.await().error, op.message);
        for (int i = 0; i < lo.length; i++) assertSame(p[0], lo[i], p[1], ro[i], sz[i], "batch block " + i + " kind " + kind);
      }
    }

    // a burst of small writes (inline, packed several to a write) and reads, all in flight at once
    fill(aCpu, seed++);
    fill(bCpu, seed++);
    List<RecordingOp> burst = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      boolean write = i % 2 == 0;
      burst.add(submit(a, peer, write ? TransferOp.WRITE : TransferOp.READ, aCpu, i * 4096L, bCpu, (1L << 20) + i * 4096L, 4096));
    }
    for (RecordingOp op : burst) assertNull(op.await().error, op.message);
    for (int i = 0; i < 200; i++) assertSame(aCpu, i * 4096L, bCpu, (1L << 20) + i * 4096L, 4096, "burst op " + i);

    // the target's checks still apply inside TLS, and a refusal's message comes back through it
    RecordingOp forged = new RecordingOp();
    forged.initSingle(TransferOp.WRITE, aCpu, 0, peer, bCpu.id(), bCpu.accessKey() + 1, bCpu.address(), 0, 4096, 1);
    a.submit(forged);
    assertEquals(TransportError.NOT_FOUND, forged.await().error, forged.message);
    assertTrue(forged.message.contains("does not match its registration"), forged.message);
  }

  @Test
  void anInitiatorWhoseCertificateNobodyTrustsIsRefused() {
    TcpBackend b = backend("B", stores.tls(stores.node));
    TcpBackend stranger = backend("S", stores.tls(stores.stranger));
    TransportException e = assertThrows(TransportException.class, () -> connect(stranger, "S", b, "B"));
    assertEquals(TransportError.TRANSPORT, e.error());
    // TLS 1.3: the initiator finishes its side, then hears the target's alert when it waits for the hello's answer
    assertTrue(e.getMessage().contains("cannot open TCP data connection") && e.getMessage().toLowerCase().contains("alert"), e.getMessage());
    // the target still serves a trusted initiator
    TcpBackend a = backend("A", stores.tls(stores.node));
    assertNotNull(connect(a, "A", b, "B"));
  }

  @Test
  void aTargetWhoseCertificateNobodyTrustsIsRefused() {
    TcpBackend a = backend("A", stores.tls(stores.node));
    TcpBackend stranger = backend("S", stores.tls(stores.stranger));
    TransportException e = assertThrows(TransportException.class, () -> connect(a, "A", stranger, "S"));
    assertTrue(e.getMessage().contains("PKIX") || e.getMessage().contains("certification path"), e.getMessage());
  }

  @Test
  void aTargetWhoseCertificateNamesAnotherHostIsRefused() {
    TcpBackend a = backend("A", stores.tls(stores.node));
    // trusted, but issued for elsewhere.invalid while the target advertises 127.0.0.1
    TcpBackend elsewhere = backend("E", stores.tls(stores.elsewhere));
    TransportException e = assertThrows(TransportException.class, () -> connect(a, "A", elsewhere, "E"));
    assertTrue(e.getMessage().contains("127.0.0.1") && e.getMessage().toLowerCase().contains("subject alternative"), e.getMessage());
    // the same pair without hostname verification connects: only the host check refused it
    TcpBackend lax = backend("L", TcpTls.load(stores.node, TlsTestStores.PASSWORD, TlsTestStores.PASSWORD, stores.trust,
        TlsTestStores.PASSWORD, false));
    assertNotNull(connect(lax, "L", elsewhere, "E"));
  }

  @Test
  void aPlainClientWithAValidTokenGetsNoAnswerFromATlsTarget() throws IOException {
    TcpBackend b = backend("B", stores.tls(stores.node));
    byte[] reply = b.acceptHandshake("P", "P".getBytes(StandardCharsets.UTF_8));
    long token = ByteBuffer.wrap(reply).getLong(reply.length - 8);
    try (Socket s = new Socket(b.boundAddress().getAddress(), b.boundAddress().getPort())) {
      s.setSoTimeout(5000);
      byte[] key = "P".getBytes(StandardCharsets.UTF_8);
      ByteBuffer hello = ByteBuffer.allocate(WireFormat.REQ_HEADER + WireFormat.ENTRY + key.length);
      WireFormat.putRequest(hello, WireFormat.T_HELLO, 0, 1, 1, 0, token, 0, 0, 0, key.length);
      hello.putLong(0).putLong(key.length).put(key);
      s.getOutputStream().write(hello.array());
      InputStream in = s.getInputStream();
      byte[] got = in.readNBytes(WireFormat.RESP_HEADER);
      // the target closes (perhaps after a TLS alert): never a hello answer
      assertTrue(got.length < WireFormat.RESP_HEADER || ByteBuffer.wrap(got).getInt(0) != WireFormat.RESP_MAGIC,
          "a plain client got a response frame from a TLS target");
    }
  }

  @Test
  void enginesThatDisagreeOnTlsRefuseAtTheHandshake() {
    TcpBackend tls = backend("T", stores.tls(stores.node));
    TcpBackend plain = backend("P", null);
    TransportException toTls = assertThrows(TransportException.class, () -> connect(plain, "P", tls, "T"));
    assertEquals(TransportError.INVALID_ARGS, toTls.error());
    assertTrue(toTls.getMessage().contains("'T' runs its TCP data path with TLS"), toTls.getMessage());
    TransportException toPlain = assertThrows(TransportException.class, () -> connect(tls, "T", plain, "P"));
    assertTrue(toPlain.getMessage().contains("'P' runs its TCP data path without TLS"), toPlain.getMessage());
  }
}
