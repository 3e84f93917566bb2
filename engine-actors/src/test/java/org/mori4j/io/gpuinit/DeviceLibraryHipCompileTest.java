package org.mori4j.io.gpuinit;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mori4j.transport.hip.HipCompiler;

/**
 * The HIP branch of {@code mori_rdma.cuh} compiles for an AMD GPU: the GPU tests' kernels
 * ({@code gpuinit_device_test.cu}, which call every device function of the library in thread, warp and block
 * scope) with the library in front, exactly as {@link GpuInitiatedKernels} assembles them, built by
 * {@link HipCompiler} at {@code -O3}. There is no AMD GPU to run them on; this is what can be checked without
 * one. Skips (saying why) where {@code hipcc} is not installed.
 */
class DeviceLibraryHipCompileTest {
  @Test
  void theTestKernelsAndTheLibraryCompileForAnAmdGpu(@TempDir Path dir) throws Exception {
    String kernels;
    try (InputStream in = getClass().getResourceAsStream("/org/mori4j/io/gpuinit/gpuinit_device_test.cu")) {
      kernels = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    HipCompiler.compile(dir, "gpuinit_device_test", GpuInitiatedKernels.withDeviceLibrary(kernels, "gpuinit_device_test.cu"), 3);
  }
}
