package org.mori4j.natives.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Checks on the symbols a {@link FunctionTable} binds: that each API is looked up under the exact symbol the
 * real header maps it to (a probe's {@code symbol.<api> <symbol>} lines; {@code cuMemAlloc} must be bound to
 * {@code cuMemAlloc_v2}, or a CUDA 13 driver would run the legacy 32-bit-size entry point), and that a real
 * library exports every one of them.
 */
public final class BoundSymbols {
  private BoundSymbols() {}

  /** Every difference between the table's API-to-symbol map and the header's, one per line. */
  public static List<String> headerMismatches(Map<String, String> probe, FunctionTable table) {
    List<String> out = new ArrayList<>();
    table.symbols().forEach((api, symbol) -> {
      String header = probe.get("symbol." + api);
      if (header == null) out.add(api + ": bound (as " + symbol + ") but not printed by the probe (unchecked)");
      else if (!header.equals(symbol)) out.add(api + ": the header maps it to " + header + ", Java binds " + symbol);
    });
    probe.keySet().stream().filter(k -> k.startsWith("symbol.")).map(k -> k.substring("symbol.".length()))
        .filter(api -> !table.symbols().containsKey(api))
        .forEach(api -> out.add(api + ": the probe prints it but Java binds no such API"));
    return out;
  }

  /** The symbols {@code library} does not export, or null when it cannot be loaded. */
  public static List<String> missingFrom(String library, Collection<String> symbols) {
    try (Arena arena = Arena.ofConfined()) {
      SymbolLookup lookup = SymbolLookup.libraryLookup(library, arena);
      return symbols.stream().filter(s -> lookup.find(s).isEmpty()).toList();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
