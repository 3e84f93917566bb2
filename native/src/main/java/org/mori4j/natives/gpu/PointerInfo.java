package org.mori4j.natives.gpu;

/**
 * What the driver knows about an address: whether it is device memory, on which device, and the whole
 * allocation it falls in. For an address the driver does not know, {@code deviceMemory} is false, the
 * device is -1 and the range is empty; {@code memoryType} says what the driver called it, for messages.
 */
public record PointerInfo(long address, boolean deviceMemory, int device, long rangeStart, long rangeSize, String memoryType) {

  /** True when {@code [address, address + size)} lies inside the allocation. */
  public boolean covers(long address, long size) {
    return size >= 0 && address >= rangeStart && address - rangeStart <= rangeSize - size;
  }
}
