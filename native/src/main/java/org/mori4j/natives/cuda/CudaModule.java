package org.mori4j.natives.cuda;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.NativeResource;

/** A {@code CUmodule} loaded into a device's primary context; unloaded on close. */
final class CudaModule extends NativeResource implements GpuModule {
  private final CudaRuntime runtime;
  private final int device;
  private final MemorySegment handle;

  CudaModule(CudaRuntime runtime, int device, MemorySegment handle) {
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
    return new GpuFunction(name, device, CudaExecutionApi.moduleGetFunction(handle, name).address());
  }

  @Override
  public GlobalSymbol global(String name) {
    checkOpen();
    runtime.bind(device);
    long[] addressAndSize = CudaExecutionApi.moduleGetGlobal(handle, name);
    return new GlobalSymbol(name, addressAndSize[0], addressAndSize[1]);
  }

  @Override
  protected void release() {
    runtime.bind(device);
    CudaExecutionApi.moduleUnload(handle);
  }

  @Override
  protected String describe() {
    return "cuda module on device " + device;
  }
}
