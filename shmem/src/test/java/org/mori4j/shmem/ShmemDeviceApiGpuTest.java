package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.DeviceMemoryInfo;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;

/**
 * The device library on real GPUs: two PEs in two JVMs (this one and a child), on GPUs 0 and 1 when there are
 * two, both on GPU 0 when there is one (CUDA IPC works between processes on one device). Every device function
 * per PE pair ({@link DeviceApiScenario}), checked on both sides; finalize gives the heap back.
 */
@Tag("gpu")
class ShmemDeviceApiGpuTest {
  private static final long HEAP = 256L << 20;
  private static GpuRuntime gpu;

  @BeforeAll
  static void needsAGpu() {
    gpu = GpuRuntimes.select("auto");
    Assumptions.assumeTrue(gpu.available(), "no GPU runtime here");
  }

  @Test
  void theDeviceLibraryCompilesWithNvrtcAndLoads() {
    try (GpuModule m = ShmemKernels.load(gpu, 0, DeviceApiScenario.source(), "device_api_test.cu")) {
      assertEquals(GpuStates.LAYOUT.byteSize(), m.global(GpuStates.SYMBOL).size());
      m.function("t_signal");
      m.function(ShmemKernels.STREAM_BARRIER_KERNEL);
    }
  }

  @Test
  void everyDeviceFunctionBetweenTwoPesInTwoProcesses() throws Exception {
    ShmemConfig config = ShmemConfig.load().withHeapSize(HEAP);
    DeviceMemoryInfo before = gpu.memoryInfo(0);
    byte[] id = Shmem.getUniqueId(config);
    try (ChildPe child = new ChildPe("device-api", 1, 2, id, HEAP, null)) {
      Shmem pe = Shmem.initWithUniqueId(0, 2, id, config);
      String up = child.await("UP", 120);
      System.out.println("PE 0 on GPU " + pe.device() + " (" + gpu.pciBusId(pe.device()) + "), PE 1: " + up + "; " + gpu.deviceCount() + " GPU(s)");
      assertEquals(gpu.deviceCount() > 1 ? "UP 1" : "UP 0", up.substring(0, 4));
      List<String> failures;
      List<String> passed;
      try (GpuStream stream = gpu.createStream(pe.device())) {
        DeviceApiScenario s = new DeviceApiScenario(pe, stream);
        failures = s.run();
        passed = s.passed();
      }
      pe.finalizeShmem();
      String done = child.await("DONE", 300);
      List<String> childFailures = child.all.stream().filter(l -> l.startsWith("FAIL")).toList();
      long childPassed = child.all.stream().filter(l -> l.startsWith("PASS")).count();
      System.out.println("PE 0 passed " + passed.size() + " checks, PE 1 passed " + childPassed);
      assertTrue(failures.isEmpty() && childFailures.isEmpty(), "PE 0: " + failures + "\nPE 1: " + childFailures);
      assertEquals("DONE 0", done);
      assertTrue(passed.size() >= 60, "only " + passed.size() + " checks ran: " + passed);
      assertEquals(0, child.process.waitFor());
    }
    DeviceMemoryInfo after = gpu.memoryInfo(0);
    assertTrue(after.free() >= before.free() - (64L << 20), "GPU 0 lost memory: free " + before.free() + " -> " + after.free());
  }
}
