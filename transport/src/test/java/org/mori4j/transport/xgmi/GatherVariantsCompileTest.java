package org.mori4j.transport.xgmi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.cuda.Nvrtc;

/**
 * The probe's kernel variants compile with NVRTC (no GPU needed; skips without libnvrtc), so that a run on the
 * 2x H200 machine does not stop at a variant that was never built: the backend's kernel text with 16 loads in
 * flight before its first store, its streaming form with evict-first stores and non-allocating loads, the previous
 * and the first kernel, and the probe's check and gate kernels.
 */
class GatherVariantsCompileTest {
  private static String ptx(String source) {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
    return new String(Nvrtc.compile(source, "variant.cu", "-arch=compute_90"), StandardCharsets.US_ASCII);
  }

  @Test
  void aVariantWithSixteenLoadsIssuesThemBeforeItsStores() {
    String ptx = ptx(GatherVariants.flatSource(32, 16, 256, false));
    var m = java.util.regex.Pattern.compile("(ld|st)(\\.global)?(\\.nc)?\\.v(2\\.u64|4\\.u32)").matcher(ptx);
    int loads = 0;
    while (m.find() && m.group(1).equals("ld")) loads++;
    assertEquals(16, loads, "128-bit loads before the first 128-bit store");
  }

  @Test
  void theStreamingFormUsesEvictFirstStoresAndNonAllocatingLoads() {
    String ptx = ptx(GatherVariants.flatSource(32, 8, 256, true));
    assertTrue(ptx.contains("st.global.cs.v2.u64"), "no streaming store");
    assertTrue(ptx.contains("ld.global.nc.L1::no_allocate.v2.u64"), "no non-allocating load");
    // the inline PTX is only assembled when building a cubin
    byte[] cubin = Nvrtc.compile(GatherVariants.flatSource(32, 8, 256, true), "variant.cu", "-arch=sm_90");
    assertEquals("ELF", new String(cubin, 1, 3, StandardCharsets.US_ASCII));
    ptx(GatherVariants.FIRST_SOURCE);
    ptx(GatherVariants.TWO_D_SOURCE);
    assertTrue(ptx(GatherKernel.source(32, 8, 256, false, 8)).contains(".minnctapersm 8"), "no minimum CTAs per SM");
    ptx(ProbeBuffers.Checker.SOURCE);
    assertTrue(ptx(ProbeGate.SOURCE).contains("ld.volatile"), "the gate must re-read its flag");
  }
}
