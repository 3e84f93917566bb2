package org.mori4j.natives.gpu;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;

/**
 * The functions one binding class takes from one native library: each API name (as C code spells it), the
 * exported symbol it is bound to (the header may map {@code cuMemAlloc} to {@code cuMemAlloc_v2}), and the
 * downcall handle. It is the single record of what a binding uses, so the ABI tests can check every bound
 * symbol against the header's macros and the real library. A missing library or symbol never fails at class
 * initialisation: its handle throws a {@link NativeException} naming what was tried when it is first called,
 * so a machine without a GPU can load every class and fail with one clear message instead.
 */
public final class FunctionTable {
  private static final MethodHandle MISSING;

  static {
    try {
      MISSING = MethodHandles.lookup().findStatic(FunctionTable.class, "missing",
          MethodType.methodType(Object.class, FunctionTable.class, String.class));
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final NativeLibrary library;
  private final Map<String, String> symbols = new LinkedHashMap<>();
  private final Map<String, String> resolved = new LinkedHashMap<>();

  public FunctionTable(NativeLibrary library) {
    this.library = library;
  }

  public NativeLibrary library() {
    return library;
  }

  /** Binds {@code api} under its own name (the header has no macro for it). */
  public MethodHandle bind(String api, FunctionDescriptor fd) {
    return bind(api, api, fd);
  }

  /**
   * Binds {@code api} to {@code symbol}, the name its header macro maps it to; {@code fallbacks} are older
   * exported names with the same signature, tried when a driver predates {@code symbol}.
   */
  public MethodHandle bind(String api, String symbol, FunctionDescriptor fd, String... fallbacks) {
    symbols.put(api, symbol);
    Optional<MemorySegment> address = library.find(symbol);
    String used = symbol;
    for (int i = 0; address.isEmpty() && i < fallbacks.length; i++) {
      address = library.find(fallbacks[i]);
      used = fallbacks[i];
    }
    if (address.isPresent()) {
      resolved.put(api, used);
      return NativeLibrary.downcall(address.get(), fd);
    }
    MethodType type = fd.toMethodType();
    MethodHandle thrower = MethodHandles.insertArguments(MISSING, 0, this, symbol).asType(MethodType.methodType(type.returnType()));
    return MethodHandles.dropArguments(thrower, 0, type.parameterList());
  }

  /** API name to the symbol its header maps it to, in binding order. */
  public Map<String, String> symbols() {
    return Collections.unmodifiableMap(symbols);
  }

  /** API name to the symbol actually found in the loaded library (a fallback where the header's was absent). */
  public Map<String, String> resolved() {
    return Collections.unmodifiableMap(resolved);
  }

  /** Rethrows what a downcall threw: unchecked as is, anything else wrapped (downcalls declare Throwable). */
  public static RuntimeException rethrow(Throwable t) {
    if (t instanceof RuntimeException r) return r;
    if (t instanceof Error e) throw e;
    return new IllegalStateException("unexpected checked exception from a downcall", t);
  }

  @SuppressWarnings("unused") // called through MISSING
  private static Object missing(FunctionTable table, String symbol) {
    table.library.require();
    throw new NativeException(table.library.what(), symbol, -1, "SYMBOL_NOT_FOUND",
        symbol + " is not exported by " + table.library.loadedName().orElse(table.library.what())
            + " (the library is older than the API this binding needs)");
  }
}
