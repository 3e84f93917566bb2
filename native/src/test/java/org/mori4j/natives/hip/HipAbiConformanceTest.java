package org.mori4j.natives.hip;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.AbiProbe;
import org.mori4j.natives.gpu.BoundSymbols;
import org.mori4j.natives.verbs.LayoutConformance;

/**
 * The HIP and hiprtc bindings agree with Debian's HIP headers ({@code libamdhip64-dev}, ROCm 5.2, compiled
 * for the AMD platform): every type size, struct field offset and constant value, and the symbol every bound
 * API is looked up under. The ROCm 6 renumbering of {@code hipMemoryType} ({@link HipConstants.Rocm6}) has no
 * header here and is not probed.
 */
class HipAbiConformanceTest {
  private static final String[] FLAGS = {"-D__HIP_PLATFORM_AMD__"};

  @Test
  void everyLayoutAndConstantMatchesTheHipHeaders() {
    Map<String, Long> probe = AbiProbe.compileAndRun("/abi/hip_probe.c", FLAGS);
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);

    LayoutConformance conformance = new LayoutConformance(probe, HipLayouts.ALL, List.of(HipConstants.class));
    List<String> mismatches = conformance.mismatches();

    assertTrue(mismatches.isEmpty(), mismatches.size() + " ABI mismatch(es) against the HIP headers:\n  " + String.join("\n  ", mismatches));
    assertTrue(conformance.checked() >= 70, "the probe compared only " + conformance.checked() + " numbers");
  }

  @Test
  void everyApiIsBoundUnderTheSymbolTheHeadersMapItTo() {
    Map<String, String> probe = AbiProbe.compileAndRunText("/abi/hip_probe.c", FLAGS);
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);

    Map<String, String> hipOnly = new java.util.LinkedHashMap<>(probe);
    hipOnly.keySet().removeIf(k -> k.startsWith("symbol.hiprtc"));
    Map<String, String> hiprtcOnly = new java.util.LinkedHashMap<>(probe);
    hiprtcOnly.keySet().removeIf(k -> k.startsWith("symbol.") && !k.startsWith("symbol.hiprtc"));

    List<String> mismatches = new java.util.ArrayList<>(BoundSymbols.headerMismatches(hipOnly, Hip.functions()));
    mismatches.addAll(BoundSymbols.headerMismatches(hiprtcOnly, Hiprtc.COMPILER.functions()));

    assertTrue(mismatches.isEmpty(), "bound symbols differ from the HIP headers:\n  " + String.join("\n  ", mismatches));
  }
}
