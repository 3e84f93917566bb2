package org.mori4j.shmem.collectives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.shmem.Shmem;
import org.mori4j.shmem.ShmemConfig;

/**
 * All-reduce over the GPU-initiated endpoints: two PEs in this JVM with {@code MORI_DISABLE_P2P} (GPUs 0 and 1,
 * or both on GPU 0), so kernel B's puts and signals go through the host proxy. AUTO picks kernel B, the results
 * are exactly the CPU reference's bits, back-to-back calls are safe, and P2P_READ, broadcast and all-gather
 * are refused with a message.
 */
@Tag("gpu")
class ShmemCollectivesProxyGpuTest {
  private static final int PES = 2;
  private static CollectivePes pes;

  @BeforeAll
  static void startPes() throws Exception {
    GpuRuntime gpu = GpuRuntimes.select("cuda");
    Assumptions.assumeTrue(gpu.available(), "no CUDA GPU here");
    int devices = gpu.deviceCount();
    ShmemConfig config = ShmemConfig.load().withGpuRuntime("cuda").withHeapSize(256L << 20).withTimeout(Duration.ofSeconds(60))
        .withDeviceWaitTimeout(Duration.ofSeconds(30)).withDisableP2p(true);
    byte[] id = Shmem.getUniqueId(config);
    pes = new CollectivePes(PES, rank -> {
      Shmem shmem = Shmem.initWithUniqueId(rank, PES, id, config.withDevice(devices >= PES ? rank : 0));
      ShmemCollectives coll = ShmemCollectives.create(shmem, new ShmemCollectives.Settings(16L << 20, 16L << 20, 0));
      long buffer = shmem.malloc((16L << 20) + 4096);
      return new CollectivePes.Pe(shmem, coll, shmem.gpu().createStream(shmem.device()), buffer);
    });
  }

  @AfterAll
  static void stopPes() throws Exception {
    if (pes != null) pes.close();
  }

  @Test
  void kernelBOverEndpointsMatchesTheCpuReference() throws Exception {
    CollectivePes.Pe pe0 = pes.get(0);
    assertFalse(pe0.shmem().hasDirectPath(1));
    assertEquals(AllReduceAlgorithm.PUT_SIGNAL, pe0.coll().allReduceAlgorithmFor(64L << 20));
    long[] sizes = {1, 7, 17, 4095, 65537, 64 * 7168, (1 << 20) + 3};
    for (ShmemDataType type : List.of(ShmemDataType.BFLOAT16, ShmemDataType.FLOAT32))
      for (long count : sizes) check(AllReduceAlgorithm.AUTO, type, count, 1);
    check(AllReduceAlgorithm.PUT_SIGNAL, ShmemDataType.FLOAT16, 8L << 20, 1); // 16 MiB, the scratch slot
    check(AllReduceAlgorithm.AUTO, ShmemDataType.BFLOAT16, 64 * 7168, 5); // back to back, no host sync
  }

  @Test
  void whatNeedsMappingsIsRefused() {
    CollectivePes.Pe pe0 = pes.get(0);
    IllegalArgumentException a = assertThrows(IllegalArgumentException.class, () -> pe0.coll().allReduce(pe0.buffer(), 16, ShmemDataType.FLOAT32,
        ShmemReduceOp.SUM, pe0.stream(), AllReduceAlgorithm.P2P_READ));
    assertTrue(a.getMessage().contains("P2P_READ") && a.getMessage().contains("no direct path"), a.getMessage());
    IllegalStateException b = assertThrows(IllegalStateException.class, () -> pe0.coll().broadcast(pe0.buffer(), 16, ShmemDataType.UINT8, 0,
        pe0.stream()));
    assertTrue(b.getMessage().contains("direct (P2P) path"), b.getMessage());
  }

  private static void check(AllReduceAlgorithm algorithm, ShmemDataType type, long count, int repeat) throws Exception {
    pes.checkAllReduce(algorithm, type, count, 0, repeat, 7000L, "over endpoints ");
  }
}
