package org.mori4j.natives.hip;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.mori4j.natives.hip.HipLayouts.POINTER;
import static org.mori4j.natives.hip.HipLayouts.SIZE_T;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;
import org.mori4j.natives.gpu.FunctionTable;

/**
 * hiprtc, AMD's run-time HIP C++ compiler, through FFM: create a program, compile it, read back the code
 * object ({@code hiprtcGetCode}) that {@code hipModuleLoadData} loads, with the compile log in the exception
 * when compilation fails. Where it lives depends on the ROCm release: ROCm 6 ships it as
 * {@code libhiprtc.so.6}; ROCm 5.2 (Debian 12's {@code libamdhip64-5}) exports the {@code hiprtc*} symbols
 * from {@code libamdhip64.so.5} itself, so that is tried last.
 */
public final class Hiprtc {
  private Hiprtc() {}

  private static final FunctionTable FUNCTIONS = new FunctionTable(
      NativeLibrary.open("hiprtc", "libhiprtc.so.6", "libhiprtc.so", "libamdhip64.so.5", "libamdhip64.so"));

  private static final MethodHandle VERSION = FUNCTIONS.bind("hiprtcVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  private static final MethodHandle CREATE_PROGRAM = FUNCTIONS.bind("hiprtcCreateProgram",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
  private static final MethodHandle COMPILE_PROGRAM = FUNCTIONS.bind("hiprtcCompileProgram",
      FunctionDescriptor.of(JAVA_INT, POINTER, JAVA_INT, ADDRESS));
  private static final MethodHandle DESTROY_PROGRAM = FUNCTIONS.bind("hiprtcDestroyProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  private static final MethodHandle GET_PROGRAM_LOG_SIZE = FUNCTIONS.bind("hiprtcGetProgramLogSize",
      FunctionDescriptor.of(JAVA_INT, POINTER, ADDRESS));
  private static final MethodHandle GET_PROGRAM_LOG = FUNCTIONS.bind("hiprtcGetProgramLog", FunctionDescriptor.of(JAVA_INT, POINTER, ADDRESS));
  private static final MethodHandle GET_CODE_SIZE = FUNCTIONS.bind("hiprtcGetCodeSize", FunctionDescriptor.of(JAVA_INT, POINTER, ADDRESS));
  private static final MethodHandle GET_CODE = FUNCTIONS.bind("hiprtcGetCode", FunctionDescriptor.of(JAVA_INT, POINTER, ADDRESS));
  private static final MethodHandle GET_ERROR_STRING = FUNCTIONS.bind("hiprtcGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));

  public static NativeLibrary library() {
    return FUNCTIONS.library();
  }

  /** Every bound API and the symbol bound for it (for the ABI tests). */
  public static FunctionTable functions() {
    return FUNCTIONS;
  }

  /** hiprtc's version as {major, minor}. */
  public static int[] version() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment major = arena.allocate(JAVA_INT);
      MemorySegment minor = arena.allocate(JAVA_INT);
      check(invoke(() -> (int) VERSION.invokeExact(major, minor)), "hiprtcVersion");
      return new int[] {major.get(JAVA_INT, 0), minor.get(JAVA_INT, 0)};
    }
  }

  /**
   * Compiles {@code source} (named {@code name} in diagnostics) with {@code options} such as
   * {@code --offload-arch=gfx942}; without an architecture hiprtc targets the calling thread's current
   * device. Returns the code object. A compile error throws a {@link NativeException} holding the log.
   */
  public static byte[] compile(String source, String name, String... options) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment programCell = arena.allocate(POINTER);
      check(invoke(() -> (int) CREATE_PROGRAM.invokeExact(programCell, arena.allocateFrom(source), arena.allocateFrom(name), 0,
          MemorySegment.NULL, MemorySegment.NULL)), "hiprtcCreateProgram");
      MemorySegment program = programCell.get(POINTER, 0);
      try {
        MemorySegment optionArray = arena.allocate(ADDRESS, Math.max(options.length, 1));
        for (int i = 0; i < options.length; i++) optionArray.setAtIndex(ADDRESS, i, arena.allocateFrom(options[i]));
        int rc = invoke(() -> (int) COMPILE_PROGRAM.invokeExact(program, options.length, optionArray));
        if (rc != HipConstants.HIPRTC_SUCCESS) {
          String errorName = errorString(rc);
          throw new NativeException("hiprtc", "hiprtcCompileProgram", rc, errorName, "hiprtcCompileProgram failed for " + name + ": " + errorName
              + " (options " + String.join(" ", options) + ")\n" + log(program));
        }
        MemorySegment size = arena.allocate(SIZE_T);
        check(invoke(() -> (int) GET_CODE_SIZE.invokeExact(program, size)), "hiprtcGetCodeSize");
        MemorySegment code = arena.allocate(Math.max(size.get(SIZE_T, 0), 1));
        check(invoke(() -> (int) GET_CODE.invokeExact(program, code)), "hiprtcGetCode");
        return code.asSlice(0, size.get(SIZE_T, 0)).toArray(JAVA_BYTE);
      } finally {
        invoke(() -> (int) DESTROY_PROGRAM.invokeExact(programCell));
      }
    }
  }

  /** {@code hiprtcGetErrorString}: hiprtc's name for a result code. */
  public static String errorString(int code) {
    try {
      MemorySegment text = (MemorySegment) GET_ERROR_STRING.invokeExact(code);
      return text.equals(MemorySegment.NULL) ? "hiprtcResult " + code : text.reinterpret(1024).getString(0);
    } catch (Throwable t) {
      return "hiprtcResult " + code;
    }
  }

  private static String log(MemorySegment program) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment size = arena.allocate(SIZE_T);
      if (invoke(() -> (int) GET_PROGRAM_LOG_SIZE.invokeExact(program, size)) != HipConstants.HIPRTC_SUCCESS) return "(no compile log)";
      MemorySegment text = arena.allocate(Math.max(size.get(SIZE_T, 0), 1));
      if (invoke(() -> (int) GET_PROGRAM_LOG.invokeExact(program, text)) != HipConstants.HIPRTC_SUCCESS) return "(no compile log)";
      return text.getString(0);
    }
  }

  private static void check(int rc, String function) {
    if (rc != HipConstants.HIPRTC_SUCCESS) {
      String errorName = errorString(rc);
      throw new NativeException("hiprtc", function, rc, errorName, function + " failed: " + errorName);
    }
  }

  private static int invoke(Hip.Call call) {
    return Hip.invoke(call);
  }
}
