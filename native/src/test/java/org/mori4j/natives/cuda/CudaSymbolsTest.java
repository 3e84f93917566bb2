package org.mori4j.natives.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.gpu.BoundSymbols;

/**
 * Every function the CUDA driver and NVRTC bindings bind is exported by the real libraries, where they are
 * installed: {@code libcuda.so.1} comes with the NVIDIA driver (GPU machines only), {@code libnvrtc.so.13}
 * with the toolkit or the {@code nvidia-cuda-nvrtc} wheel (point {@code MORI4J_NVRTC_LIBRARY} at it). Skipped,
 * saying which library is absent, elsewhere; which symbols they must be is checked against the headers by
 * {@link CudaAbiConformanceTest} on every machine.
 */
class CudaSymbolsTest {

  @Test
  void everyBoundSymbolResolvesInLibcuda() {
    Assumptions.assumeTrue(CudaDriver.library().available(), "no CUDA driver here: " + CudaDriver.library().failure());
    String name = CudaDriver.library().loadedName().orElseThrow();
    List<String> missing = BoundSymbols.missingFrom(name, CudaDriver.functions().symbols().values());

    assertTrue(missing.isEmpty(), "missing from " + name + ": " + missing);
    assertEquals(CudaDriver.functions().symbols(), CudaDriver.functions().resolved(), "a binding fell back to an older symbol");
  }

  @Test
  void theDriverNamesEveryErrorCodeAsOurConstantsDo() throws IllegalAccessException {
    Assumptions.assumeTrue(CudaDriver.library().available(), "no CUDA driver here: " + CudaDriver.library().failure());
    for (Field f : CudaConstants.class.getFields()) {
      if (!Modifier.isStatic(f.getModifiers()) || !f.getName().startsWith("CUDA_")) continue;
      assertEquals(f.getName(), CudaDriver.errorName(f.getInt(null)), "cuGetErrorName(" + f.getInt(null) + ")");
    }
  }

  @Test
  void everyBoundSymbolResolvesInLibnvrtc() {
    Assumptions.assumeTrue(Nvrtc.library().available(), "no NVRTC here: " + Nvrtc.library().failure());
    String name = Nvrtc.library().loadedName().orElseThrow();
    List<String> missing = BoundSymbols.missingFrom(name, Nvrtc.functions().symbols().values());

    assertTrue(missing.isEmpty(), "missing from " + name + ": " + missing);
    for (String code : List.of("NVRTC_SUCCESS", "NVRTC_ERROR_INVALID_INPUT", "NVRTC_ERROR_INVALID_PROGRAM", "NVRTC_ERROR_INVALID_OPTION",
        "NVRTC_ERROR_COMPILATION")) {
      try {
        assertEquals(code, Nvrtc.errorString(Nvrtc.class.getField(code).getInt(null)));
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
    }
  }
}
