package org.mori4j.natives.hip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.AbiProbe;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.gpu.BoundSymbols;

/**
 * Every function the HIP and hiprtc bindings bind is exported by the real library: Debian's
 * {@code libamdhip64.so.5} (ROCm 5.2), which also exports the {@code hiprtc*} functions (ROCm 6 moved them to
 * {@code libhiprtc.so.6}). The library runs here without an AMD GPU, so its own error names are checked
 * against our constants too.
 */
class HipSymbolsTest {
  private static final String LIBRARY = "libamdhip64.so.5";

  /**
   * Bound symbols that ROCm added after 5.2 (this machine's library): they resolve on newer ROCm, and on 5.2 a
   * call fails naming the symbol (FunctionTable's missing-symbol path). hipModuleLaunchCooperativeKernel came
   * with ROCm 5.5.
   */
  private static final Set<String> NEWER_THAN_ROCM_52 = Set.of("hipModuleLaunchCooperativeKernel");

  @Test
  void everyBoundHipSymbolResolvesInLibamdhip64() {
    List<String> missing = BoundSymbols.missingFrom(LIBRARY, Hip.functions().symbols().values());
    AbiProbe.assumeAvailable(missing != null, LIBRARY + " is not installed (apt-get install libamdhip64-dev)");

    List<String> unexpected = missing.stream().filter(s -> !NEWER_THAN_ROCM_52.contains(s)).toList();
    assertTrue(unexpected.isEmpty(), "missing from " + LIBRARY + ": " + unexpected);
    assertTrue(Hip.library().available(), Hip.library().failure());
    Set<String> expected = new java.util.HashSet<>(Hip.functions().symbols().keySet());
    expected.removeAll(missing);
    assertEquals(expected, Hip.functions().resolved().keySet(), "some bindings did not resolve");
  }

  @Test
  void everyBoundHiprtcSymbolResolvesWhereRocm52PutsIt() {
    List<String> missing = BoundSymbols.missingFrom(LIBRARY, Hiprtc.COMPILER.functions().symbols().values());
    AbiProbe.assumeAvailable(missing != null, LIBRARY + " is not installed (apt-get install libamdhip64-dev)");

    assertTrue(missing.isEmpty(), "missing from " + LIBRARY + ": " + missing);
    assertTrue(Hiprtc.COMPILER.library().available(), Hiprtc.COMPILER.library().failure());
    assertEquals(Hiprtc.COMPILER.functions().symbols().keySet(), Hiprtc.COMPILER.functions().resolved().keySet(), "some bindings did not resolve");
  }

  @Test
  void theLibraryNamesEveryErrorCodeAsOurConstantsDo() throws IllegalAccessException {
    AbiProbe.assumeAvailable(Hip.library().available(), "HIP is not installed: " + Hip.library().failure());
    int checked = 0;
    for (Field f : HipConstants.class.getFields()) {
      if (!Modifier.isStatic(f.getModifiers()) || !f.getName().startsWith("hipError")) continue;
      assertEquals(f.getName(), Hip.errorName(f.getInt(null)), "hipGetErrorName(" + f.getInt(null) + ")");
      checked++;
    }
    assertTrue(checked >= 10, "checked only " + checked);
    assertEquals("HIPRTC_ERROR_COMPILATION", Hiprtc.COMPILER.errorString(HipConstants.HIPRTC_ERROR_COMPILATION));
  }

  @Test
  void withoutAnAmdGpuOpeningHipFailsWithTheReason() {
    Assumptions.assumeTrue(Hip.library().available(), "HIP is not installed: " + Hip.library().failure());
    NativeException e;
    try {
      HipRuntime.open().deviceCount();
      Assumptions.abort("this machine has a working HIP device");
      return;
    } catch (NativeException thrown) {
      e = thrown;
    }
    assertFalse(e.codeName().isBlank());
    assertTrue(e.getMessage().contains("hip"), e.getMessage());
    assertThrows(NativeException.class, HipRuntime::open, "a second attempt fails the same way");
  }
}
