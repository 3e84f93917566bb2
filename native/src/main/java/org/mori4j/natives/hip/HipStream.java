package org.mori4j.natives.hip;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.NativeResource;

/**
 * A {@code hipStream_t} on one device, created non-blocking so that it never waits on the null stream that
 * other code in the process may be using. Destroyed on close.
 */
final class HipStream extends NativeResource implements GpuStream {
  private final HipRuntime runtime;
  private final int device;
  private final MemorySegment handle;

  HipStream(HipRuntime runtime, int device, MemorySegment handle) {
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
    MemorySegment h = handle();
    Hip.call("hipStreamSynchronize", () -> (int) Hip.STREAM_SYNCHRONIZE.invokeExact(h));
  }

  @Override
  public boolean isComplete() {
    runtime.bind(device);
    MemorySegment h = handle();
    int rc = Hip.invoke(() -> (int) Hip.STREAM_QUERY.invokeExact(h));
    if (rc == HipConstants.hipErrorNotReady) return false;
    Hip.check(rc, "hipStreamQuery");
    return true;
  }

  @Override
  protected void release() {
    runtime.bind(device);
    Hip.call("hipStreamDestroy", () -> (int) Hip.STREAM_DESTROY.invokeExact(handle));
  }

  @Override
  protected String describe() {
    return "hip stream on device " + device;
  }
}
