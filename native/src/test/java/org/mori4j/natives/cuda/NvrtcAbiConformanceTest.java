package org.mori4j.natives.cuda;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.AbiProbe;
import org.mori4j.natives.gpu.BoundSymbols;
import org.mori4j.natives.verbs.LayoutConformance;

/**
 * The NVRTC bindings agree with the real {@code nvrtc.h}: result codes, type sizes and bound symbols. The
 * header ships with NVRTC's development package, which the CUDA installs on the build machines do not
 * have (their {@code /usr/local/cuda/include} has {@code cuda.h} only), so this test looks in
 * {@code $MORI4J_NVRTC_INCLUDE}, {@code $CUDA_HOME/include} and {@code /usr/local/cuda/include} and skips,
 * saying so, when none has it, even under {@code MORI4J_ABI_REQUIRED=1}.
 */
class NvrtcAbiConformanceTest {

  /** nvrtcResult is an enum passed as int; nvrtcProgram an opaque pointer; sizes go through size_t. */
  static final List<MemoryLayout> LAYOUTS = List.of(ValueLayout.JAVA_INT.withName("nvrtcResult"),
      CudaLayouts.HANDLE.withName("nvrtcProgram"), CudaLayouts.SIZE_T);

  static Optional<Path> includeDir() {
    List<String> dirs = new ArrayList<>();
    if (System.getenv("MORI4J_NVRTC_INCLUDE") != null) dirs.add(System.getenv("MORI4J_NVRTC_INCLUDE"));
    if (System.getenv("CUDA_HOME") != null) dirs.add(System.getenv("CUDA_HOME") + "/include");
    dirs.add("/usr/local/cuda/include");
    return dirs.stream().map(Path::of).filter(d -> Files.isRegularFile(d.resolve("nvrtc.h"))).findFirst();
  }

  private static String[] flags() {
    Optional<Path> dir = includeDir();
    Assumptions.assumeTrue(dir.isPresent(), "nvrtc.h not found (set MORI4J_NVRTC_INCLUDE, or install CUDA's nvrtc development files)");
    return new String[] {"-I" + dir.get()};
  }

  @Test
  void resultCodesAndTypesMatchNvrtcH() {
    Map<String, Long> probe = AbiProbe.compileAndRun("/abi/nvrtc_probe.c", flags());
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);

    LayoutConformance conformance = new LayoutConformance(probe, LAYOUTS, List.of(Nvrtc.class));
    List<String> mismatches = conformance.mismatches();

    assertTrue(mismatches.isEmpty(), mismatches.size() + " ABI mismatch(es) against nvrtc.h:\n  " + String.join("\n  ", mismatches));
    assertTrue(conformance.checked() >= 8, "the probe compared only " + conformance.checked() + " numbers");
  }

  @Test
  void everyApiIsBoundUnderTheSymbolNvrtcHMapsItTo() {
    Map<String, String> probe = AbiProbe.compileAndRunText("/abi/nvrtc_probe.c", flags());
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);

    List<String> mismatches = BoundSymbols.headerMismatches(probe, Nvrtc.functions());

    assertTrue(mismatches.isEmpty(), "bound symbols differ from nvrtc.h:\n  " + String.join("\n  ", mismatches));
  }
}
