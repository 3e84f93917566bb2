package org.mori4j.natives.gpu;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.mori4j.natives.cuda.CudaRuntime;
import org.mori4j.natives.hip.HipRuntime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Picks the GPU runtime for a configured mode: {@code cuda}, {@code hip}, or {@code auto} (CUDA first, then
 * HIP). Never throws for an absent runtime: when none can be opened it returns a stand-in whose every GPU
 * call fails with one message naming each runtime tried and why it failed (library not found, with the
 * loader's words, or the init call's error), so that "GPU memory is not supported here" is said once, the
 * same way, wherever the engine first needs a GPU. Opened runtimes are shared per process, as the driver's
 * primary contexts are.
 */
public final class GpuRuntimes {
  private static final Logger LOG = LoggerFactory.getLogger(GpuRuntimes.class);

  private GpuRuntimes() {}

  private static GpuRuntime cuda;
  private static GpuRuntime hip;
  private static String cudaFailure;
  private static String hipFailure;

  /** The runtime for {@code mode} ({@code auto|cuda|hip}, any case). */
  public static synchronized GpuRuntime select(String mode) {
    String m = mode == null ? "auto" : mode.trim().toLowerCase(Locale.ROOT);
    List<String> failures = new ArrayList<>();
    switch (m) {
      case "cuda" -> {
        if (openCuda() != null) return cuda;
        failures.add("CUDA: " + cudaFailure);
      }
      case "hip" -> {
        if (openHip() != null) return hip;
        failures.add("HIP: " + hipFailure);
      }
      case "auto" -> {
        if (openCuda() != null) return cuda;
        failures.add("CUDA: " + cudaFailure);
        if (openHip() != null) return hip;
        failures.add("HIP: " + hipFailure);
      }
      default -> throw new IllegalArgumentException("GPU runtime mode must be auto, cuda or hip, not '" + mode + "'");
    }
    String reason = "no GPU runtime available (mode " + m + "); tried " + String.join("; ", failures);
    LOG.info("{}", reason);
    return new UnavailableGpuRuntime(reason);
  }

  private static GpuRuntime openCuda() {
    if (cuda == null && cudaFailure == null) cudaFailure = attempt(CudaRuntime::open, r -> cuda = r);
    return cuda;
  }

  private static GpuRuntime openHip() {
    if (hip == null && hipFailure == null) hipFailure = attempt(HipRuntime::open, r -> hip = r);
    return hip;
  }

  private static String attempt(Supplier<GpuRuntime> open, java.util.function.Consumer<GpuRuntime> keep) {
    try {
      GpuRuntime runtime = open.get();
      keep.accept(runtime);
      LOG.info("GPU runtime {} opened: {} device(s), {}", runtime.name(), runtime.deviceCount(), runtime.version());
      return null;
    } catch (RuntimeException | LinkageError e) {
      return e.getMessage() == null ? e.toString() : e.getMessage();
    }
  }
}
