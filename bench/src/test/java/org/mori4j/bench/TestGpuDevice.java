package org.mori4j.bench;

import com.typesafe.config.ConfigFactory;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * Selects transport's in-memory GPU runtime (two "GPUs" with peer access) for the bench commands a test runs in
 * this JVM, through {@code mori4j.gpu.runtime}, and puts things back afterwards.
 */
public final class TestGpuDevice {
  private TestGpuDevice() {}

  /** Registers a fresh two-device runtime under {@code mode} and makes it the JVM's GPU runtime. */
  public static HostBackedGpuRuntime select(String mode) {
    HostBackedGpuRuntime device = new HostBackedGpuRuntime(2, 0);
    GpuRuntimes.register(mode, device);
    System.setProperty("mori4j.gpu.runtime", mode);
    ConfigFactory.invalidateCaches();
    return device;
  }

  /** Undoes {@link #select}: the default runtime again, {@code device} unregistered and shut down. */
  public static void forget(String mode, HostBackedGpuRuntime device) {
    System.clearProperty("mori4j.gpu.runtime");
    ConfigFactory.invalidateCaches();
    GpuRuntimes.register(mode, null);
    device.shutdown();
  }
}
