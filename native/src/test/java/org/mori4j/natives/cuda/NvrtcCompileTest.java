package org.mori4j.natives.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;

/**
 * NVRTC compiles CUDA C to PTX and to a cubin, and a compile error carries the compiler's log. NVRTC needs
 * no GPU: this runs wherever {@code libnvrtc.so.13} can be found (the toolkit, or
 * {@code MORI4J_NVRTC_LIBRARY} pointing at the {@code nvidia-cuda-nvrtc} wheel's copy), and skips elsewhere.
 */
class NvrtcCompileTest {
  static final String KERNEL = """
      extern "C" __global__ void fill(unsigned int* out, unsigned long long n, unsigned int seed) {
        for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < n;
             i += (unsigned long long) gridDim.x * blockDim.x) {
          out[i] = (unsigned int) (i * 2654435761ull) ^ seed;
        }
      }
      """;

  @BeforeEach
  void needsNvrtc() {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
  }

  @Test
  void aVirtualArchitectureGivesPtx() {
    byte[] ptx = Nvrtc.compile(KERNEL, "fill.cu", "-arch=compute_90");
    String text = new String(ptx, StandardCharsets.US_ASCII);

    assertTrue(text.contains(".entry fill"), text);
    assertEquals(0, ptx[ptx.length - 1], "PTX is handed to cuModuleLoadData NUL-terminated");
  }

  @Test
  void aRealArchitectureGivesACubin() {
    byte[] cubin = Nvrtc.compile(KERNEL, "fill.cu", "-arch=sm_90");

    assertTrue(cubin.length > 64);
    assertEquals(0x7f, cubin[0]);
    assertEquals("ELF", new String(cubin, 1, 3, StandardCharsets.US_ASCII));
  }

  @Test
  void aCompileErrorCarriesTheLog() {
    NativeException e = assertThrows(NativeException.class,
        () -> Nvrtc.compile("extern \"C\" __global__ void broken() { undeclared_thing = 1; }", "broken.cu", "-arch=sm_90"));

    assertEquals(Nvrtc.NVRTC_ERROR_COMPILATION, e.code());
    assertEquals("NVRTC_ERROR_COMPILATION", e.codeName());
    assertEquals("nvrtcCompileProgram", e.function());
    assertTrue(e.getMessage().contains("undeclared_thing") && e.getMessage().contains("broken.cu"), e.getMessage());
  }

  @Test
  void aBadOptionIsNamed() {
    NativeException e = assertThrows(NativeException.class, () -> Nvrtc.compile(KERNEL, "fill.cu", "--no-such-option"));

    assertEquals(Nvrtc.NVRTC_ERROR_INVALID_OPTION, e.code());
    assertTrue(e.getMessage().contains("--no-such-option"), e.getMessage());
  }
}
