package org.mori4j.natives.hip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;

/**
 * hiprtc compiles HIP C++ to an AMD code object, and a compile error carries the compiler's log: the
 * {@link org.mori4j.natives.gpu.RuntimeCompiler} NVRTC also runs on, on a second library. Needs no AMD GPU when the
 * options name the architecture (without one hiprtc asks the current device); runs wherever Debian's
 * {@code libamdhip64-dev} (ROCm 5.2, which exports {@code hiprtc*} from {@code libamdhip64.so.5}) is installed, and
 * skips elsewhere. ROCm 5.2's log size counts no terminating NUL: the log test is the check that it is still read.
 */
class HiprtcCompileTest {
  private static final String KERNEL = "extern \"C\" __global__ void fill(int* out, int value) { out[threadIdx.x] = value; }";

  @BeforeEach
  void needsHiprtc() {
    Assumptions.assumeTrue(Hiprtc.COMPILER.library().available(), "no hiprtc here: " + Hiprtc.COMPILER.library().failure());
  }

  @Test
  void aNamedArchitectureGivesACodeObject() {
    byte[] code = Hiprtc.COMPILER.compile(KERNEL, "fill.hip", "--offload-arch=gfx90a");

    assertTrue(code.length > 64, "code object of " + code.length + " bytes");
    assertEquals(0x7f, code[0]);
    assertEquals("ELF", new String(code, 1, 3, StandardCharsets.US_ASCII));
  }

  @Test
  void aCompileErrorCarriesTheLog() {
    NativeException e = assertThrows(NativeException.class,
        () -> Hiprtc.COMPILER.compile("extern \"C\" __global__ void broken() { undeclared_thing = 1; }", "broken.hip", "--offload-arch=gfx90a"));

    assertEquals(HipConstants.HIPRTC_ERROR_COMPILATION, e.code());
    assertEquals("HIPRTC_ERROR_COMPILATION", e.codeName());
    assertEquals("hiprtc", e.library());
    assertEquals("hiprtcCompileProgram", e.function());
    assertTrue(e.getMessage().contains("undeclared_thing") && e.getMessage().contains("broken.hip"), e.getMessage());
  }

  @Test
  void aBadOptionIsNamed() {
    NativeException e = assertThrows(NativeException.class, () -> Hiprtc.COMPILER.compile(KERNEL, "fill.hip", "--no-such-option"));

    assertTrue(e.getMessage().contains("--no-such-option"), e.getMessage());
  }
}
