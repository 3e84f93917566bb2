package org.mori4j.natives.gpu;

/**
 * Device memory from {@link GpuRuntime#allocDevice}: a device pointer and its size on one device, freed on
 * {@link #close()}. The pointer is a plain {@code long} because device memory is not addressable from the
 * CPU; only copies and kernels touch it.
 */
public final class DeviceBuffer extends NativeResource {
  private final String runtime;
  private final int device;
  private final long address;
  private final long size;
  private final Runnable free;

  /** For runtimes: {@code free} releases the memory (it runs once, on close). */
  public DeviceBuffer(String runtime, int device, long address, long size, Runnable free) {
    this.runtime = runtime;
    this.device = device;
    this.address = address;
    this.size = size;
    this.free = free;
  }

  public int device() {
    return device;
  }

  /** The device pointer; throws once closed, so a freed pointer is never handed out. */
  public long address() {
    checkOpen();
    return address;
  }

  public long size() {
    return size;
  }

  @Override
  protected void release() {
    free.run();
  }

  @Override
  protected String describe() {
    return runtime + " device buffer of " + size + " bytes at 0x" + Long.toHexString(address) + " on device " + device;
  }
}
