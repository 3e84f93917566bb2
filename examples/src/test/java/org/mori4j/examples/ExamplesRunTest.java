package org.mori4j.examples;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.shmem.ShmemConfig;

/** Every example runs to the end; each one throws when its own check of the moved bytes fails. */
class ExamplesRunTest {
  @Test
  void basicReadWriteRuns() {
    assertDoesNotThrow(() -> BasicReadWrite.main(new String[0]));
  }

  @Test
  void batchAndSessionRuns() {
    assertDoesNotThrow(() -> BatchAndSession.main(new String[0]));
  }

  @Test
  void actorApiExampleRuns() {
    assertDoesNotThrow(() -> ActorApiExample.main(new String[0]));
  }

  @Test
  void clusterKvCacheRuns() {
    // three JVMs (this one and two children), one SIGKILLed: about 40 s on a 2-core machine
    assertDoesNotThrow(() -> ClusterKvCache.main(new String[0]));
  }

  @Test
  void kvCacheMigrationRuns() {
    // two JVMs of one cluster: decode (this one) pulls a request's blocks from prefill and checks every byte, ~15 s
    assertDoesNotThrow(() -> KvCacheMigration.main(new String[0]));
  }

  @Test
  void shmemAllReduceWithoutGpuSaysWhyInOneLine() {
    GpuRuntime gpu = GpuRuntimes.select(ShmemConfig.load().gpuRuntime());
    Assumptions.assumeFalse(gpu.available(), "a GPU is here: shmemAllReduceRunsOnGpu covers the example");
    ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
    int exit = ShmemAllReduce.run(new String[] {"--np", "2"}, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    String said = err.toString(StandardCharsets.UTF_8);
    assertEquals(2, exit, said);
    assertEquals("", out.toString(StandardCharsets.UTF_8));
    assertEquals(1, said.lines().count(), said);
    assertTrue(said.startsWith("ShmemAllReduce: needs a GPU, and none can be used here: ") && said.contains(gpu.version()), said);
  }

  @Test
  void shmemAllReduceRefusesBadArguments() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit = ShmemAllReduce.run(new String[] {"--np", "1"}, System.out, new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(2, exit);
    assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("ShmemAllReduce: --np must be in 2..64"), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  @Tag("gpu")
  void shmemAllReduceRunsOnGpu() {
    Assumptions.assumeTrue(GpuRuntimes.select(ShmemConfig.load().gpuRuntime()).available(), "no GPU here");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int exit = ShmemAllReduce.run(new String[] {"--np", "2", "--iters", "20"}, new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
    String said = out.toString(StandardCharsets.UTF_8);
    System.out.print(said);
    assertEquals(0, exit, said);
    assertTrue(said.contains("ShmemAllReduce: OK"), said);
  }
}
