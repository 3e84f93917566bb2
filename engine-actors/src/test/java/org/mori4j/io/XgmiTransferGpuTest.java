package org.mori4j.io;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;

/**
 * {@link XgmiTransferTests} on a real GPU (CUDA driver, NVRTC kernel, IPC handles between two JVMs): single
 * transfers up to 1 GiB, batches of 4 KiB and mixed blocks in 16 KiB slots, a 256 MiB child target. Tagged
 * {@code gpu}; skips, saying why, without a GPU runtime.
 */
@Tag("gpu")
class XgmiTransferGpuTest extends XgmiTransferTests {
  @Override
  GpuRuntime runtime() {
    return GpuRuntimes.select("auto");
  }

  @Override
  long maxSingle() {
    return 1L << 30;
  }

  @Override
  long childBuffer() {
    return 256 * MIB;
  }

  @Override
  long batchStride() {
    return 16 * 1024;
  }

  @Override
  List<String> childRuntimeArgs() {
    return List.of();
  }
}
