package org.mori4j.natives.verbs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.AbiProbe;

/** Every function {@link IbVerbs} binds is exported by the real {@code libibverbs.so.1}. */
public class VerbsSymbolsTest {

  /** The symbols of {@code bound} that {@code library} does not export, or null when it will not load. */
  public static List<String> missing(String library, List<String> bound) {
    try (Arena arena = Arena.ofConfined()) {
      SymbolLookup lookup = SymbolLookup.libraryLookup(library, arena);
      return bound.stream().filter(s -> lookup.find(s).isEmpty()).toList();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  @Test
  void everyBoundSymbolResolvesInLibibverbs() {
    List<String> missing = missing("libibverbs.so.1", IbVerbs.boundSymbols());
    AbiProbe.assumeAvailable(missing != null, "libibverbs.so.1 is not installed (apt-get install libibverbs-dev)");

    assertTrue(IbVerbs.boundSymbols().size() >= 27, "bound: " + IbVerbs.boundSymbols());
    assertTrue(missing.isEmpty(), "missing from libibverbs.so.1: " + missing);
    assertTrue(IbVerbs.available(), IbVerbs.absence());
  }

  @Test
  void dmabufRegistrationIsTheOnlyOptionalVerb() {
    assertTrue(IbVerbs.optionalSymbols().equals(List.of("ibv_reg_dmabuf_mr")), IbVerbs.optionalSymbols()::toString);
  }
}
