package org.mori4j.shmem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.io.gpuinit.GpuQueueLayout;
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
  void theProxyPartPostsByTheOffsetsOfGpuQueueLayout() {
    String lib = ShmemKernels.deviceLibrary();
    assertFalse(lib.contains("@MORI_SHMEM_QUEUE_LAYOUT@"), "the layout marker was replaced");
    assertTrue(lib.contains("\n#define MORI_SHMEM_EP_SQ_RETIRED " + GpuQueueLayout.CTRL_SQ_RETIRED + "\n"), "sqRetired");
    assertTrue(lib.contains("\n#define MORI_SHMEM_EP_SQ_DBR " + GpuQueueLayout.CTRL_SQ_DBR_RECORD + "\n"), "sqDbrRecord");
    assertTrue(lib.contains("\n#define MORI_SHMEM_OP_FETCH_ADD " + GpuQueueLayout.OP_ATOMIC_FETCH_AND_ADD + "\n"), "FETCH_ADD");
    // every layout name the proxy part uses is defined exactly once, by the generated block
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\bMORI_SHMEM_(EP_[A-Z_]+|WQE_BYTES|OP_[A-Z_]+|WR_FENCE)\\b").matcher(lib);
    java.util.Set<String> used = new java.util.TreeSet<>();
    while (m.find()) used.add(m.group());
    for (String name : used) {
      int defs = lib.split("\n#define " + name + " ", -1).length - 1;
      assertEquals(1, defs, name + " defined " + defs + " times");
    }
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
