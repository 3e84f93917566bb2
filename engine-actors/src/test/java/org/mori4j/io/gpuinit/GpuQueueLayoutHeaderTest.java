package org.mori4j.io.gpuinit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The device library's structs and constants are {@link GpuQueueLayout}'s, byte for byte: the plain-C part of
 * {@code mori_rdma.cuh} (between its "layout begin" and "layout end" markers) is compiled by gcc into a probe that
 * prints every offset, size, alignment and constant under {@link GpuQueueLayout#cNames()}'s C spelling, and each
 * printed value must equal the Java one. Skips (saying why) where there is no gcc.
 */
class GpuQueueLayoutHeaderTest {

  static String layoutPart(String header) {
    int begin = header.indexOf("// ---- layout begin");
    int end = header.indexOf("// ---- layout end ----");
    assertTrue(begin >= 0 && end > begin, "mori_rdma.cuh has no 'layout begin' ... 'layout end' section");
    return header.substring(header.indexOf('\n', begin) + 1, end);
  }

  @Test
  void theHeadersStructsAndConstantsAreGpuQueueLayoutsAsGccSeesThem() throws Exception {
    Map<String, Long> expected = GpuQueueLayout.cNames();
    StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <stddef.h>\n#include <stdalign.h>\n")
        .append(layoutPart(GpuInitiatedKernels.deviceLibrary()))
        .append("\nint main(void) {\n");
    for (String expr : expected.keySet())
      c.append("  printf(\"%s=%lld\\n\", \"").append(expr).append("\", (long long) (").append(expr).append("));\n");
    c.append("  return 0;\n}\n");
    Path dir = Files.createTempDirectory("m4j-rdma-layout");
    try {
      Files.writeString(dir.resolve("probe.c"), c);
      Process cc;
      try {
        cc = new ProcessBuilder("gcc", "-std=c11", "-Wall", "-Werror", "-o", dir.resolve("probe").toString(), dir.resolve("probe.c").toString())
            .redirectErrorStream(true).start();
      } catch (IOException e) {
        assumeTrue(false, "no gcc on this machine: " + e.getMessage());
        return;
      }
      String log = new String(cc.getInputStream().readAllBytes());
      assertTrue(cc.waitFor(60, TimeUnit.SECONDS), "gcc did not finish in 60 s");
      assertEquals(0, cc.exitValue(), "the header's layout part does not compile as C:\n" + log);
      Process run = new ProcessBuilder(dir.resolve("probe").toString()).redirectErrorStream(true).start();
      String out = new String(run.getInputStream().readAllBytes());
      assertTrue(run.waitFor(10, TimeUnit.SECONDS));
      Map<String, Long> seen = new LinkedHashMap<>();
      for (String line : out.split("\n")) {
        int eq = line.lastIndexOf('=');
        seen.put(line.substring(0, eq), Long.parseLong(line.substring(eq + 1)));
      }
      assertEquals(expected.keySet(), seen.keySet(), out);
      for (var e : expected.entrySet()) assertEquals(e.getValue(), seen.get(e.getKey()), e.getKey());
    } finally {
      try (var files = Files.list(dir)) {
        for (Path p : files.toList()) Files.deleteIfExists(p);
      }
      Files.deleteIfExists(dir);
    }
  }
}
