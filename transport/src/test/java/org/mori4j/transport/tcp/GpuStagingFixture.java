package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;

/**
 * What the GPU staging tests ({@link GpuStagingPipelineTest}, {@link GpuStagingFailureTest}) share: the TCP
 * backend's GPU staging pipeline, end to end between two backends over loopback, against an in-memory device whose
 * copies really move bytes on a copy thread after random delays; a host and a "device" region on each side, and
 * after each test every staging buffer must be freed once the backends close.
 */
abstract class GpuStagingFixture {
  static final int CHUNK = 256 * 1024;
  static final int MIN = GpuStager.MIN_PIECE;
  static final long SIZE = 12L << 20;
  final Arena arena = Arena.ofShared();
  HostBackedDeviceStaging stagingA;
  HostBackedDeviceStaging stagingB;
  TcpBackend a;
  TcpBackend b;
  Object peerOfA;
  final LoopDrivers drivers = new LoopDrivers();
  LocalRegion aCpu, aGpu, bCpu, bGpu;

  static TcpSettings settings() {
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

  LocalRegion region(TcpBackend owner, long id, boolean gpu) {
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

  static MemorySegment mem(LocalRegion r) {
    return MemorySegment.ofAddress(r.address()).reinterpret(r.size());
  }

  static void fill(LocalRegion r, long seed) {
    MemorySegment m = mem(r);
    Random rnd = new Random(seed);
    byte[] chunk = new byte[1 << 16];
    for (long off = 0; off < m.byteSize(); off += chunk.length) {
      rnd.nextBytes(chunk);
      int n = (int) Math.min(chunk.length, m.byteSize() - off);
      MemorySegment.copy(chunk, 0, m, java.lang.foreign.ValueLayout.JAVA_BYTE, off, n);
    }
  }

  RecordingOp single(byte kind, LocalRegion local, long lo, LocalRegion remote, long ro, long size) throws InterruptedException {
    RecordingOp op = new RecordingOp();
    op.initSingle(kind, local, lo, peerOfA, remote.id(), remote.accessKey(), remote.address(), ro, size, 42);
    a.submit(op);
    return op.await();
  }

  static void assertSame(LocalRegion x, long xo, LocalRegion y, long yo, long size, String what) {
    long mismatch = mem(x).asSlice(xo, size).mismatch(mem(y).asSlice(yo, size));
    assertEquals(-1, mismatch, what + ": first differing byte at " + mismatch);
  }
}
