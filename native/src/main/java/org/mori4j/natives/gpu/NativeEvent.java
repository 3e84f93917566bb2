package org.mori4j.natives.gpu;

import java.lang.foreign.MemorySegment;

/**
 * An event of a {@link NativeGpuRuntime} (a {@code CUevent} in the device's primary context, a
 * {@code hipEvent_t}). Recording and polling it are the completion check of the engine's GPU copies, so neither
 * allocates; every call makes its device current first. Destroyed on close.
 */
final class NativeEvent extends NativeResource implements GpuEvent {
  private final NativeGpuRuntime runtime;
  private final int device;
  private final MemorySegment handle;

  NativeEvent(NativeGpuRuntime runtime, int device, MemorySegment handle) {
    this.runtime = runtime;
    this.device = device;
    this.handle = handle;
  }

  NativeGpuRuntime runtime() {
    return runtime;
  }

  @Override
  public int device() {
    return device;
  }

  @Override
  public void record(GpuStream stream) {
    NativeStream s = runtime.ownStream(stream);
    if (s.device() != device) throw new IllegalArgumentException(describe() + " cannot be recorded on a stream of device " + s.device());
    runtime.bind(device);
    runtime.api().eventRecord(handle(), s.handle());
  }

  @Override
  public boolean isComplete() {
    runtime.bind(device);
    return runtime.api().eventQuery(handle());
  }

  @Override
  public void synchronize() {
    runtime.bind(device);
    runtime.api().eventSynchronize(handle());
  }

  @Override
  public float elapsedMillisSince(GpuEvent start) {
    NativeEvent s = runtime.ownEvent(start);
    runtime.bind(device);
    return runtime.api().eventElapsedTime(s.handle(), handle());
  }

  private MemorySegment handle() {
    checkOpen();
    return handle;
  }

  @Override
  protected void release() {
    runtime.bind(device);
    runtime.api().eventDestroy(handle);
  }

  @Override
  protected String describe() {
    return runtime.name() + " event on device " + device;
  }
}
