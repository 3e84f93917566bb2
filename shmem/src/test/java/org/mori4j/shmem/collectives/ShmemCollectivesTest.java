package org.mori4j.shmem.collectives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.shmem.GpuStates;
import org.mori4j.shmem.Shmem;
import org.mori4j.shmem.ShmemConfig;
import org.mori4j.shmem.ShmemException;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * The host side of the collectives on the transport tests' in-memory GPU (two PEs as threads of this JVM, two
 * devices): create makes the PEs agree (grid size, settings; a PE with other settings fails every PE), preloads
 * every kernel, and each call launches the kernel its arguments name with the argument bytes the kernel's
 * signature expects, the same epoch and grid on every PE, and one epoch more per call. Bad types, ops, counts,
 * streams and buffers outside the heap are refused before anything is launched. The kernels' own work is
 * {@link ShmemCollectivesGpuTest}'s.
 */
class ShmemCollectivesTest {
  private static final int PES = 2;

  /** One launch as the in-memory device saw it. */
  record Launch(int device, String kernel, int grid, int block, List<byte[]> args) {
    long arg(int i) {
      byte[] b = args.get(i);
      ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
      return b.length >= 8 ? bb.getLong() : bb.getInt();
    }
  }

  private HostBackedGpuRuntime gpu;
  private ShmemConfig config;
  private ExecutorService threads;
  private final List<Launch> launches = Collections.synchronizedList(new ArrayList<>());
  private final List<Shmem> pes = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    gpu = new HostBackedGpuRuntime(PES, 0, true);
    String name = "collectives-test-" + System.nanoTime();
    gpu.defineGlobal(GpuStates.SYMBOL, GpuStates.LAYOUT.byteSize());
    for (String kernel : ShmemCollectives.KERNELS.keySet())
      gpu.defineKernel(kernel, l -> launches.add(new Launch(l.function().device(), l.function().name(), l.grid().x(), l.block().x(), l.args())));
    GpuRuntimes.register(name, gpu);
    config = ShmemConfig.load().withGpuRuntime(name).withHeapSize(64L << 20).withTimeout(Duration.ofSeconds(20));
    threads = Executors.newFixedThreadPool(PES);
    byte[] id = Shmem.getUniqueId(config);
    pes.addAll(onAll(rank -> Shmem.initWithUniqueId(rank, PES, id, config.withDevice(rank))));
  }

  @AfterEach
  void stop() throws Exception {
    onAll(rank -> {
      pes.get(rank).finalizeShmem();
      return null;
    });
    threads.shutdownNow();
    gpu.shutdown();
  }

  @Test
  void createAgreesOnTheGridAndPreloadsEveryKernel() throws Exception {
    List<ShmemCollectives> colls = onAll(rank -> ShmemCollectives.create(pes.get(rank), new ShmemCollectives.Settings(1 << 20, 256 << 10, 0)));
    // the in-memory device has 4 SMs and one PE per device: 4 blocks on both
    assertEquals(4, colls.get(0).maxBlocks());
    assertEquals(4, colls.get(1).maxBlocks());
    for (int d = 0; d < PES; d++) {
      int device = d;
      List<String> loaded = launches.stream().filter(l -> l.device() == device).map(Launch::kernel).sorted().toList();
      assertEquals(ShmemCollectives.KERNELS.keySet().stream().sorted().toList(), loaded, "every kernel launched once on device " + d);
    }
    assertTrue(launches.stream().allMatch(l -> l.args().stream().allMatch(b -> isZero(b))), "the preload passes zeros only");
    closeAll(colls);
  }

  @Test
  void eachCallLaunchesItsKernelWithItsArgumentsAndTheSameEpochOnEveryPe() throws Exception {
    List<ShmemCollectives> colls = onAll(rank -> ShmemCollectives.create(pes.get(rank), new ShmemCollectives.Settings(1 << 20, 256 << 10, 0)));
    List<Long> buffers = onAll(rank -> pes.get(rank).malloc(4 << 20));
    launches.clear();
    onAll(rank -> {
      Shmem pe = pes.get(rank);
      GpuStream stream = pe.gpu().createStream(pe.device());
      ShmemCollectives c = colls.get(rank);
      long buf = buffers.get(rank);
      c.allReduce(buf, 1000, ShmemDataType.BFLOAT16, ShmemReduceOp.SUM, stream);                         // AUTO, 2000 B: put-signal
      c.allReduce(buf, 1 << 20, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, stream);                        // AUTO, 4 MiB: p2p-read
      c.allReduce(buf + 2, 7, ShmemDataType.FLOAT16, ShmemReduceOp.SUM, stream, AllReduceAlgorithm.P2P_READ);
      c.broadcast(buf, 4096, ShmemDataType.UINT8, 1, stream);
      c.allGather(buf, 100, ShmemDataType.INT32, stream);
      c.allReduce(buf, 0, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, stream);                              // nothing to do: no launch
      stream.synchronize();
      stream.close();
      return null;
    });
    for (int d = 0; d < PES; d++) {
      int device = d;
      long buf = buffers.get(d);
      List<Launch> mine = launches.stream().filter(l -> l.device() == device).toList();
      assertEquals(List.of("mori4j_allreduce_put_bf16", "mori4j_allreduce_p2p_fp32", "mori4j_allreduce_p2p_fp16", "mori4j_broadcast_bytes",
          "mori4j_allgather_bytes"), mine.stream().map(Launch::kernel).toList(), "kernels in call order on PE " + d);
      assertTrue(mine.stream().allMatch(l -> l.block() == ShmemCollectives.THREADS && l.grid() >= 1 && l.grid() <= 4), "launch shapes " + mine);
      Launch put = mine.get(0), p2p = mine.get(1), odd = mine.get(2), bcast = mine.get(3), gather = mine.get(4);
      // (buf, scratch, count, slotElems, chunkElems, signals, epoch)
      assertEquals(buf, put.arg(0));
      assertEquals(1000, put.arg(2));
      assertEquals((1 << 20) / 2, put.arg(3), "scratch slot in elements");
      assertEquals(ShmemCollectives.MIN_CHUNK_BYTES / 2, put.arg(4), "chunk in elements");
      assertEquals(1, put.arg(6), "first epoch");
      // (buf, count, signals, epoch)
      assertEquals(buf, p2p.arg(0));
      assertEquals(1 << 20, p2p.arg(1));
      assertEquals(put.arg(5), p2p.arg(2), "one signal area for every kernel");
      assertEquals(2, p2p.arg(3));
      assertEquals(4, p2p.grid(), "4 MiB over 2 PEs fills the 4 blocks");
      assertEquals(buf + 2, odd.arg(0));
      assertEquals(3, odd.arg(3));
      // (buf, bytes, root, signals, epoch) and (buf, sliceBytes, signals, epoch)
      assertEquals(4096, bcast.arg(1));
      assertEquals(1, bcast.arg(2));
      assertEquals(4, bcast.arg(4));
      assertEquals(400, gather.arg(1));
      assertEquals(5, gather.arg(3));
    }
    for (int i = 0; i < 5; i++) {
      int k = i;
      List<Launch> ith = List.of(launches.stream().filter(l -> l.device() == 0).toList().get(k), launches.stream().filter(l -> l.device() == 1).toList().get(k));
      assertEquals(ith.get(0).grid(), ith.get(1).grid(), "same grid on both PEs for call " + k);
      assertEquals(ith.get(0).arg(ith.get(0).args().size() - 1), ith.get(1).arg(ith.get(1).args().size() - 1), "same epoch on both PEs for call " + k);
    }
    closeAll(colls);
  }

  @Test
  void badArgumentsAreRefusedNamingTheValueBeforeAnythingIsLaunched() throws Exception {
    List<ShmemCollectives> colls = onAll(rank -> ShmemCollectives.create(pes.get(rank), new ShmemCollectives.Settings(1 << 20, 256 << 10, 0)));
    Shmem pe = pes.get(0);
    ShmemCollectives c = colls.get(0);
    long buf = onAll(rank -> pes.get(rank).malloc(1 << 20)).get(0);
    launches.clear();
    GpuStream stream = pe.gpu().createStream(0);
    GpuStream other = pe.gpu().createStream(1);
    try {
      assertMessage(() -> c.allReduce(buf, 8, ShmemDataType.INT32, ShmemReduceOp.SUM, stream), "type INT32");
      assertMessage(() -> c.allReduce(buf, 8, ShmemDataType.FLOAT32, ShmemReduceOp.MAX, stream), "op MAX");
      assertMessage(() -> c.allReduce(buf, -1, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, stream), "count must not be negative: -1");
      assertMessage(() -> c.allReduce(buf, Long.MAX_VALUE / 2, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, stream), "overflows");
      assertMessage(() -> c.allReduce(buf, 8, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, other), "the stream is on GPU 1");
      assertMessage(() -> c.allReduce(buf + 1, 8, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, stream), "not aligned");
      assertMessage(() -> c.allReduce(pe.heapBase() + pe.heapSize() - 16, 8, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, stream), "not inside PE 0's symmetric heap");
      try (var elsewhere = pe.gpu().allocDevice(0, 4096)) {
        assertMessage(() -> c.allReduce(elsewhere.address(), 8, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, stream), "allocate it with Shmem.malloc");
      }
      assertMessage(() -> c.allReduce(pe.heapBase() + 4096, 8, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, stream), "signal words");
      assertMessage(() -> c.allReduce(buf, 1 << 19, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, stream, AllReduceAlgorithm.PUT_SIGNAL), "scratch slot");
      assertMessage(() -> c.broadcast(buf, 8, ShmemDataType.UINT8, 2, stream), "root 2 is out of range 0..1");
      assertMessage(() -> c.allGather(buf, 1 << 23, ShmemDataType.FLOAT32, stream), "not inside"); // 2 x 32 MiB past a 64 MiB heap
      assertEquals(List.of(), launches, "nothing launched");
    } finally {
      stream.close();
      other.close();
    }
    closeAll(colls);
    assertThrows(IllegalStateException.class, () -> c.allReduce(buf, 8, ShmemDataType.FLOAT32, ShmemReduceOp.SUM, null));
  }

  @Test
  void settingsThatDifferBetweenPesFailEveryPe() throws Exception {
    List<Object> results = onAllCatching(rank -> ShmemCollectives.create(pes.get(rank), new ShmemCollectives.Settings(1 << 20, rank == 0 ? 0 : 4096, 0)));
    for (Object r : results) {
      ShmemException e = assertInstanceOf(ShmemException.class, r);
      assertTrue(e.getMessage().contains("every PE must pass the same Settings"), e.getMessage());
    }
    // the memory went back on every PE: a create with equal settings still fits and succeeds
    closeAll(onAll(rank -> ShmemCollectives.create(pes.get(rank), new ShmemCollectives.Settings(16 << 20, 0, 0))));
  }

  @Test
  void settingsAreChecked() {
    assertThrows(IllegalArgumentException.class, () -> new ShmemCollectives.Settings(-256, 0, 0));
    assertThrows(IllegalArgumentException.class, () -> new ShmemCollectives.Settings(100, 0, 0));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> new ShmemCollectives.Settings(256, 512, 0)).getMessage().contains("exceeds"));
    assertThrows(IllegalArgumentException.class, () -> new ShmemCollectives.Settings(256, 0, 257));
  }

  @Test
  void kernelBChunksAreSixteenByteMultiplesBetween8And256KiB() {
    assertEquals(8 << 10, ShmemCollectives.chunkBytes(1000, 132));
    assertEquals(8 << 10, ShmemCollectives.chunkBytes(917504, 132));   // 6.8 KiB per block -> 8 KiB
    assertEquals(256 << 10, ShmemCollectives.chunkBytes(64L << 20, 132));
    assertEquals(12 << 10, ShmemCollectives.chunkBytes(1 << 20, 100));  // 10.5 KiB -> 12 KiB
  }

  private void closeAll(List<ShmemCollectives> colls) throws Exception {
    onAll(rank -> {
      colls.get(rank).close();
      return null;
    });
  }

  private static boolean isZero(byte[] b) {
    for (byte x : b) if (x != 0) return false;
    return true;
  }

  private static void assertMessage(org.junit.jupiter.api.function.Executable call, String part) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(part), "message '" + e.getMessage() + "' lacks '" + part + "'");
  }

  private <T> List<T> onAll(IntFunction<T> body) throws Exception {
    List<T> out = new ArrayList<>();
    for (Object o : onAllCatching(body)) {
      if (o instanceof Throwable t) throw new AssertionError("a PE failed", t);
      @SuppressWarnings("unchecked")
      T v = (T) o;
      out.add(v);
    }
    return out;
  }

  private List<Object> onAllCatching(IntFunction<?> body) throws Exception {
    List<Future<?>> futures = new ArrayList<>();
    for (int r = 0; r < PES; r++) {
      int rank = r;
      futures.add(threads.submit(() -> body.apply(rank)));
    }
    List<Object> out = new ArrayList<>();
    for (Future<?> f : futures) {
      try {
        out.add(f.get(60, TimeUnit.SECONDS));
      } catch (ExecutionException e) {
        out.add(e.getCause());
      }
    }
    return out;
  }
}
