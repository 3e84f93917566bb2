package org.mori4j.natives.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.mori4j.natives.cuda.CudaLayouts.HANDLE;
import static org.mori4j.natives.cuda.CudaLayouts.SIZE_T;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;
import org.mori4j.natives.gpu.FunctionTable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NVRTC, NVIDIA's run-time CUDA C++ compiler, through FFM: create a program, compile it with options, and
 * read back the cubin (for a real architecture, {@code -arch=sm_90}) or PTX (for a virtual one,
 * {@code compute_90}) plus the compile log. {@link #compile} wraps the sequence and puts the log in the
 * exception when compilation fails. NVRTC needs no GPU, so it also runs on build machines. The library is
 * looked up as {@code libnvrtc.so.13}, {@code .12} and unversioned on the loader path, then in the CUDA
 * install ({@code $CUDA_HOME} or {@code /usr/local/cuda}), since toolkits rarely put {@code lib64} on the
 * loader path; {@code -Dmori4j.nvrtc.library} or {@code MORI4J_NVRTC_LIBRARY} names a file explicitly.
 */
public final class Nvrtc {
  private Nvrtc() {}

  private static final Logger LOG = LoggerFactory.getLogger(Nvrtc.class);

  public static final int NVRTC_SUCCESS = 0;
  public static final int NVRTC_ERROR_INVALID_INPUT = 3;
  public static final int NVRTC_ERROR_INVALID_PROGRAM = 4;
  public static final int NVRTC_ERROR_INVALID_OPTION = 5;
  public static final int NVRTC_ERROR_COMPILATION = 6;

  private static final FunctionTable FUNCTIONS = new FunctionTable(NativeLibrary.open("nvrtc", candidates()));

  static {
    preloadBuiltins(FUNCTIONS.library());
  }

  private static final MethodHandle VERSION = FUNCTIONS.bind("nvrtcVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  private static final MethodHandle CREATE_PROGRAM = FUNCTIONS.bind("nvrtcCreateProgram",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
  private static final MethodHandle COMPILE_PROGRAM = FUNCTIONS.bind("nvrtcCompileProgram", FunctionDescriptor.of(JAVA_INT, HANDLE, JAVA_INT, ADDRESS));
  private static final MethodHandle DESTROY_PROGRAM = FUNCTIONS.bind("nvrtcDestroyProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  private static final MethodHandle GET_PROGRAM_LOG_SIZE = FUNCTIONS.bind("nvrtcGetProgramLogSize", FunctionDescriptor.of(JAVA_INT, HANDLE, ADDRESS));
  private static final MethodHandle GET_PROGRAM_LOG = FUNCTIONS.bind("nvrtcGetProgramLog", FunctionDescriptor.of(JAVA_INT, HANDLE, ADDRESS));
  private static final MethodHandle GET_CUBIN_SIZE = FUNCTIONS.bind("nvrtcGetCUBINSize", FunctionDescriptor.of(JAVA_INT, HANDLE, ADDRESS));
  private static final MethodHandle GET_CUBIN = FUNCTIONS.bind("nvrtcGetCUBIN", FunctionDescriptor.of(JAVA_INT, HANDLE, ADDRESS));
  private static final MethodHandle GET_PTX_SIZE = FUNCTIONS.bind("nvrtcGetPTXSize", FunctionDescriptor.of(JAVA_INT, HANDLE, ADDRESS));
  private static final MethodHandle GET_PTX = FUNCTIONS.bind("nvrtcGetPTX", FunctionDescriptor.of(JAVA_INT, HANDLE, ADDRESS));
  private static final MethodHandle GET_ERROR_STRING = FUNCTIONS.bind("nvrtcGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));

  /** The library names and paths tried, in order. */
  static String[] candidates() {
    List<String> names = new ArrayList<>();
    String explicit = System.getProperty("mori4j.nvrtc.library", System.getenv("MORI4J_NVRTC_LIBRARY"));
    if (explicit != null && !explicit.isBlank()) names.add(explicit);
    List<String> files = List.of("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so");
    names.addAll(files);
    String cudaHome = System.getenv("CUDA_HOME");
    for (String home : cudaHome == null ? List.of("/usr/local/cuda") : List.of(cudaHome, "/usr/local/cuda")) {
      for (String dir : List.of(home + "/lib64/", home + "/targets/x86_64-linux/lib/", home + "/targets/sbsa-linux/lib/")) {
        for (String file : files) names.add(dir + file);
      }
    }
    return names.toArray(String[]::new);
  }

  /**
   * NVRTC dlopens {@code libnvrtc-builtins.so.<major>.<minor>} by bare name at its first compile, which fails
   * when libnvrtc itself was found by path (a wheel or toolkit directory not on the loader path). Loading the
   * builtins from the same directory first lets the loader match that name against the copy already loaded.
   */
  private static void preloadBuiltins(NativeLibrary nvrtc) {
    String loaded = nvrtc.loadedName().orElse("");
    if (!loaded.contains("/")) return;
    Path dir = Path.of(loaded).getParent();
    try (Stream<Path> files = Files.list(dir)) {
      files.filter(p -> p.getFileName().toString().startsWith("libnvrtc-builtins.so.")).sorted().findFirst().ifPresent(p -> {
        NativeLibrary builtins = NativeLibrary.open("nvrtc-builtins", p.toString());
        if (!builtins.available()) LOG.warn("NVRTC builtins next to {} did not load: {}", loaded, builtins.failure());
      });
    } catch (IOException e) {
      LOG.warn("cannot list {} for NVRTC's builtins: {}", dir, e.toString());
    }
  }

  public static NativeLibrary library() {
    return FUNCTIONS.library();
  }

  public static FunctionTable functions() {
    return FUNCTIONS;
  }

  /** NVRTC's version as {major, minor}. */
  public static int[] version() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment major = arena.allocate(JAVA_INT);
      MemorySegment minor = arena.allocate(JAVA_INT);
      check(invoke(() -> (int) VERSION.invokeExact(major, minor)), "nvrtcVersion");
      return new int[] {major.get(JAVA_INT, 0), minor.get(JAVA_INT, 0)};
    }
  }

  /**
   * Compiles {@code source} (named {@code name} in diagnostics) with {@code options} such as
   * {@code -arch=sm_90} or {@code -default-device}. Returns the cubin when the options name a real
   * architecture, otherwise the NUL-terminated PTX; either loads with {@code cuModuleLoadData}. A compile
   * error throws a {@link NativeException} whose message holds the compile log.
   */
  public static byte[] compile(String source, String name, String... options) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment programCell = arena.allocate(HANDLE);
      check(invoke(() -> (int) CREATE_PROGRAM.invokeExact(programCell, arena.allocateFrom(source), arena.allocateFrom(name), 0,
          MemorySegment.NULL, MemorySegment.NULL)), "nvrtcCreateProgram");
      MemorySegment program = programCell.get(HANDLE, 0);
      try {
        MemorySegment optionArray = arena.allocate(ADDRESS, Math.max(options.length, 1));
        for (int i = 0; i < options.length; i++) optionArray.setAtIndex(ADDRESS, i, arena.allocateFrom(options[i]));
        int rc = invoke(() -> (int) COMPILE_PROGRAM.invokeExact(program, options.length, optionArray));
        if (rc != NVRTC_SUCCESS) {
          String errorName = errorString(rc);
          throw new NativeException("nvrtc", "nvrtcCompileProgram", rc, errorName, "nvrtcCompileProgram failed for " + name + ": " + errorName
              + " (options " + String.join(" ", options) + ")\n" + log(program));
        }
        // nvrtcGetCUBINSize fails or answers 0 when the target was a virtual architecture: fall back to PTX.
        MemorySegment size = arena.allocate(SIZE_T);
        int cubinRc = invoke(() -> (int) GET_CUBIN_SIZE.invokeExact(program, size));
        if (cubinRc == NVRTC_SUCCESS && size.get(SIZE_T, 0) > 0) {
          MemorySegment cubin = arena.allocate(size.get(SIZE_T, 0));
          check(invoke(() -> (int) GET_CUBIN.invokeExact(program, cubin)), "nvrtcGetCUBIN");
          return cubin.toArray(JAVA_BYTE);
        }
        check(invoke(() -> (int) GET_PTX_SIZE.invokeExact(program, size)), "nvrtcGetPTXSize");
        MemorySegment ptx = arena.allocate(size.get(SIZE_T, 0)); // includes the terminating NUL
        check(invoke(() -> (int) GET_PTX.invokeExact(program, ptx)), "nvrtcGetPTX");
        return ptx.toArray(JAVA_BYTE);
      } finally {
        invoke(() -> (int) DESTROY_PROGRAM.invokeExact(programCell));
      }
    }
  }

  /** {@code nvrtcGetErrorString}: NVRTC's name for a result code (e.g. {@code NVRTC_ERROR_COMPILATION}). */
  public static String errorString(int code) {
    try {
      MemorySegment text = (MemorySegment) GET_ERROR_STRING.invokeExact(code);
      return text.equals(MemorySegment.NULL) ? "nvrtcResult " + code : text.reinterpret(1024).getString(0);
    } catch (Throwable t) {
      return "nvrtcResult " + code;
    }
  }

  private static String log(MemorySegment program) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment size = arena.allocate(SIZE_T);
      if (invoke(() -> (int) GET_PROGRAM_LOG_SIZE.invokeExact(program, size)) != NVRTC_SUCCESS) return "(no compile log)";
      MemorySegment text = arena.allocate(Math.max(size.get(SIZE_T, 0), 1));
      if (invoke(() -> (int) GET_PROGRAM_LOG.invokeExact(program, text)) != NVRTC_SUCCESS) return "(no compile log)";
      return text.getString(0);
    }
  }

  private static void check(int rc, String function) {
    if (rc != NVRTC_SUCCESS) {
      String errorName = errorString(rc);
      throw new NativeException("nvrtc", function, rc, errorName, function + " failed: " + errorName);
    }
  }

  @FunctionalInterface
  private interface Call {
    int invoke() throws Throwable;
  }

  private static int invoke(Call call) {
    try {
      return call.invoke();
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
  }
}
