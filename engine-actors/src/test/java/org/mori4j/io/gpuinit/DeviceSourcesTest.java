package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The include-by-text assembly of the device libraries: line markers, and the packaging errors it refuses. */
class DeviceSourcesTest {

  private static Map<String, Supplier<String>> parts(String... nameText) {
    Map<String, Supplier<String>> m = new LinkedHashMap<>();
    for (int i = 0; i < nameText.length; i += 2) {
      String text = nameText[i + 1];
      m.put(nameText[i], () -> text);
    }
    return m;
  }

  @Test
  void eachPartReplacesItsIncludeBetweenMarkersThatNameTheRightLines() {
    String outer = "a1\n#include \"mori_x.cuh\"\na3\n\n  #include \"mori_y.h\" // why\na6\n";
    String text = DeviceSources.inline("outer.cuh", outer, parts("mori_x.cuh", "x1\nx2", "mori_y.h", "y1"));
    assertEquals("a1\n#line 1 \"mori_x.cuh\"\nx1\nx2\n#line 3 \"outer.cuh\"\na3\n\n#line 1 \"mori_y.h\"\ny1\n#line 6 \"outer.cuh\"\na6\n", text);
  }

  @Test
  void anUndeclaredARepeatedOrAMissingPartIsRefused() {
    IllegalStateException unknown = assertThrows(IllegalStateException.class,
        () -> DeviceSources.inline("o.cuh", "#include \"mori_z.cuh\"\n", parts("mori_x.cuh", "x")));
    assertTrue(unknown.getMessage().contains("o.cuh includes mori_z.cuh, which is not one of its parts [mori_x.cuh]"), unknown.getMessage());
    IllegalStateException twice = assertThrows(IllegalStateException.class,
        () -> DeviceSources.inline("o.cuh", "#include \"mori_x.cuh\"\n#include \"mori_x.cuh\"\n", parts("mori_x.cuh", "x")));
    assertTrue(twice.getMessage().contains("includes mori_x.cuh twice"), twice.getMessage());
    IllegalStateException missing = assertThrows(IllegalStateException.class,
        () -> DeviceSources.inline("o.cuh", "#include \"mori_x.cuh\"\n", parts("mori_x.cuh", "x", "mori_y.h", "y")));
    assertTrue(missing.getMessage().contains("includes [mori_x.cuh], not all of [mori_x.cuh, mori_y.h]"), missing.getMessage());
  }

  @Test
  void mori_rdma_cuhIsAssembledFromItsLayoutAndCompletionParts() {
    String lib = GpuInitiatedKernels.deviceLibrary();
    for (String part : new String[] {"mori_rdma_layout.h", "mori_rdma_completions.cuh"})
      assertEquals(1, lib.split("#line 1 \"" + part + "\"\n", -1).length - 1, part + " once");
    assertTrue(lib.indexOf("} MoriRdmaEndpoint;") < lib.indexOf("mori_rdma_reserve_send") && lib.indexOf("mori_rdma_reserve_send") < lib.indexOf("mori_rdma_poll_cq")
        && lib.indexOf("mori_rdma_poll_cq") < lib.indexOf("PollCq("), "layout, posts, completions, then MORI's names");
    assertTrue(!java.util.regex.Pattern.compile("(?m)^\\s*#\\s*include").matcher(lib).find(), "every include was replaced");
  }

  @Test
  void aUnitIsCompiledOncePerRuntimeArchitectureAndOptions() {
    java.util.concurrent.atomic.AtomicInteger compiles = new java.util.concurrent.atomic.AtomicInteger();
    int[] capability = {90};
    org.mori4j.natives.gpu.GpuRuntime gpu = (org.mori4j.natives.gpu.GpuRuntime) java.lang.reflect.Proxy.newProxyInstance(
        getClass().getClassLoader(), new Class<?>[] {org.mori4j.natives.gpu.GpuRuntime.class}, (proxy, method, args) -> switch (method.getName()) {
          case "name" -> "counting";
          case "computeCapability" -> capability[0];
          case "compile" -> new byte[] {(byte) compiles.incrementAndGet()};
          default -> throw new UnsupportedOperationException(method.getName());
        });
    String unit = "// unit " + System.nanoTime() + "\n";
    byte[] first = DeviceSources.compiled(gpu, 0, unit, "k.cu");
    assertEquals(first, DeviceSources.compiled(gpu, 1, unit, "k.cu"), "same unit, runtime and architecture: the cached image");
    assertEquals(1, compiles.get());
    DeviceSources.compiled(gpu, 0, unit, "k.cu", "-DX=1");
    capability[0] = 100;
    DeviceSources.compiled(gpu, 0, unit, "k.cu");
    DeviceSources.compiled(gpu, 0, unit + " ", "k.cu");
    assertEquals(4, compiles.get(), "other options, another architecture and another text each compile");
  }
}
