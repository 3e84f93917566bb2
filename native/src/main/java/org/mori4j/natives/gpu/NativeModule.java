package org.mori4j.natives.gpu;

import java.lang.foreign.MemorySegment;

/**
 * A module of a {@link NativeGpuRuntime} (a {@code CUmodule} loaded into the device's primary context, a
 * {@code hipModule_t}): kernels and {@code __device__} globals are looked up by name with its device made current.
 * Unloaded on close.
 */
final class NativeModule extends NativeResource implements GpuModule {
  private final NativeGpuRuntime runtime;
  private final int device;
  private final MemorySegment handle;

  NativeModule(NativeGpuRuntime runtime, int device, MemorySegment handle) {
    this.runtime = runtime;
    this.device = device;
    this.handle = handle;
  }

  @Override
  public int device() {
    return device;
  }

  @Override
  public GpuFunction function(String name) {
    checkOpen();
    runtime.bind(device);
    return new GpuFunction(name, device, runtime.api().moduleGetFunction(handle, name).address());
  }

  @Override
  public GlobalSymbol global(String name) {
    checkOpen();
    runtime.bind(device);
    long[] addressAndSize = runtime.api().moduleGetGlobal(handle, name);
    return new GlobalSymbol(name, addressAndSize[0], addressAndSize[1]);
  }

  @Override
  protected void release() {
    runtime.bind(device);
    runtime.api().moduleUnload(handle);
  }

  @Override
  protected String describe() {
    return runtime.name() + " module on device " + device;
  }
}
