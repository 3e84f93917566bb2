package org.mori4j.natives.gpu;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.function.IntFunction;
import org.mori4j.natives.NativeException;

/**
 * Checked calls into one C API whose functions return a status code ({@code CUresult}, {@code hipError_t},
 * {@code nvrtcResult}, {@code hiprtcResult}), written once for all of them: a code other than success becomes a
 * {@link NativeException} carrying the library, the function, the code and the API's own name for it, with the
 * message {@code "<function> failed: <name> (<description>)"} (the description where the API has a text for it,
 * as the CUDA driver and HIP do). Each binding class holds one of these made from its library's tag, its success
 * code and its two naming functions; out-parameter cells are allocated, passed and read here too. The data path
 * calls {@code invokeExact} itself and hands the code to {@link #check}, so it allocates nothing; the lambdas of
 * {@link #call} and the out-cell helpers are for set-up and queries.
 */
public final class StatusCalls {
  /** A native call returning a status code, written as a lambda around {@code invokeExact}. */
  @FunctionalInterface
  public interface Call {
    int invoke() throws Throwable;
  }

  /** A native call with one out-parameter cell. */
  @FunctionalInterface
  public interface OutCall {
    int invoke(MemorySegment out) throws Throwable;
  }

  /** Bytes a returned C string is read within: the names and texts are one line, far shorter. */
  private static final long TEXT_LIMIT = 4096;

  private final String library;
  private final int success;
  private final IntFunction<String> name;
  private final IntFunction<String> description;

  /**
   * {@code library} is the tag failures carry ({@code "cuda"}); {@code name} names a code (it never throws: a code
   * the library cannot name gets a fallback such as {@code "CUresult 999"}); {@code description} is the API's
   * one-line text for a code, or null where the name is all it has (NVRTC, hiprtc).
   */
  public StatusCalls(String library, int success, IntFunction<String> name, IntFunction<String> description) {
    this.library = library;
    this.success = success;
    this.name = name;
    this.description = description;
  }

  public String library() {
    return library;
  }

  /** Throws the {@link NativeException} for a failed {@code function}, or returns when {@code rc} is success. */
  public void check(int rc, String function) {
    if (rc != success) throw failure(rc, function);
  }

  public NativeException failure(int rc, String function) {
    String codeName = name.apply(rc);
    String message = function + " failed: " + codeName + (description == null ? "" : " (" + description.apply(rc) + ")");
    return new NativeException(library, function, rc, codeName, message);
  }

  /** Runs {@code call} and checks its code. */
  public void call(String function, Call call) {
    check(invoke(call), function);
  }

  /** Runs {@code call} and returns its raw code, for callers that treat some codes as answers (not ready, already enabled). */
  public int invoke(Call call) {
    try {
      return call.invoke();
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
  }

  public int outInt(String function, OutCall call) {
    try (Arena arena = Arena.ofConfined()) {
      return filled(arena, JAVA_INT, function, call).get(JAVA_INT, 0);
    }
  }

  /** For 64-bit out values: sizes, and device pointers (a {@code CUdeviceptr}, or a {@code void*} HIP hands back). */
  public long outLong(String function, OutCall call) {
    try (Arena arena = Arena.ofConfined()) {
      return filled(arena, JAVA_LONG, function, call).get(JAVA_LONG, 0);
    }
  }

  /** For an opaque handle (a stream, an event, a module, a context) or a host pointer. */
  public MemorySegment outHandle(String function, OutCall call) {
    try (Arena arena = Arena.ofConfined()) {
      return filled(arena, ADDRESS, function, call).get(ADDRESS, 0);
    }
  }

  public float outFloat(String function, OutCall call) {
    try (Arena arena = Arena.ofConfined()) {
      return filled(arena, JAVA_FLOAT, function, call).get(JAVA_FLOAT, 0);
    }
  }

  /** A cell of {@code layout} from {@code arena}, after {@code call} has written it and its code was checked. */
  private MemorySegment filled(Arena arena, MemoryLayout layout, String function, OutCall call) {
    MemorySegment out = arena.allocate(layout);
    int rc;
    try {
      rc = call.invoke(out);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    check(rc, function);
    return out;
  }

  /**
   * The string a naming function that returns {@code const char*} ({@code hipGetErrorName}, {@code nvrtcGetErrorString})
   * gives for {@code code}, or {@code fallback + " " + code} when it returns NULL or cannot be called (the library
   * is missing): naming a code must never throw, since it runs while reporting another failure.
   */
  public static String text(MethodHandle namingFunction, int code, String fallback) {
    try {
      MemorySegment text = (MemorySegment) namingFunction.invokeExact(code);
      return text.equals(MemorySegment.NULL) ? fallback + " " + code : text.reinterpret(TEXT_LIMIT).getString(0);
    } catch (Throwable t) {
      return fallback + " " + code;
    }
  }
}
