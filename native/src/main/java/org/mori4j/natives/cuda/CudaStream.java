package org.mori4j.natives.cuda;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.NativeResource;

/**
 * A {@code CUstream} in a device's primary context, created non-blocking so that it never waits on the
 * legacy default stream that other code in the process may be using. Destroyed on close.
 */
final class CudaStream extends NativeResource implements GpuStream {
  private final CudaRuntime runtime;
  private final int device;
  private final MemorySegment handle;

  CudaStream(CudaRuntime runtime, int device, MemorySegment handle) {
    this.runtime = runtime;
    this.device = device;
    this.handle = handle;
  }

  MemorySegment handle() {
    checkOpen();
    return handle;
  }

  @Override
  public int device() {
    return device;
  }

  @Override
  public void synchronize() {
    runtime.bind(device);
    CudaExecutionApi.streamSynchronize(handle());
  }

  @Override
  public boolean isComplete() {
    runtime.bind(device);
    return CudaExecutionApi.streamQuery(handle());
  }

  @Override
  protected void release() {
    runtime.bind(device);
    CudaExecutionApi.streamDestroy(handle);
  }

  @Override
  protected String describe() {
    return "cuda stream on device " + device;
  }
}
