package org.mori4j.natives.gpu;

/**
 * Compiled GPU code (a cubin, PTX or HIP code object) loaded on one device: its kernels are looked up by
 * name for {@link GpuRuntime#launch}, its {@code __device__} globals by name for copies. Unloaded on close.
 */
public interface GpuModule extends AutoCloseable {
  int device();

  /** The kernel named {@code name} (declare it {@code extern "C"} so the name is not mangled). */
  GpuFunction function(String name);

  /** The {@code __device__} variable named {@code name}: its device address and size. */
  GlobalSymbol global(String name);

  @Override
  void close();

  /** A kernel in a loaded module; valid while the module is open. */
  record GpuFunction(String name, int device, long handle) {}

  /** A module-scope device variable: where it lives and how big it is. */
  record GlobalSymbol(String name, long address, long size) {}
}
