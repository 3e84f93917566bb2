package org.mori4j.natives.gpu;

/**
 * Another process's device memory, opened in this one from its 64-byte IPC handle
 * ({@link GpuRuntime#openIpcHandle}); the mapping is closed (not the memory freed: the exporting process owns
 * it) on {@link #close()}.
 */
public final class IpcMapping extends NativeResource {
  private final String runtime;
  private final int device;
  private final long address;
  private final long size;
  private final Runnable unmap;

  /** For runtimes: {@code unmap} closes the mapping (once, on close). */
  public IpcMapping(String runtime, int device, long address, long size, Runnable unmap) {
    this.runtime = runtime;
    this.device = device;
    this.address = address;
    this.size = size;
    this.unmap = unmap;
  }

  /** The device this process opened the mapping on. */
  public int device() {
    return device;
  }

  /** The mapped device pointer in this process. */
  public long address() {
    checkOpen();
    return address;
  }

  /** The size of the exported allocation. */
  public long size() {
    return size;
  }

  @Override
  protected void release() {
    unmap.run();
  }

  @Override
  protected String describe() {
    return runtime + " IPC mapping of " + size + " bytes at 0x" + Long.toHexString(address) + " on device " + device;
  }
}
