package org.mori4j.natives.rdmacm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.AbiProbe;
import org.mori4j.natives.verbs.VerbsSymbolsTest;

/** Every function {@link RdmaCm} binds is exported by the real {@code librdmacm.so.1}. */
class RdmaCmSymbolsTest {

  @Test
  void everyBoundSymbolResolvesInLibrdmacm() {
    List<String> missing = VerbsSymbolsTest.missing("librdmacm.so.1", RdmaCm.boundSymbols());
    AbiProbe.assumeAvailable(missing != null, "librdmacm.so.1 is not installed (apt-get install librdmacm-dev)");

    assertTrue(RdmaCm.boundSymbols().size() >= 18, "bound: " + RdmaCm.boundSymbols());
    assertTrue(missing.isEmpty(), "missing from librdmacm.so.1: " + missing);
    assertTrue(RdmaCm.available(), RdmaCm.absence());
  }
}
