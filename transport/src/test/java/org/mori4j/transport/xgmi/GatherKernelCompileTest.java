package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.cuda.Nvrtc;

/**
 * The batch kernel's source compiles with NVRTC, to the cubin the backend loads on an H100/H200 (sm_90) and to
 * PTX whose copy loop uses 128-bit loads and stores. NVRTC needs no GPU: this runs wherever libnvrtc is found
 * (the toolkit, or {@code MORI4J_NVRTC_LIBRARY} pointing at the nvidia-cuda-nvrtc wheel) and skips elsewhere.
 * That the kernel moves the right bytes is XgmiTransferGpuTest's, on a GPU.
 */
class GatherKernelCompileTest {
  @BeforeEach
  void needsNvrtc() {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
  }

  @Test
  void compilesToACubinForHopper() {
    byte[] cubin = Nvrtc.compile(GatherKernel.SOURCE, "mori4j_xgmi_gather.cu", "-arch=sm_90");
    assertEquals("ELF", new String(cubin, 1, 3, StandardCharsets.US_ASCII));
  }

  @Test
  void theCopyLoopMovesSixteenBytesPerInstruction() {
    String ptx = new String(Nvrtc.compile(GatherKernel.SOURCE, "mori4j_xgmi_gather.cu", "-arch=compute_90"), StandardCharsets.US_ASCII);
    assertTrue(ptx.contains(".entry " + GatherKernel.NAME), ptx);
    // block pointers come from the table, so the accesses are generic (ld.v4.u32), not ld.global: still 16 bytes each
    assertTrue(java.util.regex.Pattern.compile("ld(\\.global)?(\\.nc)?\\.v(2\\.u64|4\\.u32)").matcher(ptx).find(), "no 128-bit load");
    assertTrue(java.util.regex.Pattern.compile("st(\\.global)?\\.v(2\\.u64|4\\.u32)").matcher(ptx).find(), "no 128-bit store");
  }

  @Test
  void eachThreadHasUnrollLoadsInFlightBeforeItsFirstStore() {
    String ptx = new String(Nvrtc.compile(GatherKernel.SOURCE, "mori4j_xgmi_gather.cu", "-arch=compute_90"), StandardCharsets.US_ASCII);
    var vector = java.util.regex.Pattern.compile("(ld|st)(\\.global)?(\\.nc)?\\.v(2\\.u64|4\\.u32)");
    var m = vector.matcher(ptx);
    int loadsBeforeFirstStore = 0;
    while (m.find() && m.group(1).equals("ld")) loadsBeforeFirstStore++;
    assertEquals(GatherKernel.UNROLL, loadsBeforeFirstStore, "128-bit loads issued before the first 128-bit store");
  }
}
