package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Random;
import org.mori4j.transport.BackendListener;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.StagingTuning;
import org.mori4j.transport.TransferOp;

/**
 * The GPU-staging tests' shared end-to-end check: two TCP backends on loopback, each with the in-memory staging device
 * under one {@link StagingTuning}, move random bytes between "GPU" regions both ways at each size (odd offsets at both
 * ends) and must land them exact, and neither may leave a staging buffer open. Each tuning test names what it varies;
 * the harness that proves it does not lose or reorder bytes is this one.
 */
final class StagedPairCheck {
  private StagedPairCheck() {}

  /**
   * @param connections     TCP connections per peer
   * @param stripeThreshold transfers at least this large are striped over the connections
   * @param copyDelayMicros the in-memory device's most delay per copy
   * @param seed            the random payloads' seed
   * @param sizes           transfer sizes, each run as a write and then a read
   */
  static void byteExactBothWays(StagingTuning tuning, int connections, long stripeThreshold, int copyDelayMicros, long seed,
                                long... sizes) throws InterruptedException {
    int chunk = 256 << 10;
    long size = 4L << 20;
    HostBackedDeviceStaging sa = new HostBackedDeviceStaging(copyDelayMicros);
    HostBackedDeviceStaging sb = new HostBackedDeviceStaging(copyDelayMicros);
    sa.tuning = sb.tuning = tuning;
    TcpSettings settings = new TcpSettings("127.0.0.1", 0, connections, 1, stripeThreshold, 0, Duration.ofSeconds(10),
        Duration.ofSeconds(5), 1024, false, chunk);
    TcpBackend a = new TcpBackend("A", settings, sa);
    TcpBackend b = new TcpBackend("B", settings, sb);
    LoopDrivers drivers = new LoopDrivers();
    try (Arena arena = Arena.ofShared()) {
      a.start(BackendListener.NONE);
      b.start(BackendListener.NONE);
      drivers.drive(a);
      drivers.drive(b);
      Object peer = a.connect("B", b.acceptHandshake("A", a.handshakeRequest("B")));
      MemorySegment ma = arena.allocate(size, 4096);
      MemorySegment mb = arena.allocate(size, 4096);
      LocalRegion ga = LocalRegion.gpu(2, 15, ma.address(), size, 0);
      LocalRegion gb = LocalRegion.gpu(4, 29, mb.address(), size, 0);
      a.registerMemory(ga);
      b.registerMemory(gb);
      Random rnd = new Random(seed);
      byte[] bytes = new byte[(int) size];
      for (long n : sizes) {
        for (byte kind : new byte[] {TransferOp.WRITE, TransferOp.READ}) {
          rnd.nextBytes(bytes);
          MemorySegment.copy(bytes, 0, kind == TransferOp.WRITE ? ma : mb, ValueLayout.JAVA_BYTE, 0, bytes.length);
          RecordingOp op = new RecordingOp();
          op.initSingle(kind, ga, 3, peer, gb.id(), gb.accessKey(), gb.address(), 5, n, 42);
          a.submit(op);
          assertNull(op.await().error, op.message);
          long at = ma.asSlice(3, n).mismatch(mb.asSlice(5, n));
          assertEquals(-1, at, (kind == TransferOp.WRITE ? "write " : "read ") + n + " B: first differing byte at " + at);
        }
      }
    } finally {
      a.close();
      b.close();
      drivers.close();
      sa.shutdown();
      sb.shutdown();
    }
    assertEquals(0, sa.openSlots.get() + sb.openSlots.get(), "staging buffers left open");
  }
}
