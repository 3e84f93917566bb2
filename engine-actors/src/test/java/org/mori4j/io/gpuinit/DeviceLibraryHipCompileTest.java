package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HIP branch of {@code mori_rdma.cuh} compiles for an AMD GPU: the GPU tests' kernels
 * ({@code gpuinit_device_test.cu}, which call every device function of the library in thread, warp and block
 * scope) with the library in front, exactly as {@link GpuInitiatedKernels} assembles them, built by {@code hipcc}
 * for {@code gfx90a} at {@code -O3}. There is no AMD GPU to run them on; this is what can be checked without one.
 * Skips (saying why) where {@code hipcc} is not installed (Debian's {@code hipcc} package, ROCm 5.2, which knows
 * CDNA2 but not yet MI300's gfx942; {@code -Dmori4j.test.hip-arch} picks another target).
 */
class DeviceLibraryHipCompileTest {
  @Test
  void theTestKernelsAndTheLibraryCompileForAnAmdGpu(@TempDir Path dir) throws Exception {
    String kernels;
    try (InputStream in = getClass().getResourceAsStream("/org/mori4j/io/gpuinit/gpuinit_device_test.cu")) {
      kernels = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    // hipcc compiles offline with the HIP headers; hiprtc (at run time) brings its own definitions instead
    String source = "#include <hip/hip_runtime.h>\n" + GpuInitiatedKernels.withDeviceLibrary(kernels, "gpuinit_device_test.cu");
    Path file = dir.resolve("gpuinit_device_test.hip");
    Files.writeString(file, source);
    String arch = System.getProperty("mori4j.test.hip-arch", "gfx90a");
    ProcessBuilder pb = new ProcessBuilder("hipcc", "--offload-arch=" + arch, "-O3", "-c", file.toString(), "-o", dir.resolve("k.o").toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("hipcc.log").toFile());
    pb.environment().put("HIP_PLATFORM", "amd"); // hipcc picks NVIDIA where it finds nvcc
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      assumeTrue(false, "no hipcc on this machine: " + e.getMessage());
      return;
    }
    boolean done = p.waitFor(240, TimeUnit.SECONDS);
    if (!done) p.destroyForcibly();
    String out = Files.readString(dir.resolve("hipcc.log"));
    assertTrue(done, "hipcc did not finish in 240 s");
    // hipcc's own link flags are reported unused with -c: only errors matter
    assertTrue(p.exitValue() == 0, "hipcc --offload-arch=" + arch + " failed (exit " + p.exitValue() + "):\n" + out);
    assertTrue(Files.size(dir.resolve("k.o")) > 0, "hipcc wrote no object");
  }
}
