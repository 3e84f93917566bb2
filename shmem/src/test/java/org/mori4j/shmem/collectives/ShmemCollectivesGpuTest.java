package org.mori4j.shmem.collectives;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.PinnedBuffer;
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

  private static ExecutorService pool;
  private static final List<Pe> pes = new ArrayList<>();

  /** One PE's state: its shmem, collectives, stream and a buffer of 64 MiB plus slack in the heap. */
  record Pe(Shmem shmem, ShmemCollectives coll, GpuStream stream, long buffer) {}

  @BeforeAll
  static void startPes() throws Exception {
    GpuRuntime gpu = GpuRuntimes.select("cuda");
    Assumptions.assumeTrue(gpu.available(), "no CUDA GPU here");
    int devices = gpu.deviceCount();
    ShmemConfig config = ShmemConfig.load().withGpuRuntime("cuda").withHeapSize(512L << 20).withTimeout(Duration.ofSeconds(60))
        .withDeviceWaitTimeout(Duration.ofSeconds(20));
    byte[] id = Shmem.getUniqueId(config);
    pool = Executors.newFixedThreadPool(PES);
    List<Pe> started = onAll(rank -> {
      Shmem shmem = Shmem.initWithUniqueId(rank, PES, id, config.withDevice(devices >= PES ? rank : 0));
      ShmemCollectives coll = ShmemCollectives.create(shmem);
      long buffer = shmem.malloc(MAX_BYTES + 4096);
      return new Pe(shmem, coll, shmem.gpu().createStream(shmem.device()), buffer);
    });
    pes.addAll(started);
    LOG.info("{} PEs on GPU(s) {} and {}; {} blocks per kernel", PES, pes.get(0).shmem().device(), pes.get(1).shmem().device(), pes.get(0).coll().maxBlocks());
  }

  @AfterAll
  static void stopPes() throws Exception {
    if (pes.isEmpty()) return;
    onAll(rank -> {
      Pe pe = pes.get(rank);
      pe.stream().synchronize();
      pe.coll().close();
      pe.stream().close();
      pe.shmem().close();
      return null;
    });
    pool.shutdownNow();
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
        List<byte[]> out = onAll(rank -> {
          Pe pe = pes.get(rank);
          upload(pe, data.get(rank), 0);
          pe.coll().broadcast(pe.buffer(), bytes, ShmemDataType.UINT8, r, pe.stream());
          return download(pe, bytes, 0);
        });
        for (int p = 0; p < PES; p++) assertBytes(data.get(r), out.get(p), "broadcast of " + bytes + " bytes from PE " + r + ", PE " + p);
      }
    }
  }

  @Test
  void allGatherPutsEveryPesSliceEverywhere() throws Exception {
    for (long perPe : new long[] {1, 5, 4096, 300_001, 16L << 20}) {
      List<byte[]> data = randomPerPe(perPe * PES * 4, perPe);
      List<byte[]> out = onAll(rank -> {
        Pe pe = pes.get(rank);
        upload(pe, data.get(rank), 0);
        pe.coll().allGather(pe.buffer(), perPe, ShmemDataType.FLOAT32, pe.stream());
        return download(pe, perPe * PES * 4, 0);
      });
      byte[] expected = new byte[(int) (perPe * PES * 4)];
      for (int p = 0; p < PES; p++) System.arraycopy(data.get(p), (int) (p * perPe * 4), expected, (int) (p * perPe * 4), (int) (perPe * 4));
      for (int p = 0; p < PES; p++) assertBytes(expected, out.get(p), "all-gather of " + perPe + " fp32 per PE, PE " + p);
    }
  }

  /** {@code repeat} all-reduces in a row on each PE's stream, then one check of every PE's bytes against the reference applied as often. */
  private static void checkAllReduce(AllReduceAlgorithm algorithm, ShmemDataType type, long count, long offset, int repeat) throws Exception {
    long bytes = count * type.bytes();
    List<byte[]> inputs = new ArrayList<>();
    for (int p = 0; p < PES; p++) inputs.add(finiteValues(type, count, 1000L * p + count + type.ordinal()));
    List<byte[]> out = onAll(rank -> {
      Pe pe = pes.get(rank);
      upload(pe, inputs.get(rank), offset);
      for (int i = 0; i < repeat; i++) pe.coll().allReduce(pe.buffer() + offset, count, type, ShmemReduceOp.SUM, pe.stream(), algorithm);
      return download(pe, bytes, offset);
    });
    List<MemorySegment> expected = new ArrayList<>();
    for (byte[] in : inputs) expected.add(MemorySegment.ofArray(in.clone()));
    MemorySegment result = MemorySegment.ofArray(new byte[(int) bytes]);
    for (int i = 0; i < repeat; i++) {
      AllReduceReference.sum(type, expected, result, count);
      for (MemorySegment e : expected) e.copyFrom(result);
    }
    byte[] want = result.toArray(JAVA_BYTE);
    for (int p = 0; p < PES; p++)
      assertBytes(want, out.get(p), algorithm + " " + type + " x " + count + (offset != 0 ? " at +" + offset : "") + (repeat > 1 ? " x" + repeat : "") + ", PE " + p);
  }

  /** Values in [-8, 8) with random low mantissa bits, so sums round in every type and no fp16 overflows. */
  static byte[] finiteValues(ShmemDataType type, long count, long seed) {
    Random random = new Random(seed);
    MemorySegment out = MemorySegment.ofArray(new byte[(int) (count * type.bytes())]);
    for (long i = 0; i < count; i++) AllReduceReference.store(type, out, i * type.bytes(), (random.nextFloat() * 16 - 8) * (random.nextInt(8) == 0 ? 1e-3f : 1f));
    return out.toArray(JAVA_BYTE);
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

  /**
   * Copies {@code data} into the PE's buffer through pinned memory on the PE's stream, waits, then meets the other
   * PEs in a host barrier: no PE launches a kernel (which spins until the others' kernels arrive) while another
   * PE is still copying its input.
   */
  static void upload(Pe pe, byte[] data, long offset) {
    GpuRuntime gpu = pe.shmem().gpu();
    try (PinnedBuffer host = gpu.allocPinned(Math.max(1, data.length))) {
      MemorySegment.copy(data, 0, host.segment(), JAVA_BYTE, 0, data.length);
      gpu.copyHostToDeviceAsync(pe.buffer() + offset, host.segment(), data.length, pe.stream());
      pe.stream().synchronize();
    }
    pe.shmem().barrierAll();
  }

  static byte[] download(Pe pe, long bytes, long offset) {
    GpuRuntime gpu = pe.shmem().gpu();
    try (PinnedBuffer host = gpu.allocPinned(Math.max(1, bytes))) {
      gpu.copyDeviceToHostAsync(host.segment(), pe.buffer() + offset, bytes, pe.stream());
      pe.stream().synchronize();
      return host.segment().asSlice(0, bytes).toArray(JAVA_BYTE);
    }
  }

  static void assertBytes(byte[] want, byte[] got, String what) {
    assertEquals(want.length, got.length, what + ": length");
    for (int i = 0; i < want.length; i++)
      if (want[i] != got[i]) fail(String.format("%s: first wrong byte at %d of %d: want 0x%02x, got 0x%02x", what, i, want.length, want[i], got[i]));
  }

  /** Runs {@code body} for every rank at once (collective calls need all PEs) and returns the results in rank order. */
  private static <T> List<T> onAll(IntFunction<T> body) throws Exception {
    List<Future<T>> futures = new ArrayList<>();
    for (int r = 0; r < PES; r++) {
      int rank = r;
      futures.add(pool.submit(() -> body.apply(rank)));
    }
    List<T> out = new ArrayList<>();
    for (Future<T> f : futures) out.add(f.get(300, TimeUnit.SECONDS));
    return out;
  }
}
