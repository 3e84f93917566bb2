package org.mori4j.natives;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A native library opened by name from a list of candidates (the first that loads wins), with lookups of
 * its functions as downcall handles. A library that is absent is not an error until a function of it is
 * used: {@link #require()} then says which names were tried and why each failed.
 */
public final class NativeLibrary {
  private static final Linker LINKER = Linker.nativeLinker();

  private final String what;
  private final SymbolLookup lookup;
  private final String loadedName;
  private final String failure;

  private NativeLibrary(String what, SymbolLookup lookup, String loadedName, String failure) {
    this.what = what;
    this.lookup = lookup;
    this.loadedName = loadedName;
    this.failure = failure;
  }

  /** Tries each candidate file name (e.g. {@code libcuda.so.1}) in order; never throws. */
  public static NativeLibrary open(String what, String... candidates) {
    List<String> errors = new ArrayList<>();
    for (String c : candidates) {
      try {
        return new NativeLibrary(what, SymbolLookup.libraryLookup(c, Arena.global()), c, null);
      } catch (IllegalArgumentException e) {
        errors.add(c + ": " + e.getMessage());
      }
    }
    return new NativeLibrary(what, null, null, "tried " + String.join("; ", errors));
  }

  public boolean available() {
    return lookup != null;
  }

  /** The file name that loaded, if any. */
  public Optional<String> loadedName() {
    return Optional.ofNullable(loadedName);
  }

  /** Why the library could not be opened (empty when it was). */
  public String failure() {
    return failure == null ? "" : failure;
  }

  /** Throws a {@link NativeException} naming the library and what was tried when it is absent. */
  public NativeLibrary require() {
    if (lookup == null) throw new NativeException(what, -1, "LIBRARY_NOT_FOUND", what + " is not available: " + failure);
    return this;
  }

  /** The address of {@code symbol}, if the library has it. */
  public Optional<MemorySegment> find(String symbol) {
    return lookup == null ? Optional.empty() : lookup.find(symbol);
  }

  /**
   * A downcall handle for {@code symbol}, or null when the library or the symbol is absent (callers that
   * need it go through {@link #require()} and {@link NativeException}).
   */
  public MethodHandle downcall(String symbol, FunctionDescriptor fd, Linker.Option... options) {
    return find(symbol).map(a -> LINKER.downcallHandle(a, fd, options)).orElse(null);
  }

  /** A downcall handle for a function pointer (e.g. from an ops table). */
  public static MethodHandle downcall(MemorySegment address, FunctionDescriptor fd) {
    return LINKER.downcallHandle(address, fd);
  }

  public String what() {
    return what;
  }
}
