package org.mori4j.shmem;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.shmem.collectives.ShmemCollectives;
import org.mori4j.transport.hip.HipCompiler;

/**
 * The HIP branch of the shmem device library (with {@code mori_rdma.cuh} inlined, as {@link ShmemKernels}
 * assembles it) compiles for an AMD GPU under {@code hipcc}: the collectives and the device API test kernels,
 * which between them call every device function over both paths (direct and endpoints). The collectives are
 * built at {@code -O0} (an optimised build takes 3-4 minutes on the 2-core CI machine; it was built once at
 * {@code -O3} by hand, 2026-11-24), the device API kernels only parsed and type-checked (see
 * {@link HipCompiler#checkSyntax}); the protocol's loops, where LLVM's control-flow passes once failed, are
 * built optimised by engine-actors' {@code DeviceLibraryHipCompileTest}. No AMD GPU runs them here. Skips
 * (saying why) where {@code hipcc} is not installed.
 */
class ShmemHipCompileTest {
  @Test
  void theCollectivesCompileForAnAmdGpu(@TempDir Path dir) throws Exception {
    HipCompiler.compile(dir, "collectives", ShmemKernels.withDeviceLibrary(ShmemCollectives.source(), "collectives.cu"), 0);
  }

  @Test
  void theDeviceApiTestKernelsTypeCheckForAnAmdGpu(@TempDir Path dir) throws Exception {
    HipCompiler.checkSyntax(dir, "device_api_test", ShmemKernels.withDeviceLibrary(DeviceApiScenario.source(), "device_api_test.cu"));
  }
}
