package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two PEs in two JVMs on the in-memory device (one memory directory: one host): the heaps are reached through
 * IPC mappings, which finalize closes; a PE that is killed fails the other's waiting barrier at once, naming it.
 */
class ShmemTwoProcessTest {
  private static final long HEAP = 8 << 20;
  private Path dir;
  private ShmemTestDevice device;

  @BeforeEach
  void device() {
    dir = org.mori4j.transport.xgmi.HostBackedGpuRuntime.newDirectory();
    device = new ShmemTestDevice(2, dir);
  }

  @AfterEach
  void shutdown() {
    device.shutdown();
  }

  @Test
  void peersInTwoProcessesReachEachOthersHeapThroughIpcMappings() throws Exception {
    byte[] id = Shmem.getUniqueId(device.config(HEAP));
    try (ChildPe child = new ChildPe("host", 1, 2, id, HEAP, dir.toString())) {
      Shmem pe = Shmem.initWithUniqueId(0, 2, id, device.config(HEAP));
      child.await("UP", 60);
      assertEquals(1, device.gpu.openMappings(), "PE 1's heap is an IPC mapping here");
      int failures = ShmemPeProcessMain.hostScenario(pe);
      String childOffset = child.all.stream().filter(l -> l.startsWith("OFFSET")).findFirst().orElse(child.await("OFFSET", 30));
      assertEquals("OFFSET " + SymmetricHeap.INTERNAL_BYTES, childOffset);
      pe.finalizeShmem();
      assertEquals("DONE 0", child.await("DONE", 60), "child answers: " + child.all);
      assertEquals(0, failures);
      assertEquals(0, device.gpu.openMappings(), "finalize closed the mapping of PE 1's heap");
      assertEquals(0, device.gpu.liveAllocations(), "finalize freed the heap");
      assertEquals(0, child.process.waitFor());
    }
  }

  @Test
  void aKilledPeFailsTheOthersWaitingBarrierAtOnceNamingIt() throws Exception {
    byte[] id = Shmem.getUniqueId(device.config(HEAP));
    try (ChildPe child = new ChildPe("hang", 1, 2, id, HEAP, dir.toString())) {
      Shmem pe = Shmem.initWithUniqueId(0, 2, id, device.config(HEAP));
      pe.malloc(4096);
      child.await("READY", 60);
      // the child sleeps; this PE goes on to a malloc, which the child never joins
      CompletableFuture<Long> waiting = CompletableFuture.supplyAsync(() -> pe.malloc(8192));
      Thread.sleep(300);
      long killed = System.nanoTime();
      child.process.destroyForcibly();
      var e = assertThrows(java.util.concurrent.ExecutionException.class, () -> waiting.get(10, TimeUnit.SECONDS));
      long took = System.nanoTime() - killed;
      assertTrue(e.getCause() instanceof ShmemException && e.getCause().getMessage().contains("PE 1 disconnected"), e.getCause().toString());
      assertTrue(took < 5_000_000_000L, "failed " + took / 1_000_000 + " ms after the kill (timeout is 20 s)");
      ShmemException later = assertThrows(ShmemException.class, pe::barrierAll);
      assertTrue(later.getMessage().contains("PE 1"), later.getMessage());
      pe.finalizeShmem(); // frees this PE's side without the dead one
      assertEquals(0, device.gpu.openMappings());
      assertEquals(0, device.gpu.liveAllocations());
    }
  }
}
