package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.StagingTuning;

/**
 * {@code mori4j.tcp.gpu-staging-scatter}: the receiving stager offers the current piece and the following pieces whose
 * buffers are free to one scattering read ({@link GpuStager#fill} inbound). Whatever each read delivers (short reads,
 * reads that end inside a piece or cross several), every piece is copied onto the device exactly once, only once the
 * socket has filled it, and no buffer is offered to the socket while a copy still reads it; two backends with it move
 * GPU memory byte-exact both ways. Without it, one piece per read, as before.
 */
class GpuStagerScatterTest {
  @Test
  void eachPieceIsCopiedOnceAndOnlyWhenFull() {
    int size = (1 << 20) + 12_345;
    for (boolean scatter : new boolean[] {true, false}) {
      HostBackedDeviceStaging host = new HostBackedDeviceStaging(30);
      host.tuning = new StagingTuning(4, 0, false, true, scatter);
      try (Arena arena = Arena.ofShared()) {
        MemorySegment src = arena.allocate(size);
        for (int i = 0; i < size; i++) src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 17 + (i >>> 9)));
        MemorySegment dev = arena.allocate(size, 4096);
        CheckingStaging staging = new CheckingStaging(host, src, dev.address(), size);
        GpuStager st = new GpuStager(staging, 2 << 20);
        st.start(false, LocalRegion.gpu(1, 1, dev.address(), size, 0), 0, size);
        ByteBuffer[] iov = new ByteBuffer[GpuStager.SLOTS];
        // what one read takes at most, in turn: reads end inside pieces, exactly at their ends, and cross several
        int[] rooms = {100_000, 7, 300_000, 65_536, 1 << 20};
        int most = 0;
        long deadline = System.nanoTime() + 10_000_000_000L;
        for (int call = 0; st.remaining() > 0; call++) {
          assertTrue(System.nanoTime() < deadline && call < 1_000_000, "not received in 10 s: scatter " + scatter + ", " + staging.delivered + " of " + size + " bytes in");
          int n = st.fill(iov, 0);
          if (n == 0) { // every buffer waits for its copy onto the device: as the loop's GPU poll would, ask again later
            java.util.concurrent.locks.LockSupport.parkNanos(20_000);
            continue;
          }
          most = Math.max(most, n);
          long room = rooms[call % rooms.length];
          long took = 0;
          for (int k = 0; k < n && room > 0; k++) {
            staging.assertNoCopyReads(iov[k]);
            int len = (int) Math.min(room, iov[k].remaining());
            MemorySegment.copy(src, staging.delivered + took, MemorySegment.ofBuffer(iov[k]), 0, len);
            iov[k].position(iov[k].position() + len);
            room -= len;
            took += len;
          }
          staging.delivered += took;
          st.advance(took);
        }
        for (int i = 0; !st.drained(); i++) {
          assertTrue(i < 100_000, "last copies not done");
          java.util.concurrent.locks.LockSupport.parkNanos(20_000);
        }
        assertNull(st.failure());
        st.finish();
        assertEquals(-1, dev.mismatch(src), "scatter " + scatter + ": bytes on the device wrong");
        for (int i = 0; i < size; i++) assertEquals(1, staging.copied[i], "scatter " + scatter + ": payload byte " + i + " copied onto the device that many times");
        if (scatter) assertEquals(GpuStager.SLOTS, most, "with scatter, a read is offered a piece for every free buffer");
        else assertEquals(1, most, "without it, one piece per read");
        st.close();
      } finally {
        host.shutdown();
      }
      assertEquals(0, host.openSlots.get(), "staging buffers left open");
    }
  }

  @Test
  void scatteredReadsAreByteExactBetweenTwoBackends() throws InterruptedException {
    StagedPairCheck.byteExactBothWays(new StagingTuning(4, 0, false, true, true), 1, 16L << 20, 50, 13, (1 << 20) + 3, (3L << 20) + 4095);
  }

  /**
   * The in-memory staging device, watched: each copy onto the device is checked when it is issued (its buffer bytes
   * must already be the payload's, so the piece was full) and counted per payload byte; every slot's copies answer
   * "not done" to the first asks after they were issued, however fast the copy thread is, and the test asks, before it
   * writes into a view, that the stager cannot have offered that buffer while its copies were still running.
   */
  private static final class CheckingStaging implements DeviceStaging {
    private final HostBackedDeviceStaging host;
    private final MemorySegment src;
    private final long devBase;
    private final List<Watched> slots = new ArrayList<>();
    final byte[] copied;
    /** Payload bytes the test's "socket" has delivered so far. */
    long delivered;

    CheckingStaging(HostBackedDeviceStaging host, MemorySegment src, long devBase, int size) {
      this.host = host;
      this.src = src;
      this.devBase = devBase;
      this.copied = new byte[size];
    }

    @Override
    public boolean available() {
      return true;
    }

    @Override
    public String unavailableReason() {
      return "";
    }

    @Override
    public Slot openSlot(long bytes) {
      Watched w = new Watched(host.openSlot(bytes));
      slots.add(w);
      return w;
    }

    @Override
    public StagingTuning tuning() {
      return host.tuning;
    }

    void assertNoCopyReads(ByteBuffer view) {
      long at = MemorySegment.ofBuffer(view).address();
      for (Watched w : slots) {
        MemorySegment b = w.buffer();
        if (at >= b.address() && at < b.address() + b.byteSize()) {
          assertTrue(w.settled(), "a buffer was offered to the socket while its copy onto the device still ran");
          return;
        }
      }
      fail("a view that is no staging buffer's");
    }

    private final class Watched implements Slot {
      private final Slot inner;
      /** done() asks since the last mark: the first {@value #SLOW} answer false, so that every copy is seen running. */
      private int asks = SLOW;
      private static final int SLOW = 2;

      Watched(Slot inner) {
        this.inner = inner;
      }

      @Override
      public MemorySegment buffer() {
        return inner.buffer();
      }

      @Override
      public void toDevice(int device, long dst, long bufferOffset, long size) {
        long off = dst - devBase;
        assertTrue(off >= 0 && off + size <= copied.length, "copy outside the payload: offset " + off + ", " + size + " bytes");
        assertTrue(off + size <= delivered, "copy of payload bytes " + off + ".." + (off + size) + " issued with only " + delivered + " delivered");
        long bad = inner.buffer().asSlice(bufferOffset, size).mismatch(src.asSlice(off, size));
        assertEquals(-1, bad, "copy of payload bytes " + off + ".." + (off + size) + " issued before its piece was full");
        for (long i = off; i < off + size; i++) copied[(int) i]++;
        inner.toDevice(device, dst, bufferOffset, size);
      }

      @Override
      public void fromDevice(int device, long src, long bufferOffset, long size) {
        inner.fromDevice(device, src, bufferOffset, size);
      }

      @Override
      public void mark() {
        inner.mark();
        asks = 0;
      }

      @Override
      public boolean done() {
        if (asks < SLOW) {
          asks++;
          return false;
        }
        return inner.done();
      }

      /** What done() would answer now, without counting as an ask: whether the stager can have seen the copies done. */
      boolean settled() {
        return asks >= SLOW && inner.done();
      }

      @Override
      public void close() {
        inner.close();
      }
    }
  }
}
