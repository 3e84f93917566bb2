package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.io.gpuinit.GpuInitiatedKernels;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.cuda.Nvrtc;

/**
 * The device library as the compiler gets it: prepended to the kernel (an include of it replaced), and
 * compiled by NVRTC together with the device API test kernels, which call every function of the library
 * (where libnvrtc is found: the GPU machine, or MORI4J_NVRTC_LIBRARY pointing at the nvidia-cuda-nvrtc wheel).
 */
class ShmemKernelsTest {

  @Test
  void theLibraryIsPrependedAndAnIncludeOfItIsReplaced() {
    String unit = ShmemKernels.withDeviceLibrary("#include \"mori_shmem.cuh\"\n  #include <mori_shmem.cuh>\nextern \"C\" __global__ void k() {}\n", "k.cu");
    assertTrue(unit.startsWith("#line 1 \"mori_shmem.cuh\"\n"));
    assertTrue(unit.contains("#line 1 \"k.cu\"\n"));
    assertFalse(unit.substring(unit.indexOf("#line 1 \"k.cu\"")).contains("#include"), unit);
    assertTrue(unit.contains("__device__ MoriShmemGpuStates globalGpuStates;"));
    assertTrue(unit.indexOf("mori_shmem_putmem_nbi_signal_block") < unit.indexOf("#line 1 \"k.cu\""), "the library comes first");
  }

  @Test
  void theProxyPartPostsThroughMoriRdmaCuhInlinedOnceWithLineMarkers() {
    String lib = ShmemKernels.deviceLibrary();
    String rdma = GpuInitiatedKernels.deviceLibrary();
    assertEquals(1, lib.split(Pattern.quote(rdma), -1).length - 1, "mori_rdma.cuh's text, once");
    assertFalse(Pattern.compile("(?m)^\\s*#\\s*include").matcher(lib).find(), "every include was replaced");
    assertEquals(1, lib.split("typedef unsigned long uint64_t;", -1).length - 1, "one stdint prologue");
    int rdmaAt = lib.indexOf("#line 1 \"mori_rdma.cuh\"\n");
    int proxyAt = lib.indexOf("#line 1 \"mori_shmem_proxy.cuh\"\n");
    assertTrue(rdmaAt > lib.indexOf("__device__ MoriShmemGpuStates globalGpuStates;") && proxyAt > rdmaAt, "states, then mori_rdma.cuh, then the proxy part");
    assertTrue(lib.indexOf("MORI_RDMA_TRAP_CONTEXT(ep) mori_shmem_internal_endpoint_context") < rdmaAt, "the PE-naming hook is defined first");
    // after each inlined file the markers give mori_shmem.cuh its own line numbers back
    String shmem = lib.substring(0, rdmaAt);
    Matcher back = Pattern.compile("\n#line (\\d+) \"mori_shmem.cuh\"\n").matcher(lib);
    assertTrue(back.find(rdmaAt), "a marker back to mori_shmem.cuh after mori_rdma.cuh");
    assertEquals(shmem.split("\n", -1).length, Integer.parseInt(back.group(1)) - 1, "the line after the include's");
    for (String proxyCall : new String[] {"mori_rdma_reserve_send(ep, 1)", "mori_rdma_write_wqe(ep, idx", "mori_rdma_update_send_dbr_record(ep, idx, 1)",
        "mori_rdma_ring_doorbell(ep, idx + 1)", "mori_rdma_wait_retired(ep, idx)", "mori_rdma_quiet(ep)", "mori_rdma_result_cell(ep, idx)"})
      assertTrue(lib.indexOf(proxyCall, proxyAt) > 0, "the proxy part calls " + proxyCall);
  }

  @Test
  void everyPartIsInlinedOnceAndTheMarkersAfterThemGiveMoriShmemCuhItsOwnLines() throws Exception {
    String lib = ShmemKernels.deviceLibrary();
    String[] outer;
    try (var in = ShmemKernels.class.getResourceAsStream(ShmemKernels.DEVICE_LIBRARY_RESOURCE)) {
      outer = new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n", -1);
    }
    for (String part : new String[] {"mori_shmem_proxy.cuh", "mori_shmem_rma.cuh", "mori_shmem_sync.cuh", "mori_rdma.cuh"})
      assertEquals(1, lib.split(Pattern.quote("#line 1 \"" + part + "\"\n"), -1).length - 1, part + " inlined once");
    Matcher back = Pattern.compile("\n#line (\\d+) \"mori_shmem.cuh\"\n([^\n]*)").matcher(lib);
    int markers = 0;
    while (back.find()) {
      markers++;
      int line = Integer.parseInt(back.group(1));
      assertEquals(outer[line - 1], back.group(2), "the line after the marker to line " + line);
    }
    assertEquals(4, markers, "one marker back after each part");
    assertTrue(lib.indexOf("mori_shmem_putmem_nbi_signal_block") < lib.indexOf("mori_shmem_internal_stream_barrier"), "the data calls, then synchronization");
  }

  @Test
  void theDeviceLibraryAndEveryFunctionCompileWithNvrtc() {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
    String unit = ShmemKernels.withDeviceLibrary(DeviceApiScenario.source(), "device_api_test.cu");
    byte[] cubin = Nvrtc.compile(unit, "device_api_test.cu", "-arch=sm_90");
    assertEquals("ELF", new String(cubin, 1, 3, StandardCharsets.US_ASCII));
    byte[] ptx = Nvrtc.compile(unit, "device_api_test.cu", "-arch=compute_90");
    String text = new String(ptx, StandardCharsets.US_ASCII);
    for (String kernel : new String[] {"t_query", "t_put", "t_get", "t_typed", "t_signal", "t_waits", "t_atomics", "t_generic_atomics", "t_barrier",
        "t_fence", ShmemKernels.STREAM_BARRIER_KERNEL}) assertTrue(text.contains(".entry " + kernel), kernel);
    assertTrue(text.contains(".global .align 8 .b8 globalGpuStates[4928];"), "globalGpuStates is an unmangled 4928-byte global");
  }

  @Test
  void aCompileErrorInTheKernelNamesTheKernelsFileAndLine() {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
    String unit = ShmemKernels.withDeviceLibrary("extern \"C\" __global__ void k() {\n  undeclared_thing = 1;\n}\n", "mine.cu");
    NativeException e = assertThrows(NativeException.class, () -> Nvrtc.compile(unit, "mine.cu", "-arch=sm_90"));
    assertTrue(e.getMessage().contains("mine.cu(2)"), e.getMessage());
  }
}
