package org.mori4j.natives.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.gpu.BoundSymbols;

/**
 * How the NCCL binding finds its library and fails without it, the unique id's encoding and the argument checks
 * made before NCCL is called: no GPU needed. Where the library is present (the GPU machine, or
 * {@code MORI4J_NCCL_LIB} pointing at pip's wheel), every bound symbol must resolve in it and its error strings
 * must exist; that NCCL's enum values are the binding's is {@link NcclAbiConformanceTest}'s (header) and
 * {@code NcclGpuTest}'s (a real all-reduce).
 */
class NcclLibraryTest {

  @Test
  void theExplicitFileComesFirstThenTheLoaderPathThenCudaThenPythonPackages() {
    List<String> c = Nccl.candidates("/opt/x/libnccl.so.2", "/cuda", List.of(Path.of("/py/site-packages")));

    assertEquals("/opt/x/libnccl.so.2", c.get(0));
    assertEquals("libnccl.so.2", c.get(1));
    assertTrue(c.indexOf("/usr/lib/x86_64-linux-gnu/libnccl.so.2") > 1, c.toString());
    assertTrue(c.indexOf("/cuda/lib64/libnccl.so.2") > c.indexOf("/usr/lib/x86_64-linux-gnu/libnccl.so.2"), c.toString());
    assertTrue(c.indexOf("/usr/local/cuda/lib64/libnccl.so.2") > c.indexOf("/cuda/lib64/libnccl.so.2"), c.toString());
    assertEquals("/py/site-packages/nvidia/nccl/lib/libnccl.so.2", c.get(c.size() - 1));
  }

  @Test
  void withoutAnExplicitFileTheSearchStartsOnTheLoaderPath() {
    List<String> c = Nccl.candidates(null, null, List.of());

    assertEquals("libnccl.so.2", c.get(0));
    assertTrue(c.contains("/usr/local/cuda/lib64/libnccl.so.2"), c.toString());
  }

  @Test
  void aMissingLibraryFailsTheFirstCallNamingWhatWasTriedAndTheVariable() {
    Assumptions.assumeFalse(Nccl.library().available(), "NCCL is installed here (" + Nccl.library().loadedName().orElse("") + ")");

    NativeException e = assertThrows(NativeException.class, Nccl::version);

    assertEquals("LIBRARY_NOT_FOUND", e.codeName());
    assertTrue(e.getMessage().contains("libnccl.so.2") && e.getMessage().contains(Nccl.LIBRARY_ENV), e.getMessage());
    assertThrows(NativeException.class, Nccl::uniqueId);
    assertThrows(NativeException.class, () -> NcclCommunicator.initRank(0, 2, 0, NcclUniqueId.of(new byte[128])));
    assertEquals("ncclResult_t 4", Nccl.errorString(4), "without the library the code is named by number");
  }

  @Test
  void everyBoundSymbolResolvesInTheLibraryAndItNamesItsErrors() {
    Assumptions.assumeTrue(Nccl.library().available(), "no NCCL here: " + Nccl.library().failure());
    String name = Nccl.library().loadedName().orElseThrow();
    List<String> missing = BoundSymbols.missingFrom(name, Nccl.functions().symbols().values());

    assertTrue(missing.isEmpty(), "missing from " + name + ": " + missing);
    assertTrue(Nccl.version() >= 21800, "NCCL " + Nccl.versionString() + " is older than 2.18");
    assertTrue(Nccl.errorString(Nccl.ncclInvalidArgument).toLowerCase().contains("invalid argument"), Nccl.errorString(Nccl.ncclInvalidArgument));
  }

  @Test
  void resultCodesAreNamedAsInNcclH() {
    assertEquals("ncclSuccess", Nccl.resultName(0));
    assertEquals("ncclInvalidUsage", Nccl.resultName(Nccl.ncclInvalidUsage));
    assertEquals("ncclInProgress", Nccl.resultName(7));
    assertEquals("ncclResult_t 42", Nccl.resultName(42));
  }

  @Test
  void aUniqueIdIsExactly128BytesAndSurvivesItsHexForm() {
    byte[] raw = new byte[128];
    for (int i = 0; i < raw.length; i++) raw[i] = (byte) (i * 7 + 3);
    NcclUniqueId id = NcclUniqueId.of(raw);
    raw[0] = 0;

    assertEquals(3, id.bytes()[0], "the id copies its bytes");
    assertEquals(id, NcclUniqueId.fromHex(id.toHex()));
    assertArrayEquals(id.bytes(), NcclUniqueId.fromHex(id.toHex()).bytes());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NcclUniqueId.of(new byte[127])).getMessage().contains("127"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NcclUniqueId.fromHex("abc")).getMessage().contains("256 hex digits"));
    assertThrows(IllegalArgumentException.class, () -> NcclUniqueId.fromHex("zz".repeat(128)));
  }

  @Test
  void badRanksAndDevicesAreRefusedBeforeNcclIsCalled() {
    NcclUniqueId id = NcclUniqueId.of(new byte[128]);

    assertTrue(assertThrows(IllegalArgumentException.class, () -> NcclCommunicator.initRank(0, 0, 0, id)).getMessage().contains("nRanks"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NcclCommunicator.initRank(0, 2, 2, id)).getMessage().contains("rank must be in [0, 2): 2"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NcclCommunicator.initRank(0, 2, -1, id)).getMessage().contains("-1"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> NcclCommunicator.initAll(0, 0)).getMessage().contains("one GPU per rank"));
    assertThrows(IllegalArgumentException.class, () -> NcclCommunicator.initAll());
  }
}
