package org.mori4j.natives.cuda;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.NativeResource;

/** A {@code CUevent} in a device's primary context; destroyed on close. */
final class CudaEvent extends NativeResource implements GpuEvent {
  private final CudaRuntime runtime;
  private final int device;
  private final MemorySegment handle;

  CudaEvent(CudaRuntime runtime, int device, MemorySegment handle) {
    this.runtime = runtime;
    this.device = device;
    this.handle = handle;
  }

  @Override
  public int device() {
    return device;
  }

  @Override
  public void record(GpuStream stream) {
    if (!(stream instanceof CudaStream s)) throw new IllegalArgumentException("not a CUDA stream: " + stream);
    if (s.device() != device) throw new IllegalArgumentException(describe() + " cannot be recorded on a stream of device " + s.device());
    runtime.bind(device);
    CudaExecutionApi.eventRecord(handle(), s.handle());
  }

  @Override
  public boolean isComplete() {
    runtime.bind(device);
    return CudaExecutionApi.eventQuery(handle());
  }

  @Override
  public void synchronize() {
    runtime.bind(device);
    CudaExecutionApi.eventSynchronize(handle());
  }

  @Override
  public float elapsedMillisSince(GpuEvent start) {
    if (!(start instanceof CudaEvent s)) throw new IllegalArgumentException("not a CUDA event: " + start);
    runtime.bind(device);
    return CudaExecutionApi.eventElapsedTime(s.handle(), handle());
  }

  private MemorySegment handle() {
    checkOpen();
    return handle;
  }

  @Override
  protected void release() {
    runtime.bind(device);
    CudaExecutionApi.eventDestroy(handle);
  }

  @Override
  protected String describe() {
    return "cuda event on device " + device;
  }
}
