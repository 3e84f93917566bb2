package org.mori4j.shmem.collectives;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.shmem.Shmem;
import org.mori4j.shmem.ShmemConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collectives' kernels on real GPUs, two PEs in this JVM (GPU 0 and GPU 1 when there are two, else both on
 * GPU 0): both all-reduce kernels give every PE exactly the CPU reference's bits ({@link AllReduceReference}) for
 * bf16, fp16 and fp32, for sizes from one element to 64 MiB, odd sizes and a buffer that is not 16-byte aligned
 * included; back-to-back calls without a host synchronisation reuse the buffer safely; broadcast and all-gather
 * copy exactly.
 */
@Tag("gpu")
class ShmemCollectivesGpuTest {
  private static final Logger LOG = LoggerFactory.getLogger(ShmemCollectivesGpuTest.class);
  private static final int PES = 2;
  private static final long MAX_BYTES = 64L << 20;

  /** Each PE's buffer is 64 MiB plus slack in its heap. */
  private static CollectivePes pes;

  @BeforeAll
  static void startPes() throws Exception {
    GpuRuntime gpu = GpuRuntimes.select("cuda");
    Assumptions.assumeTrue(gpu.available(), "no CUDA GPU here");
    int devices = gpu.deviceCount();
    ShmemConfig config = ShmemConfig.load().withGpuRuntime("cuda").withHeapSize(512L << 20).withTimeout(Duration.ofSeconds(60))
        .withDeviceWaitTimeout(Duration.ofSeconds(20));
    byte[] id = Shmem.getUniqueId(config);
    pes = new CollectivePes(PES, rank -> {
      Shmem shmem = Shmem.initWithUniqueId(rank, PES, id, config.withDevice(devices >= PES ? rank : 0));
      ShmemCollectives coll = ShmemCollectives.create(shmem);
      long buffer = shmem.malloc(MAX_BYTES + 4096);
      return new CollectivePes.Pe(shmem, coll, shmem.gpu().createStream(shmem.device()), buffer);
    });
    LOG.info("{} PEs on GPU(s) {} and {}; {} blocks per kernel", PES, pes.get(0).shmem().device(), pes.get(1).shmem().device(), pes.get(0).coll().maxBlocks());
  }

  @AfterAll
  static void stopPes() throws Exception {
    if (pes != null) pes.close();
  }

  @Test
  void bothAllReduceKernelsMatchTheCpuReferenceForEveryTypeAndSize() throws Exception {
    long[] sizes = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 1000, 4095, 65537, 64 * 7168, (1 << 20) + 3};
    for (AllReduceAlgorithm algorithm : List.of(AllReduceAlgorithm.P2P_READ, AllReduceAlgorithm.PUT_SIGNAL)) {
      for (ShmemDataType type : List.of(ShmemDataType.BFLOAT16, ShmemDataType.FLOAT16, ShmemDataType.FLOAT32)) {
        for (long count : sizes) checkAllReduce(algorithm, type, count, 0, 1);
        checkAllReduce(algorithm, type, MAX_BYTES / type.bytes(), 0, 1); // 64 MiB
      }
    }
  }

  @Test
  void aBufferThatIsNotSixteenByteAlignedTakesTheElementPath() throws Exception {
    for (AllReduceAlgorithm algorithm : List.of(AllReduceAlgorithm.P2P_READ, AllReduceAlgorithm.PUT_SIGNAL)) {
      checkAllReduce(algorithm, ShmemDataType.BFLOAT16, 100_003, 2, 1);
      checkAllReduce(algorithm, ShmemDataType.FLOAT32, 4097, 4, 1);
    }
  }

  @Test
  void backToBackCallsReuseTheBufferWithoutAHostSynchronisation() throws Exception {
    for (AllReduceAlgorithm algorithm : List.of(AllReduceAlgorithm.P2P_READ, AllReduceAlgorithm.PUT_SIGNAL, AllReduceAlgorithm.AUTO)) {
      checkAllReduce(algorithm, ShmemDataType.BFLOAT16, 64 * 7168, 0, 5);
      checkAllReduce(algorithm, ShmemDataType.FLOAT32, 3 << 20, 0, 3);
    }
  }

  @Test
  void broadcastCopiesTheRootsBytesToEveryPe() throws Exception {
    for (long bytes : new long[] {1, 17, 4096, 1_000_001, MAX_BYTES}) {
      for (int root = 0; root < PES; root++) {
        int r = root;
        List<byte[]> data = randomPerPe(bytes, 11 * bytes + root);
        List<byte[]> out = pes.onAll(rank -> {
          CollectivePes.Pe pe = pes.get(rank);
          CollectivePes.upload(pe, data.get(rank), 0);
          pe.coll().broadcast(pe.buffer(), bytes, ShmemDataType.UINT8, r, pe.stream());
          return CollectivePes.download(pe, bytes, 0);
        });
        for (int p = 0; p < PES; p++) CollectivePes.assertBytes(data.get(r), out.get(p), "broadcast of " + bytes + " bytes from PE " + r + ", PE " + p);
      }
    }
  }

  @Test
  void allGatherPutsEveryPesSliceEverywhere() throws Exception {
    for (long perPe : new long[] {1, 5, 4096, 300_001, 16L << 20}) {
      List<byte[]> data = randomPerPe(perPe * PES * 4, perPe);
      List<byte[]> out = pes.onAll(rank -> {
        CollectivePes.Pe pe = pes.get(rank);
        CollectivePes.upload(pe, data.get(rank), 0);
        pe.coll().allGather(pe.buffer(), perPe, ShmemDataType.FLOAT32, pe.stream());
        return CollectivePes.download(pe, perPe * PES * 4, 0);
      });
      byte[] expected = new byte[(int) (perPe * PES * 4)];
      for (int p = 0; p < PES; p++) System.arraycopy(data.get(p), (int) (p * perPe * 4), expected, (int) (p * perPe * 4), (int) (perPe * 4));
      for (int p = 0; p < PES; p++) CollectivePes.assertBytes(expected, out.get(p), "all-gather of " + perPe + " fp32 per PE, PE " + p);
    }
  }

  private static void checkAllReduce(AllReduceAlgorithm algorithm, ShmemDataType type, long count, long offset, int repeat) throws Exception {
    pes.checkAllReduce(algorithm, type, count, offset, repeat, 1000L, "");
  }

  private static List<byte[]> randomPerPe(long bytes, long seed) {
    List<byte[]> out = new ArrayList<>();
    for (int p = 0; p < PES; p++) {
      byte[] b = new byte[(int) bytes];
      new Random(seed * 31 + p).nextBytes(b);
      out.add(b);
    }
    return out;
  }
}
