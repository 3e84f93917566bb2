package org.mori4j.shmem.collectives;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.cuda.Nvrtc;
import org.mori4j.shmem.ShmemKernels;

/**
 * The collectives' source compiles with the shmem device library under NVRTC, to the cubin a PE loads on an
 * H100/H200 (sm_90), with every kernel {@link ShmemCollectives} launches and fits a 512-thread block, and with
 * 16-byte loads in the data loops. NVRTC needs no GPU: this runs wherever libnvrtc is found (the toolkit, or
 * {@code MORI4J_NVRTC_LIBRARY} pointing at the nvidia-cuda-nvrtc wheel) and skips, saying so, elsewhere. That
 * the kernels compute the right bytes is {@link ShmemCollectivesGpuTest}'s, on a GPU.
 */
class CollectivesKernelCompileTest {
  private static final String UNIT = ShmemKernels.withDeviceLibrary(ShmemCollectives.source(), "collectives.cu");

  @BeforeEach
  void needsNvrtc() {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
  }

  @Test
  void compilesToACubinForHopper() {
    byte[] cubin = Nvrtc.compile(UNIT, "collectives.cu", "-arch=sm_90");
    assertEquals("ELF", new String(cubin, 1, 3, StandardCharsets.US_ASCII));
  }

  @Test
  void everyLaunchedKernelIsThereWithItsThreadBoundAndSixteenByteLoads() {
    String ptx = new String(Nvrtc.compile(UNIT, "collectives.cu", "-arch=compute_90"), StandardCharsets.US_ASCII);
    for (String kernel : ShmemCollectives.KERNELS.keySet()) {
      assertTrue(ptx.contains(".entry " + kernel + "("), "no kernel " + kernel);
    }
    assertTrue(ptx.contains(".maxntid " + ShmemCollectives.THREADS + ", 1, 1"), "kernels lack the launch bound of " + ShmemCollectives.THREADS);
    assertTrue(Pattern.compile("ld\\.global\\.cg\\.v4\\.u32").matcher(ptx).find(), "no 16-byte load around L1");
    assertTrue(Pattern.compile("st(\\.global)?\\.v4\\.u32").matcher(ptx).find(), "no 16-byte store");
  }
}
