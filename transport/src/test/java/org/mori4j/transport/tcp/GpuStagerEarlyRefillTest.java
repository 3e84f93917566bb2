package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.StagingTuning;

/**
 * {@code mori4j.tcp.gpu-staging-early-refill}: while pieces of a transfer wait for a staging buffer, a gathering write
 * is offered at most half the buffers' pieces, so the buffers of the first pieces come free, and the waiting pieces'
 * device copies start, before the rest is written; once every piece has a buffer, a write takes all that are ready.
 * Off, the first write is offered a piece from every buffer and the waiting copies start only after it. Bytes stay
 * in order and exact either way, and two backends with it move GPU memory byte-exact both ways.
 */
class GpuStagerEarlyRefillTest {
  private static final int SIZE = 1 << 20; // 64K + 4 x 224K + 64K: six pieces through four buffers

  @Test
  void theFirstWriteLeavesBuffersToRefillAndTheWaitingCopiesStartBeforeTheRest() {
    for (boolean early : new boolean[] {true, false}) {
      HostBackedDeviceStaging staging = new HostBackedDeviceStaging(0);
      staging.tuning = new StagingTuning(4, 0, false, true, false, early);
      try (Arena arena = Arena.ofShared()) {
        MemorySegment src = arena.allocate(SIZE, 4096);
        for (int i = 0; i < SIZE; i++) src.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 17 + (i >>> 9)));
        MemorySegment sent = arena.allocate(SIZE);
        GpuStager st = new GpuStager(staging, 2 << 20);
        st.start(true, LocalRegion.gpu(1, 1, src.address(), SIZE, 0), 0, SIZE);
        assertEquals(6, st.plan().count(), "the 1 MiB plan");
        ByteBuffer[] iov = new ByteBuffer[1 + GpuStager.SLOTS];
        waitFor(staging, GpuStager.SLOTS, "the first four copies");
        int n = st.fill(iov, 1);
        assertEquals(early ? 3 : 5, n, "early refill " + early + ": pieces offered to the first write (after the header)");
        long first = take(iov, n, sent, 0, Long.MAX_VALUE);
        st.advance(first);
        // the socket is past the first pieces: their buffers take the two waiting pieces, whose copies run now
        waitFor(staging, 6, "the waiting pieces' copies");
        assertEquals(early ? SIZE - (64 << 10) - (224 << 10) : (64 << 10) + (224 << 10), st.remaining(),
            "early refill " + early + ": what is left to write once the waiting copies ran");
        long out = first;
        long deadline = System.nanoTime() + 10_000_000_000L;
        int most = 0;
        while (st.remaining() > 0) {
          assertTrue(System.nanoTime() < deadline, "not sent in 10 s: " + out + " of " + SIZE);
          n = st.fill(iov, 1);
          if (n == 1) {
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
            continue;
          }
          most = Math.max(most, n - 1);
          long took = take(iov, n, sent, out, 150_000); // a socket that takes at most 150,000 bytes per call
          st.advance(took);
          out += took;
        }
        st.finish();
        assertEquals(-1, sent.mismatch(src), "early refill " + early + ": bytes out of order or wrong");
        // every piece has a buffer now: the later writes are offered all the ready ones, as without the setting
        if (early) assertEquals(4, most, "once no piece waits for a buffer, every ready piece is offered");
        st.close();
      } finally {
        staging.shutdown();
      }
      assertEquals(0, staging.openSlots.get(), "staging buffers left open");
    }
  }

  /** Copies what the socket would take of {@code iov[1..n)} (at most {@code room} bytes) to {@code sent} at {@code at}. */
  private static long take(ByteBuffer[] iov, int n, MemorySegment sent, long at, long room) {
    long took = 0;
    for (int k = 1; k < n && room > 0; k++) {
      int len = (int) Math.min(room, iov[k].remaining());
      MemorySegment.copy(MemorySegment.ofBuffer(iov[k]), 0, sent, at + took, len);
      iov[k].position(iov[k].position() + len);
      room -= len;
      took += len;
    }
    return took;
  }

  private static void waitFor(HostBackedDeviceStaging staging, int copies, String what) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (staging.copies.get() < copies) {
      assertTrue(System.nanoTime() < deadline, what + " not done in 10 s");
      Thread.onSpinWait();
    }
  }

  @Test
  void earlyRefillWritesAndReadsAreByteExactBetweenTwoBackends() throws InterruptedException {
    StagedPairCheck.byteExactBothWays(new StagingTuning(4, 0, false, true, false, true), 1, 16L << 20, 50, 13, (1 << 20) + 5,
        (3L << 20) + 4093);
  }
}
