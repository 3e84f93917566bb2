package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.cuda.Nvrtc;

/**
 * The device library as the compiler gets it: prepended to the kernel (an include of it replaced), and compiled
 * by NVRTC with the test kernels of {@code gpuinit_device_test.cu}, which between them call every device function
 * the header defines (checked here against the header's own list), as a cubin and as PTX. Where libnvrtc is not
 * found (it is on the GPU machine, or MORI4J_NVRTC_LIBRARY points at the nvidia-cuda-nvrtc wheel) the NVRTC tests
 * skip saying why.
 */
class GpuInitiatedKernelsTest {
  static final String[] KERNELS = {"t_post", "t_poll", "t_recv", "t_atomics", "t_manual_batch", "t_mori_write", "t_verify", "t_latency",
      "t_warp_throughput", "t_queue_full", "t_until_error", "t_fill", "t_check", "t_check_slices"};

  static String testKernels() {
    try (InputStream in = GpuInitiatedKernelsTest.class.getResourceAsStream("/org/mori4j/io/gpuinit/gpuinit_device_test.cu")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void theLibraryIsPrependedAndAnIncludeOfItIsReplaced() {
    String unit = GpuInitiatedKernels.withDeviceLibrary("#include \"mori_rdma.cuh\"\n  #include <mori_rdma.cuh>\nextern \"C\" __global__ void k() {}\n", "k.cu");
    assertTrue(unit.startsWith("#line 1 \"mori_rdma.cuh\"\n"));
    assertTrue(unit.contains("#line 1 \"k.cu\"\n"));
    assertFalse(unit.substring(unit.indexOf("#line 1 \"k.cu\"")).contains("#include"), unit);
    assertTrue(unit.indexOf("} MoriRdmaEndpoint;") < unit.indexOf("#line 1 \"k.cu\""), "the library comes first");
    assertThrows(IllegalArgumentException.class, () -> GpuInitiatedKernels.withDeviceLibrary("x", " "));
  }

  @Test
  void theTestKernelsCallEveryDeviceFunctionOfTheHeader() {
    String header = GpuInitiatedKernels.deviceLibrary();
    String kernels = testKernels();
    Matcher m = Pattern.compile("MORI_RDMA_DEVICE [a-z *]+?\\b((?:mori_rdma_(?!internal_)|Post|Update|Ring|Poll)\\w+)\\(").matcher(header);
    int functions = 0;
    while (m.find()) {
      functions++;
      assertTrue(kernels.contains(m.group(1) + "("), "no test kernel calls " + m.group(1));
    }
    Matcher scoped = Pattern.compile("unsigned long long mori_rdma_post_(\\w+)_##SCOPE\\(").matcher(header);
    int ops = 0;
    while (scoped.find()) {
      ops++;
      for (String scope : new String[] {"thread", "warp", "block"}) {
        String f = "mori_rdma_post_" + scoped.group(1) + "_" + scope;
        assertTrue(kernels.contains(f + "("), "no test kernel calls " + f);
      }
    }
    assertEquals(4, ops, "write, read, write_imm, send in three scopes");
    assertTrue(functions >= 20, "found only " + functions + " device functions in the header");
  }

  @Test
  void theDeviceLibraryAndEveryKernelCompileWithNvrtc() {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
    String unit = GpuInitiatedKernels.withDeviceLibrary(testKernels(), "gpuinit_device_test.cu");
    byte[] cubin = Nvrtc.compile(unit, "gpuinit_device_test.cu", "-arch=sm_90");
    assertEquals("ELF", new String(cubin, 1, 3, StandardCharsets.US_ASCII));
    String ptx = new String(Nvrtc.compile(unit, "gpuinit_device_test.cu", "-arch=compute_90"), StandardCharsets.US_ASCII);
    for (String kernel : KERNELS) assertTrue(ptx.contains(".entry " + kernel), kernel);
    assertTrue(ptx.contains("membar.sys") || ptx.contains("fence.sc.sys"), "the doorbell's system-scope fence is in the code");
    assertTrue(ptx.contains("atom.global.max.u64") || ptx.contains("atom.max.u64") || ptx.contains(".max.u64"), "RingDoorbell is an atomic max");
  }

  @Test
  void aLibraryBuiltOnTheHeaderHasItsTrapContextPrintedByTheHeadersTraps() {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
    String kernel = "extern \"C\" __global__ void k(MoriRdmaEndpoint* ep, int* st) {\n"
        + "  st[0] = mori_rdma_wait_retired(ep, mori_rdma_post_write_thread(ep, 0, 0, 0, 0, 8, 0, 1));\n}\n";
    String hook = "#define MORI_RDMA_TRAP_CONTEXT(ep) printf(\"trap-context-4711 %u\\n\", (ep) == 0 ? 0u : (ep)->qpn)\n";
    StringBuilder marker = new StringBuilder();
    for (byte b : "trap-context-4711".getBytes(StandardCharsets.US_ASCII)) marker.append(marker.isEmpty() ? "" : ", ").append(b);
    String with = new String(Nvrtc.compile(hook + GpuInitiatedKernels.withDeviceLibrary(kernel, "k.cu"), "k.cu", "-arch=compute_90"),
        StandardCharsets.US_ASCII);
    String without = new String(Nvrtc.compile(GpuInitiatedKernels.withDeviceLibrary(kernel, "k.cu"), "k.cu", "-arch=compute_90"),
        StandardCharsets.US_ASCII);
    assertTrue(with.contains(marker), "the hook's message is in the code of a kernel whose waits can trap");
    assertFalse(without.contains(marker), "no hook, no message");
  }

  @Test
  void aCompileErrorInTheKernelNamesTheKernelsFileAndLine() {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
    String unit = GpuInitiatedKernels.withDeviceLibrary("extern \"C\" __global__ void k(MoriRdmaEndpoint* ep) {\n  mori_rdma_post_write_thread(ep);\n}\n", "mine.cu");
    NativeException e = assertThrows(NativeException.class, () -> Nvrtc.compile(unit, "mine.cu", "-arch=sm_90"));
    assertTrue(e.getMessage().contains("mine.cu(2)"), e.getMessage());
  }
}
