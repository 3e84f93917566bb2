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

  /** Runtimes registered under their own mode names ({@link #register}). */
  private static final java.util.Map<String, GpuRuntime> REGISTERED = new java.util.concurrent.ConcurrentHashMap<>();

  private static GpuRuntime cuda;
  private static GpuRuntime hip;
  private static String cudaFailure;
  private static String hipFailure;

  /**
   * Makes {@code runtime} what {@link #select} returns for {@code mode}, a name other than auto, cuda and hip:
   * a GPU runtime this library does not ship (a simulator, or the in-memory device the CPU tests use to drive
   * the engine's GPU paths end to end). Returns the runtime registered before under that name, or null.
   */
  public static GpuRuntime register(String mode, GpuRuntime runtime) {
    String m = mode == null ? "" : mode.trim().toLowerCase(Locale.ROOT);
    if (m.isEmpty() || m.equals("auto") || m.equals("cuda") || m.equals("hip"))
      throw new IllegalArgumentException("a registered GPU runtime needs its own mode name, not '" + mode + "'");
    return runtime == null ? REGISTERED.remove(m) : REGISTERED.put(m, runtime);
  }

  /** The runtime for {@code mode} ({@code auto|cuda|hip}, any case, or a name given to {@link #register}). */
  public static synchronized GpuRuntime select(String mode) {
    String m = mode == null ? "auto" : mode.trim().toLowerCase(Locale.ROOT);
    GpuRuntime registered = REGISTERED.get(m);
    if (registered != null) return registered;
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
      default -> throw new IllegalArgumentException("GPU runtime mode must be auto, cuda or hip"
          + (REGISTERED.isEmpty() ? "" : " or one of " + new java.util.TreeSet<>(REGISTERED.keySet())) + ", not '" + mode + "'");
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
