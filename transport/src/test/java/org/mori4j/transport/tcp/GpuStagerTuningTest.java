package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.StagingTuning;

/**
 * The staging tuning the engine hands the TCP backend ({@link StagingTuning}): the middle of a transfer in fewer,
 * larger pieces still covers the payload exactly, the copy spin sees a copy that finishes while it asks (and gives
 * up after its bound), and two backends with both settings move GPU memory byte-exact both ways.
 */
class GpuStagerTuningTest {
  private static final int MIN = GpuStager.MIN_PIECE;

  @Test
  void twoMiddlePiecesHalveTheMiddleAndCoverThePayload() {
    PiecePlan plan = new PiecePlan();
    plan.plan(1 << 20, 2 << 20, 2);
    long[] mib = new long[plan.count()];
    for (int k = 0; k < mib.length; k++) mib[k] = plan.length(k);
    assertArrayEquals(new long[] {MIN, 448 << 10, 448 << 10, MIN}, mib, "1 MiB: 64 KiB ends, the middle in halves");
    assertEquals(512 << 10, GpuStager.pieceSize(1 << 20, 2 << 20, 2));
    assertEquals(GpuStager.pieceSize(1 << 20, 2 << 20), GpuStager.pieceSize(1 << 20, 2 << 20, 4), "four is the old quarter");
    for (int pieces : new int[] {1, 2, 3, 64}) {
      for (long total : new long[] {1, MIN + 1, 1 << 20, (4L << 20) + 7, 64L << 20}) {
        plan.plan(total, 2 << 20, pieces);
        assertEquals(total, plan.start(plan.count()), total + " in " + pieces);
        for (int k = 0; k < plan.count(); k++) assertTrue(plan.length(k) > 0 && plan.length(k) <= 2 << 20, total + " piece " + k);
      }
    }
    assertThrows(IllegalArgumentException.class, () -> new StagingTuning(0, 0));
    assertThrows(IllegalArgumentException.class, () -> new StagingTuning(2, -1));
  }

  @Test
  void theSpinSeesACopyThatFinishesWhileItAsksAndIsBounded() {
    try (Arena arena = Arena.ofConfined()) {
      LocalRegion gpu = LocalRegion.gpu(1, 1, arena.allocate(4096).address(), 4096, 0);
      // a copy seen done at the second ask: the spin asks again at least once, so the first next() already has it
      CountingStaging asks2 = new CountingStaging(2, new StagingTuning(4, 10_000_000L));
      GpuStager st = new GpuStager(asks2, 1 << 16);
      st.start(true, gpu, 0, 4096);
      assertNotNull(st.next(), "the spin should have seen the copy done");
      assertEquals(2, asks2.asks.get());
      st.close();
      // without the spin, the same copy is not done at the first ask: the loop polls it later
      CountingStaging noSpin = new CountingStaging(2, new StagingTuning(4, 0));
      st = new GpuStager(noSpin, 1 << 16);
      st.start(true, gpu, 0, 4096);
      assertNull(st.next());
      assertEquals(1, noSpin.asks.get());
      assertNotNull(st.next(), "asked again by the loop's poll");
      st.close();
      // a copy that never finishes: the spin gives up after its bound
      CountingStaging never = new CountingStaging(Integer.MAX_VALUE, new StagingTuning(4, 1_000_000L));
      st = new GpuStager(never, 1 << 16);
      st.start(true, gpu, 0, 4096);
      long t0 = System.nanoTime();
      assertNull(st.next());
      assertTrue(System.nanoTime() - t0 >= 1_000_000L, "gave up before its bound");
      assertTrue(never.asks.get() > 1);
      never.doneAfter = 0;
      st.close();
    }
  }

  @Test
  void fewerPiecesAndTheSpinStayByteExactBetweenTwoBackends() throws InterruptedException {
    StagedPairCheck.byteExactBothWays(new StagingTuning(2, 50_000), 2, 4L << 20, 100, 7, MIN + 1, (1 << 20) + 3, (3L << 20) + 4095);
  }

  /** A staging whose copies move nothing and are seen done at the {@code doneAfter}-th ask after each mark. */
  private static final class CountingStaging implements DeviceStaging {
    final AtomicInteger asks = new AtomicInteger();
    volatile int doneAfter;
    private final StagingTuning tuning;

    CountingStaging(int doneAfter, StagingTuning tuning) {
      this.doneAfter = doneAfter;
      this.tuning = tuning;
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
    public StagingTuning tuning() {
      return tuning;
    }

    @Override
    public Slot openSlot(long bytes) {
      Arena arena = Arena.ofConfined();
      MemorySegment buffer = arena.allocate(bytes);
      return new Slot() {
        @Override
        public MemorySegment buffer() {
          return buffer;
        }

        @Override
        public void toDevice(int device, long dst, long bufferOffset, long size) {}

        @Override
        public void fromDevice(int device, long src, long bufferOffset, long size) {}

        @Override
        public void mark() {
          asks.set(0);
        }

        @Override
        public boolean done() {
          return asks.incrementAndGet() >= doneAfter;
        }

        @Override
        public void close() {
          if (arena.scope().isAlive()) arena.close();
        }
      };
    }
  }
}
