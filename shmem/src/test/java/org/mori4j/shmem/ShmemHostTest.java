package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuStream;

/**
 * The host API with several PEs in one JVM on the in-memory GPU (two devices; PE i on device i % 2): ranks,
 * symmetric offsets, collective calls checked across PEs, address translation, registration, both barriers,
 * module init, and that finalize gives everything back.
 */
class ShmemHostTest {
  private static final long HEAP = 8 << 20;
  private ShmemTestDevice device;

  @BeforeEach
  void device() {
    device = new ShmemTestDevice(2);
  }

  @AfterEach
  void shutdown() {
    device.shutdown();
  }

  @Test
  void initRanksThePesAndMapsEveryHeap() {
    try (PeGroup g = PeGroup.start(3, device.config(HEAP))) {
      for (int r = 0; r < 3; r++) {
        Shmem pe = g.pe(r);
        assertEquals(r, pe.myPe());
        assertEquals(3, pe.nPes());
        assertEquals(1, pe.numQpPerPe());
        assertEquals(r % 2, pe.device());
        assertEquals(HEAP, pe.heapSize());
        GpuStates s = pe.gpuStates();
        assertEquals(r, s.rank());
        assertEquals(pe.heapBase(), s.heapBase());
        // same process: every peer's heap at that peer's own address
        for (int p = 0; p < 3; p++) assertEquals(g.pe(p).heapBase(), s.peerHeapBase()[p]);
      }
    }
    assertEquals(0, device.gpu.liveAllocations(), "every heap freed");
  }

  @Test
  void mallocGivesTheSameOffsetOnEveryPe() {
    try (PeGroup g = PeGroup.start(3, device.config(HEAP))) {
      for (int i = 0; i < 20; i++) {
        long size = 1 + i * 1000L;
        List<Long> offsets = g.onAllOk(pe -> pe.malloc(size) - pe.heapBase());
        assertEquals(1, offsets.stream().distinct().count(), offsets::toString);
        assertTrue(offsets.getFirst() >= SymmetricHeap.INTERNAL_BYTES);
        assertEquals(0, offsets.getFirst() % 256);
      }
      List<Long> aligned = g.onAllOk(pe -> pe.mallocAlign(1 << 16, 100) - pe.heapBase());
      assertEquals(1, aligned.stream().distinct().count());
      assertEquals(0, aligned.getFirst() % (1 << 16));
      List<Long> flagged = g.onAllOk(pe -> pe.extMallocWithFlags(4096, 1) - pe.heapBase());
      assertEquals(1, flagged.stream().distinct().count());
      // freed space is reused at the same offset everywhere
      g.onAllOk(pe -> {
        pe.free(pe.heapBase() + aligned.getFirst());
        return null;
      });
      List<Long> again = g.onAllOk(pe -> pe.mallocAlign(1 << 16, 100) - pe.heapBase());
      assertEquals(aligned, again);
    }
  }

  @Test
  void aMallocOfAnotherSizeFailsOnEveryPeNamingBothSizes() {
    try (PeGroup g = PeGroup.start(2, device.config(HEAP))) {
      List<Object> out = g.onAll(pe -> pe.malloc(pe.myPe() == 0 ? 4096 : 8192));
      for (Object o : out) {
        ShmemException e = assertInstanceOf(ShmemException.class, o);
        assertTrue(e.getMessage().contains("PE 0 called malloc(size 4096") && e.getMessage().contains("PE 1 called malloc(size 8192"), e.getMessage());
      }
      // nothing was allocated: the group goes on and still agrees
      List<Long> offsets = g.onAllOk(pe -> pe.malloc(4096) - pe.heapBase());
      assertEquals(List.of(SymmetricHeap.INTERNAL_BYTES, SymmetricHeap.INTERNAL_BYTES), offsets);
    }
  }

  @Test
  void differentCallsAtOneStepFailOnEveryPe() {
    try (PeGroup g = PeGroup.start(2, device.config(HEAP))) {
      long[] first = g.onAllOk(pe -> pe.malloc(1024)).stream().mapToLong(Long::longValue).toArray();
      List<Object> out = g.onAll(pe -> {
        if (pe.myPe() == 0) pe.free(first[0]);
        else pe.mallocAlign(512, 1024);
        return null;
      });
      for (Object o : out) {
        ShmemException e = assertInstanceOf(ShmemException.class, o);
        assertTrue(e.getMessage().contains("PE 0 called free") && e.getMessage().contains("PE 1 called mallocAlign(size 1024, alignment 512)"), e.getMessage());
      }
    }
  }

  @Test
  void aBadArgumentOnOnePeFailsEveryPeInsteadOfLeavingThemWaiting() {
    try (PeGroup g = PeGroup.start(2, device.config(HEAP))) {
      for (Object o : g.onAll(pe -> pe.malloc(pe.myPe() == 1 ? 0 : 16))) {
        // PE 0's size differs too, but the bad argument is what every PE is told first
        IllegalArgumentException e = assertInstanceOf(IllegalArgumentException.class, o);
        assertTrue(e.getMessage().contains("malloc: size 0 must be positive"), e.getMessage());
      }
      for (Object o : g.onAll(pe -> {
        pe.free(pe.heapBase() + 12345);
        return null;
      })) {
        IllegalArgumentException e = assertInstanceOf(IllegalArgumentException.class, o);
        assertTrue(e.getMessage().contains("not the start of a symmetric allocation"), e.getMessage());
      }
      for (Object o : g.onAll(pe -> pe.malloc(HEAP))) {
        ShmemException e = assertInstanceOf(ShmemException.class, o);
        assertTrue(e.getMessage().contains("MORI_SHMEM_HEAP_SIZE"), e.getMessage());
      }
    }
  }

  @Test
  void ptrP2pReachesThePeersObjectAndIsZeroWhereThereIsNoPath() {
    try (PeGroup g = PeGroup.start(2, device.config(HEAP))) {
      long[] obj = g.onAllOk(pe -> pe.malloc(1 << 16)).stream().mapToLong(Long::longValue).toArray();
      Shmem pe0 = g.pe(0), pe1 = g.pe(1);
      long remote = pe0.ptrP2p(obj[0] + 100, 0, 1);
      assertEquals(obj[1] + 100, remote);
      assertEquals(obj[0] + 100, pe0.ptrP2p(obj[0] + 100, 0, 0));
      // bytes written through PE 0's translation are PE 1's object
      byte[] pattern = new byte[4096];
      new Random(7).nextBytes(pattern);
      MemorySegment.copy(pattern, 0, MemorySegment.ofAddress(remote).reinterpret(4096), ValueLayout.JAVA_BYTE, 0, 4096);
      assertArrayEquals(pattern, MemorySegment.ofAddress(obj[1] + 100).reinterpret(4096).toArray(ValueLayout.JAVA_BYTE));
      assertEquals(0, pe1.ptrP2p(0x1234, 1, 0), "not symmetric memory");
      assertThrows(IllegalArgumentException.class, () -> pe1.ptrP2p(obj[1], 0, 1), "myPe must be this PE");
      assertThrows(IllegalArgumentException.class, () -> pe1.ptrP2p(obj[1], 1, 2));
    }
    try (PeGroup g = PeGroup.start(2, device.config(HEAP).withDisableP2p(true))) {
      long[] obj = g.onAllOk(pe -> pe.malloc(256)).stream().mapToLong(Long::longValue).toArray();
      assertEquals(0, g.pe(0).ptrP2p(obj[0], 0, 1), "MORI_DISABLE_P2P: no direct path");
      assertEquals(obj[0], g.pe(0).ptrP2p(obj[0], 0, 0));
      assertEquals(GpuStates.FLAG_P2P_DISABLED, g.pe(0).gpuStates().flags());
      assertEquals(0, g.pe(0).gpuStates().peerHeapBase()[1]);
      // the endpoints that replace the mapping: ShmemRemotePeersTest
      assertEquals(1, g.pe(0).gpuStates().remote().numQpPerPe());
    }
  }

  @Test
  void registeredBuffersTranslateAndDeregisterClosesThem() {
    try (PeGroup g = PeGroup.start(2, device.config(HEAP))) {
      List<DeviceBuffer> buffers = g.onAllOk(pe -> pe.gpu().allocDevice(pe.device(), 1 << 20));
      try {
        g.onAllOk(pe -> pe.bufferRegister(buffers.get(pe.myPe()).address() + 4096, 65536));
        long inside = buffers.get(0).address() + 4096 + 300;
        assertEquals(buffers.get(1).address() + 4096 + 300, g.pe(0).ptrP2p(inside, 0, 1));
        assertEquals(0, g.pe(0).ptrP2p(buffers.get(0).address() + 4096 + 65536, 0, 1), "past the registered range");
        // overlapping registrations and host memory are refused on every PE
        for (Object o : g.onAll(pe -> pe.bufferRegister(buffers.get(pe.myPe()).address() + 8192, 4096)))
          assertTrue(assertInstanceOf(IllegalArgumentException.class, o).getMessage().contains("overlaps the registered buffer"));
        for (Object o : g.onAll(pe -> pe.bufferRegister(pe.myPe() == 0 ? 0x1000 : buffers.get(1).address(), 4096)))
          assertTrue(assertInstanceOf(IllegalArgumentException.class, o).getMessage().contains("bufferRegister(0x1000, 4096) on PE 0"));
        for (Object o : g.onAll(pe -> pe.bufferDeregister(buffers.get(pe.myPe()).address() + 4096, 100)))
          assertTrue(assertInstanceOf(IllegalArgumentException.class, o).getMessage().contains("registered with 65536 bytes"));
        g.onAllOk(pe -> pe.bufferDeregister(buffers.get(pe.myPe()).address() + 4096, 65536));
        assertEquals(0, g.pe(0).ptrP2p(inside, 0, 1));
      } finally {
        buffers.forEach(DeviceBuffer::close);
      }
    }
  }

  @Test
  void hostBarrierWaitsForTheLastPe() {
    try (PeGroup g = PeGroup.start(3, device.config(HEAP))) {
      // each PE's arrival and return; PE 2 comes last. What must hold whatever the machine's scheduling: nobody
      // returns before PE 2 arrived (a head start alone says nothing when a PE thread runs late)
      List<long[]> times = g.onAllOk(pe -> {
        if (pe.myPe() == 2) LockSupport.parkNanos(300_000_000L);
        long arrived = System.nanoTime();
        pe.barrierAll();
        return new long[] {arrived, System.nanoTime()};
      });
      long lastArrival = times.get(2)[0];
      for (int pe = 0; pe < 2; pe++)
        assertTrue(times.get(pe)[1] >= lastArrival, "PE " + pe + " returned " + (lastArrival - times.get(pe)[1]) + " ns before PE 2 arrived");
    }
  }

  @Test
  void streamBarrierHoldsEachStreamUntilEveryPeQueuedIt() {
    try (PeGroup g = PeGroup.start(2, device.config(HEAP))) {
      List<GpuStream> streams = g.onAllOk(pe -> pe.gpu().createStream(pe.device()));
      try {
        // PE 1 queues its barrier only after PE 0 queued its own, and 100 ms later: PE 0's stream must not finish
        // before that moment. Ordered by a latch, not by a head start, so a PE thread the machine runs late cannot
        // make PE 0 queue after PE 1 (under CI load a 300 ms head start once was not enough)
        CountDownLatch zeroQueued = new CountDownLatch(1);
        List<long[]> times = g.onAllOk(pe -> {
          if (pe.myPe() == 1) {
            try {
              if (!zeroQueued.await(20, TimeUnit.SECONDS)) throw new IllegalStateException("PE 0 never queued its barrier");
            } catch (InterruptedException e) {
              throw new IllegalStateException(e);
            }
            LockSupport.parkNanos(100_000_000L);
          }
          long queued = System.nanoTime();
          pe.barrierAll(streams.get(pe.myPe()));
          if (pe.myPe() == 0) zeroQueued.countDown();
          streams.get(pe.myPe()).synchronize();
          return new long[] {queued, System.nanoTime()};
        });
        assertTrue(times.get(0)[1] >= times.get(1)[0], "PE 0's stream finished " + (times.get(1)[0] - times.get(0)[1])
            + " ns before PE 1 queued its barrier");
        // many in a row stay matched (each barrier has its own target)
        g.onAllOk(pe -> {
          for (int i = 0; i < 50; i++) pe.barrierAll(streams.get(pe.myPe()));
          streams.get(pe.myPe()).synchronize();
          return null;
        });
        assertThrows(IllegalArgumentException.class, () -> g.pe(0).barrierAll(streams.get(1)), "a stream of another GPU");
      } finally {
        streams.forEach(GpuStream::close);
      }
    }
  }

  @Test
  void moduleInitWritesThePesStateIntoTheModulesGlobal() {
    try (PeGroup g = PeGroup.start(2, device.config(HEAP))) {
      String kernel = "#include \"mori_shmem.cuh\"\nextern \"C\" __global__ void noop(int* x) { *x = mori_shmem_my_pe(); }\n";
      for (Shmem pe : g.pes) {
        try (GpuModule m = ShmemKernels.compile(pe, kernel, "noop.cu")) {
          GpuModule.GlobalSymbol states = m.global(GpuStates.SYMBOL);
          byte[] written = MemorySegment.ofAddress(states.address()).reinterpret(states.size()).toArray(ValueLayout.JAVA_BYTE);
          assertArrayEquals(pe.gpuStates().toBytes(), written);
          GpuStates s = GpuStates.fromBytes(written);
          assertEquals(pe.myPe(), s.rank());
          assertEquals(2, s.nPes());
          assertEquals(pe.heapBase(), s.heapBase());
          assertEquals(10_000_000_000L, s.waitTimeoutNs());
          assertNotEquals(0, s.peerHeapBase()[1 - pe.myPe()]);
        }
      }
      assertEquals(0, device.gpu.openModules());
    }
  }

  @Test
  void finalizeGivesEveryAllocationMappingAndModuleBack() {
    PeGroup g = PeGroup.start(2, device.config(HEAP));
    List<GpuStream> streams = g.onAllOk(pe -> pe.gpu().createStream(pe.device()));
    g.onAllOk(pe -> {
      pe.malloc(1 << 20);
      pe.barrierAll(streams.get(pe.myPe())); // loads the barrier module
      streams.get(pe.myPe()).synchronize();
      return null;
    });
    assertTrue(device.gpu.openModules() >= 2);
    g.close();
    streams.forEach(GpuStream::close);
    assertEquals(0, device.gpu.liveAllocations());
    assertEquals(0, device.gpu.openModules());
    assertEquals(0, device.gpu.openMappings());
    for (Shmem pe : g.pes) {
      assertTrue(pe.isFinalized());
      assertThrows(IllegalStateException.class, () -> pe.malloc(1));
      pe.finalizeShmem(); // idempotent
    }
  }
}
