package org.mori4j.bench;

import com.typesafe.config.ConfigFactory;
import java.util.Locale;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * The GPU runtime of {@code bench} and {@code serve} and the checks on their GPU flags. It is the runtime the
 * engine itself uses ({@code mori4j.gpu.runtime}, env {@code MORI_IO_GPU_RUNTIME}; runtimes are shared per
 * process), so the buffers the command allocates are the ones the engine's registration check accepts. The
 * checks run before anything is started so that a machine without a GPU, or a device id it does not have,
 * is said once, clearly, instead of as a failed registration in a child process.
 */
final class BenchGpu {
  private BenchGpu() {}

  /** The configured mode: auto, cuda or hip. */
  static String mode() {
    return ConfigFactory.load().getString("mori4j.gpu.runtime");
  }

  /** The runtime for the configured mode; a stand-in with {@code available() == false} when there is none. */
  static GpuRuntime runtime() {
    return GpuRuntimes.select(mode());
  }

  /** "cpu" or "gpu" for a {@code --mem-type}-style value, or null when it is neither. */
  static String memType(String value) {
    String m = value.toLowerCase(Locale.ROOT);
    return m.equals("cpu") || m.equals("gpu") ? m : null;
  }

  /**
   * Why {@code device} cannot be used through {@code runtime}, or null when it can: no runtime (named after
   * {@code memFlag}, with the runtime's own message naming what was tried), or no such device (named after
   * {@code deviceFlag}).
   */
  static String problem(GpuRuntime runtime, String memFlag, String deviceFlag, int device) {
    if (!runtime.available()) return memFlag + ": " + runtime.version();
    int count = runtime.deviceCount();
    if (device < 0 || device >= count)
      return deviceFlag + " " + device + ": this machine has " + count + " " + runtime.name() + " device(s)" + (count > 0 ? " (0.." + (count - 1) + ")" : "");
    return null;
  }
}
