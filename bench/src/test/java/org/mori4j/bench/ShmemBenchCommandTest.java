package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code mori4j shmem-bench} without a GPU: the sizes it sweeps (seed 003's 64 x 7168 bf16 = 896 KiB among them),
 * the heap it asks for, how PEs are spread over JVMs, and usage errors naming the flag and value (exit 2), the
 * missing GPU included. What it measures is recorded from GPU runs in bench/results.
 */
class ShmemBenchCommandTest {

  @Test
  void allReduceSizesRunFrom14KiBThrough896KiBTo64MiB() {
    List<Long> sizes = ShmemBenchCommand.allReduceSizes(14 << 10, 64 << 20);
    assertEquals(14L << 10, sizes.getFirst());
    assertTrue(sizes.contains(64L * 7168 * 2), "64 x 7168 bf16 missing: " + sizes);
    assertEquals(64L << 20, sizes.getLast());
    assertEquals(14, sizes.size(), sizes.toString()); // 14..896 KiB (7), 1..64 MiB (7)
    assertEquals(List.of(4096L, 16384L, 65536L, 262144L, 1048576L), ShmemBenchCommand.putSizes(1 << 20));
    assertEquals(List.of(2048L), ShmemBenchCommand.allReduceSizes(2048, 3000));
  }

  @Test
  void theHeapHoldsTheBufferAPutTargetAndKernelBsScratch() {
    long heap = ShmemBenchCommand.heapSize(64L << 20, 2);
    assertTrue(heap >= 3 * (64L << 20), "heap " + heap);
    assertEquals(0, heap % (1 << 20));
  }

  @Test
  void pesOfOneGpuShareItsJvm() {
    assertEquals(List.of(0, 1), ShmemBenchCommand.ranksOf(0, 1, 2));     // one GPU: both PEs in one JVM
    assertEquals(List.of(1), ShmemBenchCommand.ranksOf(1, 2, 2));        // two GPUs: one PE each
    assertEquals(List.of(0, 2), ShmemBenchCommand.ranksOf(0, 2, 4));     // --np 4 on two GPUs
  }

  @Test
  void usageErrorsNameTheFlagAndValue() {
    assertUsage("--dtype: 'int8' is not bf16, fp16 or fp32", "shmem-bench", "--dtype", "int8");
    assertUsage("--iters must be at least 1: 0", "shmem-bench", "--iters", "0");
    assertUsage("--min-size 8192 is above --max-size 4096", "shmem-bench", "--min-size", "8K", "--max-size", "4K");
    assertUsage("is not a whole number of FLOAT32 elements", "shmem-bench", "--dtype", "fp32", "--min-size", "6");
  }

  @Test
  void withoutAGpuItSaysWhatWasTried() {
    org.junit.jupiter.api.Assumptions.assumeFalse(org.mori4j.natives.gpu.GpuRuntimes.select("auto").available(), "this machine has a GPU");
    assertUsage("shmem-bench needs a GPU", "shmem-bench", "--max-size", "1M");
  }

  private static void assertUsage(String part, String... args) {
    CommandLine cl = Mori4jCommand.commandLine();
    StringWriter err = new StringWriter();
    cl.setErr(new PrintWriter(err));
    cl.setOut(new PrintWriter(new StringWriter()));
    int code = cl.execute(args);
    assertEquals(2, code, err.toString());
    assertTrue(err.toString().contains(part), "stderr lacks '" + part + "': " + err);
  }
}
