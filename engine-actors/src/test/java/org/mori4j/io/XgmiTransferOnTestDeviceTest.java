package org.mori4j.io;

import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * {@link XgmiTransferTests} on every build machine, on transport's in-memory device
 * ({@link HostBackedGpuRuntime}: two "GPUs" with peer access whose memory is shared memory files, copies and
 * the batch kernel moving real bytes on stream threads, IPC handles that the child JVM maps from the same
 * directory). The engines select it by its registered name ({@code mori4j.gpu.runtime}), so everything above
 * the driver is the real thing: descriptors, routing, the owner's confirmation and revocation over remoting
 * between two JVMs, the worker, close. Sizes are smaller than on a GPU (64 MiB, 32,768 blocks of up to 4 KiB).
 */
class XgmiTransferOnTestDeviceTest extends XgmiTransferTests {
  static final String MODE = "xgmi-test-device";
  private static Path dir;
  private static HostBackedGpuRuntime device;

  @BeforeAll
  static void useTheTestDevice() {
    dir = HostBackedGpuRuntime.newDirectory();
    device = new HostBackedGpuRuntime(2, 20, true, dir);
    GpuRuntimes.register(MODE, device);
    System.setProperty("mori4j.gpu.runtime", MODE);
    ConfigFactory.invalidateCaches();
  }

  @AfterAll
  static void forgetTheTestDevice() {
    System.clearProperty("mori4j.gpu.runtime");
    ConfigFactory.invalidateCaches();
    GpuRuntimes.register(MODE, null);
    device.shutdown();
  }

  @Override
  GpuRuntime runtime() {
    return device;
  }

  @Override
  long maxSingle() {
    return 64 * MIB;
  }

  @Override
  long childBuffer() {
    return 128 * MIB;
  }

  @Override
  long batchStride() {
    return 4096 + 16;
  }

  @Override
  List<String> childRuntimeArgs() {
    return List.of(MODE, dir.toString());
  }
}
