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

  /**
   * What the runtime gained for shmem kernels, on the real driver: a 512-byte struct passed by value, the
   * occupancy calculator, and a cooperative launch of exactly the grid that fits (all blocks wait for each
   * other, which deadlocks unless they are all resident), while one block more is refused.
   */
  @Test
  void structArgumentsOccupancyAndCooperativeLaunch() {
    String src = """
        struct Table { unsigned long long v[64]; };
        extern "C" __global__ void struct_arg(Table t, int n, unsigned long long* out) {
          if (threadIdx.x < n) out[threadIdx.x] = t.v[threadIdx.x];
        }
        extern "C" __global__ void all_resident(unsigned int* counter, unsigned int* out) {
          if (threadIdx.x == 0) {
            atomicAdd(counter, 1u);
            while (atomicAdd(counter, 0u) < gridDim.x) {}
            out[blockIdx.x] = 1;
          }
        }
        """;
    try (GpuModule m = gpu.loadModule(0, gpu.compile(0, src, "grid.cu")); var out = gpu.allocDevice(0, 1 << 20);
         var counter = gpu.allocDevice(0, 64); GpuStream stream = gpu.createStream(0); var arena = java.lang.foreign.Arena.ofConfined()) {
      java.nio.ByteBuffer table = java.nio.ByteBuffer.allocate(512).order(java.nio.ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < 64; i++) table.putLong(0x1000_0000_0000L * (i + 1) + i);
      gpu.launch(m.function("struct_arg"), org.mori4j.natives.gpu.Dim3.of(1), org.mori4j.natives.gpu.Dim3.of(64), 0, stream,
          org.mori4j.natives.gpu.KernelArgs.of().struct(table.array(), 8).i32(64).pointer(out.address()));
      stream.synchronize();
      var host = arena.allocate(512, 8);
      gpu.copyDeviceToHost(host, out.address(), 512);
      for (int i = 0; i < 64; i++) assertEquals(0x1000_0000_0000L * (i + 1) + i, host.getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG, i), "element " + i);

      var resident = m.function("all_resident");
      int perSm = gpu.maxActiveBlocksPerMultiprocessor(resident, 256, 0);
      int sms = gpu.multiprocessorCount(0);
      assertTrue(perSm >= 1 && perSm <= 64, "blocks per SM " + perSm);
      int grid = perSm * sms;
      gpu.fill(counter.address(), (byte) 0, 64);
      gpu.fill(out.address(), (byte) 0, 4L * grid);
      gpu.launchCooperative(resident, org.mori4j.natives.gpu.Dim3.of(grid), org.mori4j.natives.gpu.Dim3.of(256), 0, stream,
          org.mori4j.natives.gpu.KernelArgs.of().pointer(counter.address()).pointer(out.address()));
      stream.synchronize();
      var flags = arena.allocate(4L * grid, 4);
      gpu.copyDeviceToHost(flags, out.address(), 4L * grid);
      for (int b = 0; b < grid; b++) assertEquals(1, flags.getAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, b), "block " + b);
      System.out.println("cooperative launch: " + perSm + " blocks/SM x " + sms + " SMs = " + grid + " blocks of 256 threads, all resident");
      var tooBig = org.junit.jupiter.api.Assertions.assertThrows(org.mori4j.natives.NativeException.class, () -> gpu.launchCooperative(resident,
          org.mori4j.natives.gpu.Dim3.of(grid + 1), org.mori4j.natives.gpu.Dim3.of(256), 0, stream,
          org.mori4j.natives.gpu.KernelArgs.of().pointer(counter.address()).pointer(out.address())));
      assertTrue(tooBig.getMessage().contains("COOPERATIVE_LAUNCH_TOO_LARGE"), tooBig.getMessage());
    }
  }

  @Test
  void everyDeviceFunctionBetweenTwoPesInTwoProcesses() throws Exception {
    runScenario("device-api", false, 60);
  }

  /**
   * The same scenario with {@code MORI_DISABLE_P2P}: every device call to the other PE goes through the
   * GPU-initiated endpoints, executed by each PE's host proxy (emulation of a NIC, over TCP on loopback).
   */
  @Test
  void everyDeviceFunctionOverGpuInitiatedEndpointsWithP2pDisabled() throws Exception {
    runScenario("device-api-proxy", true, 50);
  }

  /**
   * The endpoint scenario with both PEs in this JVM (threads), on GPU 0 (and GPU 1 when there are two): one
   * context, in which one PE's kernels spin while the other PE's thread launches and its proxy copies. It
   * stalled (1x H100, CUDA 13) until modules loaded their kernels at load time: with CUDA's lazy loading the
   * first launch of a kernel loaded it, and that load waited for the other PE's spinning kernel.
   */
  @Test
  void everyDeviceFunctionOverEndpointsTwoPesInOneProcess() throws Exception {
    ShmemConfig config = ShmemConfig.load().withHeapSize(HEAP).withDisableP2p(true);
    byte[] id = Shmem.getUniqueId(config);
    long t0 = System.nanoTime();
    var pool = java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      List<java.util.concurrent.Future<List<String>[]>> results = new java.util.ArrayList<>();
      for (int r = 0; r < 2; r++) {
        int rank = r;
        results.add(pool.submit(() -> {
          Shmem pe = Shmem.initWithUniqueId(rank, 2, id, config.withDevice(gpu.deviceCount() > 1 ? rank : 0));
          try (GpuStream stream = gpu.createStream(pe.device())) {
            DeviceApiScenario s = new DeviceApiScenario(pe, stream);
            List<String> failed = s.run();
            @SuppressWarnings("unchecked")
            List<String>[] out = new List[] {failed, s.passed(), pe.endpointErrors()};
            return out;
          } finally {
            pe.finalizeShmem();
          }
        }));
      }
      List<String> failures = new java.util.ArrayList<>(), errors = new java.util.ArrayList<>();
      int[] passed = new int[2];
      for (int r = 0; r < 2; r++) {
        List<String>[] o = results.get(r).get(600, java.util.concurrent.TimeUnit.SECONDS);
        failures.addAll(o[0]);
        passed[r] = o[1].size();
        errors.addAll(o[2]);
      }
      System.out.printf("device-api-proxy-one-process: PE 0 passed %d checks, PE 1 passed %d, in %.1f s%n", passed[0], passed[1],
          (System.nanoTime() - t0) / 1e9);
      assertTrue(failures.isEmpty(), "failures: " + failures);
      assertTrue(errors.isEmpty(), "endpoint errors: " + errors);
      assertTrue(passed[0] >= 50, "only " + passed[0] + " checks ran on PE 0");
    } finally {
      pool.shutdownNow();
    }
  }

  private void runScenario(String mode, boolean disableP2p, int minChecks) throws Exception {
    ShmemConfig config = ShmemConfig.load().withHeapSize(HEAP).withDisableP2p(disableP2p);
    DeviceMemoryInfo before = gpu.memoryInfo(0);
    byte[] id = Shmem.getUniqueId(config);
    long t0 = System.nanoTime();
    try (ChildPe child = new ChildPe(mode, 1, 2, id, HEAP, null)) {
      Shmem pe = Shmem.initWithUniqueId(0, 2, id, config);
      String up = child.await("UP", 120);
      System.out.println(mode + ": PE 0 on GPU " + pe.device() + " (" + gpu.pciBusId(pe.device()) + "), PE 1: " + up + "; " + gpu.deviceCount()
          + " GPU(s); direct path to PE 1: " + pe.hasDirectPath(1) + ", endpoints per peer " + pe.numQpPerPe());
      assertEquals(gpu.deviceCount() > 1 ? "UP 1" : "UP 0", up.substring(0, 4));
      assertEquals(!disableP2p, pe.hasDirectPath(1));
      List<String> failures;
      List<String> passed;
      try (GpuStream stream = gpu.createStream(pe.device())) {
        DeviceApiScenario s = new DeviceApiScenario(pe, stream);
        failures = s.run();
        passed = s.passed();
      }
      List<String> endpointErrors = pe.endpointErrors();
      pe.finalizeShmem();
      String done = child.await("DONE", 600);
      List<String> childFailures = child.all.stream().filter(l -> l.startsWith("FAIL")).toList();
      long childPassed = child.all.stream().filter(l -> l.startsWith("PASS")).count();
      System.out.printf("%s: PE 0 passed %d checks, PE 1 passed %d, in %.1f s%n", mode, passed.size(), childPassed, (System.nanoTime() - t0) / 1e9);
      assertTrue(failures.isEmpty() && childFailures.isEmpty(), "PE 0: " + failures + "\nPE 1: " + childFailures);
      assertTrue(endpointErrors.isEmpty(), "endpoint errors: " + endpointErrors);
      assertEquals("DONE 0", done);
      assertTrue(passed.size() >= minChecks, "only " + passed.size() + " checks ran: " + passed);
      assertEquals(0, child.process.waitFor());
    }
    // the driver frees an exited process's context asynchronously: give it up to 10 s
    DeviceMemoryInfo after = gpu.memoryInfo(0);
    for (int i = 0; i < 100 && after.free() < before.free() - (64L << 20); i++) {
      Thread.sleep(100);
      after = gpu.memoryInfo(0);
    }
    assertTrue(after.free() >= before.free() - (64L << 20), "GPU 0 lost memory: free " + before.free() + " -> " + after.free());
  }
}
