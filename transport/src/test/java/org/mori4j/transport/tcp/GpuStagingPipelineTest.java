package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The TCP backend's GPU staging pipeline, end to end between two backends over loopback, against an
 * in-memory device whose copies really move bytes on a copy thread after random delays: every mix of
 * host and "device" ends, reads and writes, sizes that fall on and off the 64 KiB chunk boundaries, striped
 * transfers and batches must arrive byte-exact; a failed device copy fails its transfer with GPU_OP; and
 * closing the backends frees every staging buffer.
 */
class GpuStagingPipelineTest {
  private static final int CHUNK = 64 * 1024;
  private static final long SIZE = 12L << 20;

  private final Arena arena = Arena.ofShared();
  private HostBackedDeviceStaging stagingA;
  private HostBackedDeviceStaging stagingB;
  private TcpBackend a;
  private TcpBackend b;
  private Object peerOfA;
  private final LoopDrivers drivers = new LoopDrivers();
  private LocalRegion aCpu, aGpu, bCpu, bGpu;

  private static TcpSettings settings() {
    return new TcpSettings("127.0.0.1", 0, 2, 1, 4L << 20, 0, Duration.ofSeconds(10), Duration.ofSeconds(5), 1024, false, CHUNK);
  }

  @BeforeEach
  void start() {
    stagingA = new HostBackedDeviceStaging(200);
    stagingB = new HostBackedDeviceStaging(200);
    a = new TcpBackend("A", settings(), stagingA);
    b = new TcpBackend("B", settings(), stagingB);
    a.start(BackendListener.NONE);
    b.start(BackendListener.NONE);
    drivers.drive(a);
    drivers.drive(b);
    peerOfA = a.connect("B", b.acceptHandshake("A", a.handshakeRequest("B")));
    aCpu = region(a, 1, false);
    aGpu = region(a, 2, true);
    bCpu = region(b, 3, false);
    bGpu = region(b, 4, true);
  }

  private LocalRegion region(TcpBackend owner, long id, boolean gpu) {
    MemorySegment s = arena.allocate(SIZE, 4096);
    LocalRegion r = gpu ? LocalRegion.gpu(id, id * 7 + 1, s.address(), SIZE, 0) : new LocalRegion(id, id * 7 + 1, s, false, -1);
    owner.registerMemory(r);
    return r;
  }

  @AfterEach
  void close() throws InterruptedException {
    a.close();
    b.close();
    drivers.close();
    assertEquals(0, stagingA.openSlots.get(), "initiator staging buffers left open");
    assertEquals(0, stagingB.openSlots.get(), "target staging buffers left open");
    stagingA.shutdown();
    stagingB.shutdown();
    arena.close();
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
      int n = (int) Math.min(chunk.length, m.byteSize() - off);
      MemorySegment.copy(chunk, 0, m, java.lang.foreign.ValueLayout.JAVA_BYTE, off, n);
    }
  }

  private RecordingOp single(byte kind, LocalRegion local, long lo, LocalRegion remote, long ro, long size) throws InterruptedException {
    RecordingOp op = new RecordingOp();
    op.initSingle(kind, local, lo, peerOfA, remote.id(), remote.accessKey(), remote.address(), ro, size, 42);
    a.submit(op);
    return op.await();
  }

  private static void assertSame(LocalRegion x, long xo, LocalRegion y, long yo, long size, String what) {
    long mismatch = mem(x).asSlice(xo, size).mismatch(mem(y).asSlice(yo, size));
    assertEquals(-1, mismatch, what + ": first differing byte at " + mismatch);
  }

  @Test
  void everyMixOfHostAndDeviceEndsIsByteExactBothWays() throws InterruptedException {
    long[] sizes = {1, 4096, CHUNK - 1, CHUNK, CHUNK + 1, (1 << 20) + 3, (9L << 20) + 5};
    LocalRegion[][] pairs = {{aCpu, bGpu}, {aGpu, bCpu}, {aGpu, bGpu}};
    int seed = 1;
    for (LocalRegion[] p : pairs) {
      for (long size : sizes) {
        long lo = 3, ro = 5;
        String what = (p[0].gpu() ? "gpu" : "cpu") + "->" + (p[1].gpu() ? "gpu" : "cpu") + " " + size + " B";
        fill(p[0], seed++);
        RecordingOp w = single(TransferOp.WRITE, p[0], lo, p[1], ro, size);
        assertNull(w.error, what + " write: " + w.message);
        assertSame(p[0], lo, p[1], ro, size, what + " write");
        fill(p[1], seed++);
        RecordingOp r = single(TransferOp.READ, p[0], lo, p[1], ro, size);
        assertNull(r.error, what + " read: " + r.message);
        assertSame(p[0], lo, p[1], ro, size, what + " read");
      }
    }
    assertTrue(stagingA.copies.get() > 0 && stagingB.copies.get() > 0, "both sides staged through their device");
  }

  @Test
  void batchesAcrossChunkBoundariesAreByteExact() throws InterruptedException {
    long[] lo = {0, 100_000, 300_001, 1_000_003};
    long[] ro = {7, 200_000, 500_000, 2_000_000};
    long[] sz = {70_000, 150_001, 3, 2_500_000};
    for (LocalRegion[] p : new LocalRegion[][] {{aGpu, bGpu}, {aCpu, bGpu}, {aGpu, bCpu}}) {
      for (byte kind : new byte[] {TransferOp.WRITE, TransferOp.READ}) {
        fill(aGpu, kind * 31 + 1);
        fill(aCpu, kind * 31 + 2);
        fill(bGpu, kind * 31 + 3);
        fill(bCpu, kind * 31 + 4);
        RecordingOp op = new RecordingOp();
        op.initBatch(kind, p[0], lo.clone(), peerOfA, p[1].id(), p[1].accessKey(), p[1].address(), ro.clone(), sz.clone(), 7);
        a.submit(op);
        op.await();
        assertNull(op.error, op.message);
        for (int i = 0; i < lo.length; i++) assertSame(p[0], lo[i], p[1], ro[i], sz[i], "batch block " + i + " kind " + kind);
      }
    }
  }

  @Test
  void pipelinedTransfersOnOneConnectionKeepTheirOrderAndBytes() throws InterruptedException {
    fill(aGpu, 99);
    List<RecordingOp> ops = new ArrayList<>();
    long size = 300_000;
    for (int i = 0; i < 20; i++) {
      RecordingOp op = new RecordingOp();
      byte kind = i % 2 == 0 ? TransferOp.WRITE : TransferOp.READ;
      // writes go from aGpu to bGpu at even slots; reads bring bCpu's odd slots into aGpu's odd slots
      LocalRegion remote = kind == TransferOp.WRITE ? bGpu : bCpu;
      op.initSingle(kind, aGpu, i * size, peerOfA, remote.id(), remote.accessKey(), remote.address(), i * size, size, i);
      ops.add(op);
    }
    fill(bCpu, 5);
    for (RecordingOp op : ops) a.submit(op);
    for (RecordingOp op : ops) assertNull(op.await().error, op.message);
    for (int i = 0; i < 20; i++) {
      if (i % 2 == 0) assertSame(aGpu, i * size, bGpu, i * size, size, "write " + i);
      else assertSame(aGpu, i * size, bCpu, i * size, size, "read " + i);
    }
  }

  @Test
  void aFailedDeviceCopyOnTheTargetFailsThatWriteOnly() throws InterruptedException {
    stagingB.poisonAddress = bGpu.address() + 200_000;
    RecordingOp bad = single(TransferOp.WRITE, aCpu, 0, bGpu, 0, 1 << 20);
    assertEquals(TransportError.GPU_OP, bad.error, bad.message);
    assertTrue(bad.message.contains("GPU copy to device 0 failed"), bad.message);
    stagingB.poisonAddress = -1;
    fill(aCpu, 3);
    RecordingOp ok = single(TransferOp.WRITE, aCpu, 0, bGpu, 0, 1 << 20);
    assertNull(ok.error, ok.message);
    assertSame(aCpu, 0, bGpu, 0, 1 << 20, "write after a failed one");
  }

  @Test
  void aFailedDeviceCopyOnTheInitiatorFailsThatReadOnly() throws InterruptedException {
    stagingA.poisonAddress = aGpu.address() + 100;
    RecordingOp bad = single(TransferOp.READ, aGpu, 0, bCpu, 0, 1 << 20);
    assertEquals(TransportError.GPU_OP, bad.error, bad.message);
    stagingA.poisonAddress = -1;
    fill(bCpu, 4);
    RecordingOp ok = single(TransferOp.READ, aGpu, 0, bCpu, 0, 1 << 20);
    assertNull(ok.error, ok.message);
    assertSame(aGpu, 0, bCpu, 0, 1 << 20, "read after a failed one");
  }

  @Test
  void targetChecksStillGuardGpuRegions() throws InterruptedException {
    RecordingOp op = new RecordingOp();
    op.initSingle(TransferOp.WRITE, aCpu, 0, peerOfA, bGpu.id(), bGpu.accessKey() + 1, bGpu.address(), 0, 4096, 1);
    a.submit(op);
    assertEquals(TransportError.NOT_FOUND, op.await().error);
    RecordingOp out = single(TransferOp.READ, aGpu, 0, bGpu, SIZE - 10, 11);
    assertEquals(TransportError.INVALID_ARGS, out.error, out.message);
    bGpu.kill();
    RecordingOp dead = single(TransferOp.WRITE, aGpu, 0, bGpu, 0, 100);
    assertEquals(TransportError.NOT_FOUND, dead.error, dead.message);
  }

  @Test
  void gpuRegionsNeedStaging() {
    TcpBackend plain = new TcpBackend("plain", settings());
    LocalRegion r = LocalRegion.gpu(9, 9, 0x1000, 4096, 0);
    assertFalse(plain.canServe(r, false));
    assertTrue(plain.canServe(aCpu, true), "a remote GPU end is staged by the target");
    var e = assertThrows(org.mori4j.transport.TransportException.class, () -> plain.registerMemory(r));
    assertTrue(e.getMessage().contains("cannot move GPU memory"), e.getMessage());
    assertTrue(a.canServe(aGpu, true));
    plain.close();
  }
}
