package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.StagingTuning;

/**
 * {@code mori4j.tcp.gpu-staging-gather}: the sending stager offers the current piece and the following pieces whose
 * copies are done in one gathering call ({@link GpuStager#fill}); whatever a socket call takes of them (short calls
 * included), the bytes leave in order and exact, and two backends with it move GPU memory byte-exact both ways.
 * Without it, one piece per call, as before.
 */
class GpuStagerGatherTest {
  @Test
  void readyPiecesGoOutInOneCallAndShortCallsKeepTheBytesInOrder() {
    int size = (1 << 20) + 12_345;
    for (boolean gather : new boolean[] {true, false}) {
      HostBackedDeviceStaging staging = new HostBackedDeviceStaging(0);
      staging.tuning = new StagingTuning(4, 0, false, gather);
      try (Arena arena = Arena.ofShared()) {
        MemorySegment src = arena.allocate(size, 4096);
        for (int i = 0; i < size; i++) src.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + (i >>> 11)));
        MemorySegment sent = arena.allocate(size);
        GpuStager st = new GpuStager(staging, 2 << 20);
        st.start(true, LocalRegion.gpu(1, 1, src.address(), size, 0), 0, size);
        ByteBuffer[] iov = new ByteBuffer[1 + GpuStager.SLOTS];
        // the first four pieces' copies were issued at start (one per buffer): let them finish, so the first call sees them all
        long copied = deadlineOf(10);
        while (staging.copies.get() < GpuStager.SLOTS) assertTrue(System.nanoTime() < copied, "copies not done in 10 s");
        int most = 0;
        long out = 0;
        long deadline = deadlineOf(10);
        for (int call = 0; st.remaining() > 0; call++) {
          assertTrue(System.nanoTime() < deadline && call < 1_000_000, "not sent in 10 s: gather " + gather + ", " + out + " of " + size + " bytes out after " + call + " calls");
          int n = st.fill(iov, 1);
          if (n == 1) { // the current piece's copy still runs: as the loop's GPU poll would, ask again a little later
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
            continue;
          }
          most = Math.max(most, n - 1);
          // a socket that takes 100,000 bytes at most per call: calls end inside pieces and between them
          long room = 100_000;
          long took = 0;
          for (int k = 1; k < n && room > 0; k++) {
            int len = (int) Math.min(room, iov[k].remaining());
            MemorySegment.copy(MemorySegment.ofBuffer(iov[k]), 0, sent, out + took, len);
            iov[k].position(iov[k].position() + len);
            room -= len;
            took += len;
          }
          st.advance(took);
          out += took;
        }
        st.finish();
        assertEquals(-1, sent.mismatch(src), "gather " + gather + ": bytes out of order or wrong");
        if (gather) assertEquals(GpuStager.SLOTS, most, "with gather, one call is offered a piece from every buffer");
        else assertEquals(1, most, "without it, one piece per call");
        st.close();
      } finally {
        staging.shutdown();
      }
      assertEquals(0, staging.openSlots.get(), "staging buffers left open");
    }
  }

  private static long deadlineOf(int seconds) {
    return System.nanoTime() + seconds * 1_000_000_000L;
  }

  @Test
  void gatheredWritesAndReadsAreByteExactBetweenTwoBackends() throws InterruptedException {
    StagedPairCheck.byteExactBothWays(new StagingTuning(4, 0, false, true), 1, 16L << 20, 50, 11, (1 << 20) + 3, (3L << 20) + 4095);
  }
}
