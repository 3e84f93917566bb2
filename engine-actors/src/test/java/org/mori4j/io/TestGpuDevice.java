package org.mori4j.io;

import com.typesafe.config.ConfigFactory;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * Makes a prepared in-memory GPU runtime (transport's {@link HostBackedGpuRuntime}) the JVM's GPU runtime for the
 * engines a test creates, through {@code mori4j.gpu.runtime}, and puts things back afterwards. engine-actors'
 * test jar carries this class alone, for bench's tests.
 */
public final class TestGpuDevice {
  private TestGpuDevice() {}

  /** Registers {@code device} under {@code mode} and makes it the runtime engines open; returns it. */
  public static HostBackedGpuRuntime select(String mode, HostBackedGpuRuntime device) {
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
