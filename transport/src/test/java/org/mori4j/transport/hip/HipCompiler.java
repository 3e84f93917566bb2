package org.mori4j.transport.hip;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Compiles a device translation unit for an AMD GPU with {@code hipcc}, for the tests that check the HIP
 * branches of mori4j's run-time-compiled device libraries where no AMD GPU exists: an offline build of the same
 * source hiprtc would get, with the HIP headers in front (hiprtc brings its own definitions instead). Debian
 * 12's {@code hipcc} (ROCm 5.2, LLVM 15) knows CDNA2 ({@code gfx90a}) but not MI300's {@code gfx942};
 * {@code -Dmori4j.test.hip-arch} picks another target. A test that calls it skips, saying why, without hipcc,
 * or fails where {@code MORI4J_ABI_REQUIRED=1} (CI, which installs hipcc: as for the other ABI checks).
 */
public final class HipCompiler {
  private HipCompiler() {}

  /** The target the tests compile for. */
  public static String arch() {
    return System.getProperty("mori4j.test.hip-arch", "gfx90a");
  }

  /**
   * Compiles {@code source} (named {@code name} in messages) at optimisation level {@code opt} (0-3) into an
   * object in {@code dir} and returns its path; fails the test with hipcc's output when it does not compile,
   * skips it without hipcc. Level 0 checks the language and the code generation in seconds; only an optimised
   * build runs LLVM's control-flow passes (which once failed on a trap in a divergent loop), and on large
   * units such as the shmem collectives that takes minutes on a 2-core machine.
   */
  public static Path compile(Path dir, String name, String source, int opt) throws IOException, InterruptedException {
    if (opt < 0 || opt > 3) throw new IllegalArgumentException("opt must be 0..3: " + opt);
    Path object = dir.resolve(name + ".o");
    run(dir, name, source, "-O" + opt, "-c", "-o", object.toString());
    assertTrue(Files.size(object) > 0, "hipcc wrote no object for " + name);
    return object;
  }

  /**
   * Parses and type-checks {@code source} for the device ({@code -fsyntax-only}: the HIP branches' language
   * errors, no code generation), for units whose optimised build takes too long for a test: the shmem device
   * API kernels did not finish in 17 minutes at {@code -O3} on the 2-core machine, and at {@code -O0} one of them
   * needs a 254 KiB stack frame, over the target's limit.
   */
  public static void checkSyntax(Path dir, String name, String source) throws IOException, InterruptedException {
    run(dir, name, source, "-fsyntax-only");
  }

  private static void run(Path dir, String name, String source, String... flags) throws IOException, InterruptedException {
    Path file = dir.resolve(name + ".hip"), log = dir.resolve(name + ".log");
    Files.writeString(file, "#include <hip/hip_runtime.h>\n" + source);
    List<String> cmd = new ArrayList<>(List.of("hipcc", "--offload-arch=" + arch()));
    cmd.addAll(List.of(flags));
    cmd.add(file.toString());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("HIP_PLATFORM", "amd"); // hipcc picks NVIDIA where it finds nvcc
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      String why = "no hipcc on this machine: " + e.getMessage();
      assertTrue(!"1".equals(System.getenv("MORI4J_ABI_REQUIRED")), "MORI4J_ABI_REQUIRED=1 but " + why);
      assumeTrue(false, why);
      throw e;
    }
    boolean done = p.waitFor(240, TimeUnit.SECONDS);
    if (!done) {
      // hipcc is a wrapper: the compiler it started would run on
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
    assertTrue(done, "hipcc did not finish " + name + " in 240 s");
    // hipcc's own link flags are reported unused: only the exit status matters
    assertTrue(p.exitValue() == 0, String.join(" ", cmd) + " failed (exit " + p.exitValue() + "):\n" + Files.readString(log));
  }
}
