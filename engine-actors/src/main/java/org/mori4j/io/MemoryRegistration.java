package org.mori4j.io;

import java.lang.foreign.MemorySegment;

/**
 * One region to register in a bulk {@link IoEngine#registerMemories(java.util.List)} call: host memory as a
 * native segment ({@link #host}), or device memory by address, size and device ({@link #gpu}). The engine checks
 * it as the single-region calls do and names the list index of a region it refuses. Records are immutable;
 * the memory itself must stay alive while registered.
 */
public record MemoryRegistration(MemorySegment memory, MemoryLocationType location, int deviceId) {
  /** Host memory; the segment must be native (off-heap) and shared or global. */
  public static MemoryRegistration host(MemorySegment memory) {
    return new MemoryRegistration(memory, MemoryLocationType.CPU, -1);
  }

  /** Device memory {@code [address, address + size)} on {@code deviceId}; the engine asks the driver whether it is. */
  public static MemoryRegistration gpu(long address, long size, int deviceId) {
    if (address == 0) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "address must not be 0");
    if (size <= 0) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "size must be positive: " + size);
    return new MemoryRegistration(MemorySegment.ofAddress(address).reinterpret(size), MemoryLocationType.GPU, deviceId);
  }
}
