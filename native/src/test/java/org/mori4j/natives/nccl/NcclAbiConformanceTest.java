package org.mori4j.natives.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemoryLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.AbiProbe;
import org.mori4j.natives.gpu.BoundSymbols;
import org.mori4j.natives.verbs.LayoutConformance;

/**
 * The NCCL bindings agree with the real {@code nccl.h}: the unique id's size, the result codes, every data type
 * and reduction op value, and the symbol each bound API is looked up under. Neither the build machines nor the
 * GPU machine are sure to have the header (it comes with {@code libnccl-dev} or pip's {@code nvidia-nccl-cu*}
 * wheel), so the test looks in {@code $MORI4J_NCCL_INCLUDE}, {@code $CUDA_HOME/include}, {@code /usr/include},
 * {@code /usr/local/cuda/include} and the Python package directories, and skips, saying where it looked, when
 * none has it (even under {@code MORI4J_ABI_REQUIRED=1}: no package of these machines provides it). The header
 * includes {@code cuda_runtime.h}, found in CUDA's include directory.
 */
class NcclAbiConformanceTest {

  static Optional<Path> includeDir() {
    List<String> dirs = new ArrayList<>();
    if (System.getenv("MORI4J_NCCL_INCLUDE") != null) dirs.add(System.getenv("MORI4J_NCCL_INCLUDE"));
    if (System.getenv("CUDA_HOME") != null) dirs.add(System.getenv("CUDA_HOME") + "/include");
    dirs.addAll(List.of("/usr/include", "/usr/local/cuda/include"));
    for (String lib : Nccl.candidates()) {
      // <site-packages>/nvidia/nccl/lib/libnccl.so.2 -> <site-packages>/nvidia/nccl/include
      if (lib.endsWith("/nvidia/nccl/lib/libnccl.so.2")) dirs.add(Path.of(lib).getParent().resolveSibling("include").toString());
    }
    return dirs.stream().map(Path::of).filter(d -> Files.isRegularFile(d.resolve("nccl.h"))).findFirst();
  }

  private static String[] flags() {
    Optional<Path> dir = includeDir();
    Assumptions.assumeTrue(dir.isPresent(), "nccl.h not found (set MORI4J_NCCL_INCLUDE to the include directory of libnccl-dev or of pip's "
        + "nvidia-nccl-cu13 wheel)");
    List<String> flags = new ArrayList<>(List.of("-I" + dir.get()));
    String cuda = System.getenv("CUDA_HOME") != null ? System.getenv("CUDA_HOME") : "/usr/local/cuda";
    flags.add("-I" + cuda + "/include");
    return flags.toArray(String[]::new);
  }

  @Test
  void resultCodesAndTheUniqueIdMatchNcclH() {
    Map<String, Long> probe = AbiProbe.compileAndRun("/abi/nccl_probe.c", flags());
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);
    Map<String, Long> layoutLines = new LinkedHashMap<>(probe);
    layoutLines.keySet().removeIf(k -> k.startsWith("type.") || k.startsWith("op.") || k.startsWith("header.") || k.equals("NCCL_UNIQUE_ID_BYTES"));

    LayoutConformance conformance = new LayoutConformance(layoutLines, List.<MemoryLayout>of(Nccl.UNIQUE_ID), List.of(Nccl.class));
    List<String> mismatches = conformance.mismatches();

    assertTrue(mismatches.isEmpty(), mismatches.size() + " ABI mismatch(es) against nccl.h:\n  " + String.join("\n  ", mismatches));
    assertEquals(NcclUniqueId.BYTES, probe.get("NCCL_UNIQUE_ID_BYTES"));
    assertTrue(conformance.checked() >= 11, "the probe compared only " + conformance.checked() + " numbers");
  }

  @Test
  void everyDataTypeAndOpHasTheValueOfNcclH() {
    Map<String, Long> probe = AbiProbe.compileAndRun("/abi/nccl_probe.c", flags());
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);

    List<String> mismatches = new ArrayList<>();
    for (NcclDataType t : NcclDataType.values()) compare(mismatches, "type." + t.cName(), probe, t.value());
    for (NcclRedOp o : NcclRedOp.values()) compare(mismatches, "op." + o.cName(), probe, o.value());
    probe.keySet().stream().filter(k -> k.startsWith("type.") || k.startsWith("op.")).filter(k -> !knownInJava(k))
        .forEach(k -> mismatches.add(k + ": printed by the probe but no Java enum constant has that name"));

    assertTrue(mismatches.isEmpty(), "enum values differ from nccl.h " + probe.get("header.version") + ":\n  " + String.join("\n  ", mismatches));
  }

  @Test
  void everyApiIsBoundUnderTheSymbolNcclHDeclares() {
    Map<String, String> probe = AbiProbe.compileAndRunText("/abi/nccl_probe.c", flags());
    AbiProbe.assumeAvailable(probe != null, AbiProbe.lastFailure);

    List<String> mismatches = BoundSymbols.headerMismatches(probe, Nccl.functions());

    assertTrue(mismatches.isEmpty(), "bound symbols differ from nccl.h:\n  " + String.join("\n  ", mismatches));
  }

  private static void compare(List<String> out, String key, Map<String, Long> probe, int java) {
    Long c = probe.get(key);
    if (c == null) out.add(key + ": not printed by the probe (unchecked)");
    else if (c != java) out.add(key + ": C says " + c + ", Java says " + java);
  }

  private static boolean knownInJava(String key) {
    String name = key.substring(key.indexOf('.') + 1);
    for (NcclDataType t : NcclDataType.values()) if (t.cName().equals(name)) return true;
    for (NcclRedOp o : NcclRedOp.values()) if (o.cName().equals(name)) return true;
    return false;
  }
}
