package org.mori4j.transport.xgmi;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.transport.hip.HipCompiler;

/**
 * The batch kernel is one source for CUDA and HIP: it builds, optimised, for an AMD GPU under {@code hipcc}, in its
 * plain form (the backend's) and its streaming form (the nontemporal builtins in place of CUDA's inline PTX; the
 * minimum-blocks bound, CUDA's only, left out). About
 * a second each; skips where {@code hipcc} is not installed. No AMD GPU runs it here.
 */
class GatherKernelHipCompileTest {
  @Test
  void theKernelBuildsForAnAmdGpu(@TempDir Path dir) throws Exception {
    HipCompiler.compile(dir, "gather", GatherKernel.SOURCE, 3);
    HipCompiler.compile(dir, "gather_streaming", GatherKernel.source(GatherKernel.GROUP, GatherKernel.UNROLL, GatherKernel.THREADS, true, 6), 3);
  }
}
