package org.mori4j.natives.cuda;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;
import org.mori4j.natives.gpu.FunctionTable;
import org.mori4j.natives.gpu.RuntimeCompiler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NVRTC, NVIDIA's run-time CUDA C++ compiler, through FFM: create a program, compile it with options, and
 * read back the cubin (for a real architecture, {@code -arch=sm_90}) or PTX (for a virtual one,
 * {@code compute_90}) plus the compile log. {@link #compile} wraps the sequence and puts the log in the
 * exception when compilation fails; that sequence is the {@link RuntimeCompiler} shared with hiprtc, and what is
 * NVRTC's own is here: its result codes, where the library is looked for, and its builtins. NVRTC needs no GPU,
 * so it also runs on build machines. The library is looked up as {@code libnvrtc.so.13}, {@code .12} and
 * unversioned on the loader path, then in the CUDA install ({@code $CUDA_HOME} or {@code /usr/local/cuda}),
 * since toolkits rarely put {@code lib64} on the loader path; {@code -Dmori4j.nvrtc.library} or
 * {@code MORI4J_NVRTC_LIBRARY} names a file explicitly.
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

  /** The program API shared with hiprtc; NVRTC reads back a cubin, or PTX when the target is a virtual architecture. */
  private static final RuntimeCompiler COMPILER = new RuntimeCompiler(FUNCTIONS, "nvrtc", NVRTC_SUCCESS,
      new RuntimeCompiler.Output("nvrtcGetCUBINSize", "nvrtcGetCUBIN"), new RuntimeCompiler.Output("nvrtcGetPTXSize", "nvrtcGetPTX"));

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
    return COMPILER.version();
  }

  /**
   * Compiles {@code source} (named {@code name} in diagnostics) with {@code options} such as
   * {@code -arch=sm_90} or {@code -default-device}. Returns the cubin when the options name a real
   * architecture, otherwise the NUL-terminated PTX; either loads with {@code cuModuleLoadData}. A compile
   * error throws a {@link NativeException} whose message holds the compile log.
   */
  public static byte[] compile(String source, String name, String... options) {
    return COMPILER.compile(source, name, options);
  }

  /** {@code nvrtcGetErrorString}: NVRTC's name for a result code (e.g. {@code NVRTC_ERROR_COMPILATION}). */
  public static String errorString(int code) {
    return COMPILER.errorString(code);
  }
}
