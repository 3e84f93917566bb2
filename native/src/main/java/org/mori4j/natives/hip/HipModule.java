package org.mori4j.natives.hip;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.NativeResource;

/** A {@code hipModule_t} loaded on one device; unloaded on close. */
final class HipModule extends NativeResource implements GpuModule {
  private final HipRuntime runtime;
  private final int device;
  private final MemorySegment handle;

  HipModule(HipRuntime runtime, int device, MemorySegment handle) {
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
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment cName = arena.allocateFrom(name);
      MemorySegment f = Hip.outHandle("hipModuleGetFunction(" + name + ")",
          out -> (int) Hip.MODULE_GET_FUNCTION.invokeExact(out, handle, cName));
      return new GpuFunction(name, device, f.address());
    }
  }

  @Override
  public GlobalSymbol global(String name) {
    checkOpen();
    runtime.bind(device);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment cName = arena.allocateFrom(name);
      MemorySegment address = arena.allocate(HipLayouts.DEVICE_POINTER);
      MemorySegment size = arena.allocate(HipLayouts.SIZE_T);
      Hip.call("hipModuleGetGlobal(" + name + ")", () -> (int) Hip.MODULE_GET_GLOBAL.invokeExact(address, size, handle, cName));
      return new GlobalSymbol(name, address.get(HipLayouts.DEVICE_POINTER, 0), size.get(HipLayouts.SIZE_T, 0));
    }
  }

  @Override
  protected void release() {
    runtime.bind(device);
    Hip.call("hipModuleUnload", () -> (int) Hip.MODULE_UNLOAD.invokeExact(handle));
  }

  @Override
  protected String describe() {
    return "hip module on device " + device;
  }
}
