package org.mori4j.natives.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.IntFunction;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;

/**
 * A native library whose functions fail the POSIX way, as libibverbs and librdmacm do: NULL, or -1 with
 * {@code errno} set, or an errno value returned directly, depending on the function. It binds every
 * function with errno capture so a failure can always be named, keeps the list of bound symbols for the
 * symbol-resolution tests, and turns a failed call into a {@link NativeException} carrying the library,
 * the function, the errno, its name and libc's text. {@link IbVerbs} and {@code RdmaCm} share it so both
 * bindings check and report results the same way.
 */
public final class ErrnoLibrary {
  private final String name;
  private final NativeLibrary lib;
  private final IntFunction<String> hint;
  private final List<String> bound = new ArrayList<>();
  private final List<String> optional = new ArrayList<>();

  /**
   * Opens the first of {@code candidates} that loads. {@code hint} adds context to a failure's message for
   * an errno (e.g. "no RDMA device" for {@code ENODEV}); it returns {@code ""} for nothing to add.
   */
  public ErrnoLibrary(String name, IntFunction<String> hint, String... candidates) {
    this.name = name;
    this.hint = hint;
    this.lib = NativeLibrary.open(name, candidates);
  }

  public String name() {
    return name;
  }

  public boolean available() {
    return lib.available();
  }

  /** Why the library could not be loaded (empty when it was). */
  public String absence() {
    return lib.failure();
  }

  public List<String> boundSymbols() {
    return Collections.unmodifiableList(bound);
  }

  public List<String> optionalSymbols() {
    return Collections.unmodifiableList(optional);
  }

  /** A handle taking a leading {@link Errno#captureState} segment; null when the symbol is absent. */
  public MethodHandle bind(String symbol, FunctionDescriptor fd) {
    bound.add(symbol);
    return lib.downcall(symbol, fd, Errno.CAPTURE);
  }

  /** Like {@link #bind}, for a symbol older library versions lack (the symbol tests allow its absence). */
  public MethodHandle bindOptional(String symbol, FunctionDescriptor fd) {
    optional.add(symbol);
    return bind(symbol, fd);
  }

  /** Functions that cannot fail (free, ack, name lookups) need no errno. */
  public MethodHandle bindPlain(String symbol, FunctionDescriptor fd) {
    bound.add(symbol);
    return lib.downcall(symbol, fd);
  }

  /** {@code h}, or the exception that says the library, or this symbol of it, is missing. */
  public MethodHandle handle(MethodHandle h, String symbol) {
    if (h != null) return h;
    lib.require();
    throw new NativeException(name, -1, "SYMBOL_NOT_FOUND", symbol + " is not exported by " + loadedName());
  }

  /** The file that loaded ({@code librdmacm.so.1}), or the library's name when none did. */
  public String loadedName() {
    return lib.loadedName().orElse(name);
  }

  /** Throws the library's absence as a {@link NativeException} when it did not load. */
  public void require() {
    lib.require();
  }

  /** Calls a bound function that returns a pointer, NULL meaning failure with errno set. */
  public MemorySegment pointerCall(String function, MethodHandle h, Object... args) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment errno = Errno.captureState(a);
      MemorySegment p = (MemorySegment) handle(h, function).invokeWithArguments(prepend(errno, args));
      if (p.equals(MemorySegment.NULL)) throw failure(function, Errno.read(errno));
      return p;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** Calls a bound function that returns 0, an errno value, or -1 with errno set. */
  public void intCall(String function, MethodHandle h, Object... args) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment errno = Errno.captureState(a);
      int rc = (int) handle(h, function).invokeWithArguments(prepend(errno, args));
      if (rc == 0) return;
      int e = Errno.read(errno);
      throw failure(function, rc > 0 ? rc : e != 0 ? e : rc);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** The exception for a failed call: function, errno value, its name and text, and the library's hint. */
  public NativeException failure(String function, int errno) {
    String extra = hint.apply(errno);
    return new NativeException(name, errno, Errno.name(errno), function + " failed: " + Errno.name(errno)
        + " (" + Errno.describe(errno) + ")" + (extra.isEmpty() ? "" : ": " + extra));
  }

  /** Unchecked exceptions and errors as they are; a checked one (no downcall throws any) wrapped. */
  public static RuntimeException rethrow(Throwable t) {
    if (t instanceof RuntimeException r) return r;
    if (t instanceof Error e) throw e;
    return new IllegalStateException("unexpected checked exception from a downcall", t);
  }

  private static Object[] prepend(Object first, Object[] rest) {
    Object[] all = new Object[rest.length + 1];
    all[0] = first;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }
}
