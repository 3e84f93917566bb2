package org.mori4j.natives.cuda;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.AbiProbe;
import org.mori4j.natives.gpu.BoundSymbols;
import org.mori4j.natives.verbs.LayoutConformance;

/**
 * The CUDA driver API bindings agree with the real {@code cuda.h} (CUDA 13 on the build machines): every
 * type size, struct field offset and constant value, and the exported symbol every bound API is looked up
 * under. Needs only gcc and the header, not a driver or GPU.
 */
class CudaAbiConformanceTest {

  static String[] includeFlags() {
    String home = System.getenv("CUDA_HOME");
    return home == null ? new String[] {"-I/usr/local/cuda/include"} : new String[] {"-I" + home + "/include", "-I/usr/local/cuda/include"};
  }

  @Test
  void everyLayoutAndConstantMatchesCudaH() {
    Map<String, Long> probe = AbiProbe.compileAndRun("/abi/cuda_probe.c", includeFlags());
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);

    LayoutConformance conformance = new LayoutConformance(probe, CudaLayouts.ALL, List.of(CudaConstants.class));
    List<String> mismatches = conformance.mismatches();

    assertTrue(mismatches.isEmpty(), mismatches.size() + " ABI mismatch(es) against cuda.h:\n  " + String.join("\n  ", mismatches));
    assertTrue(conformance.checked() >= 55, "the probe compared only " + conformance.checked() + " numbers");
  }

  @Test
  void everyApiIsBoundUnderTheSymbolCudaHMapsItTo() {
    Map<String, String> probe = AbiProbe.compileAndRunText("/abi/cuda_probe.c", includeFlags());
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);

    List<String> mismatches = BoundSymbols.headerMismatches(probe, CudaDriver.functions());

    assertTrue(mismatches.isEmpty(), "bound symbols differ from cuda.h:\n  " + String.join("\n  ", mismatches));
    assertTrue(CudaDriver.functions().symbols().size() >= 50, CudaDriver.functions().symbols()::toString);
    assertTrue(CudaDriver.functions().symbols().get("cuMemAlloc").equals("cuMemAlloc_v2"), "the _v2 mapping is not checked");
  }
}
