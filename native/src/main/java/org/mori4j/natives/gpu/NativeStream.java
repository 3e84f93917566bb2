package org.mori4j.natives.gpu;

import java.lang.foreign.MemorySegment;

/**
 * A stream of a {@link NativeGpuRuntime} (a {@code CUstream} in the device's primary context, a
 * {@code hipStream_t}), created non-blocking so that it never waits on the legacy default stream that other code
 * in the process may be using. Every call makes its device current first; destroyed on close.
 */
final class NativeStream extends NativeResource implements GpuStream {
  private final NativeGpuRuntime runtime;
  private final int device;
  private final MemorySegment handle;

  NativeStream(NativeGpuRuntime runtime, int device, MemorySegment handle) {
    this.runtime = runtime;
    this.device = device;
    this.handle = handle;
  }

  NativeGpuRuntime runtime() {
    return runtime;
  }

  /** The native handle; throws once closed, so a destroyed stream is never handed to the driver. */
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
    runtime.api().streamSynchronize(handle());
  }

  @Override
  public boolean isComplete() {
    runtime.bind(device);
    return runtime.api().streamQuery(handle());
  }

  @Override
  protected void release() {
    runtime.bind(device);
    runtime.api().streamDestroy(handle);
  }

  @Override
  protected String describe() {
    return runtime.name() + " stream on device " + device;
  }
}
