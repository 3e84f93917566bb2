package org.mori4j.transport.rdma.soft;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import org.mori4j.transport.DeviceStaging;

/**
 * One staging buffer through which a connection moves GPU memory: bytes go device -> buffer -> socket or
 * socket -> buffer -> device, a chunk at a time. The device's I/O thread waits for each copy (spinning, then
 * yielding): this is an emulation, and a NIC would DMA straight from GPU memory instead.
 */
final class GpuStage implements AutoCloseable {
  private final DeviceStaging.Slot slot;
  final int capacity;
  final MemorySegment buffer;
  /** A view of the buffer for socket I/O; position and limit belong to the caller. */
  final ByteBuffer view;

  GpuStage(DeviceStaging staging, int capacity) {
    this.slot = staging.openSlot(capacity);
    this.capacity = capacity;
    this.buffer = slot.buffer().asSlice(0, capacity);
    this.view = buffer.asByteBuffer();
  }

  /** Copies {@code n} bytes of GPU {@code device} at {@code src} into the buffer; returns when they are there. */
  void fromDevice(int device, long src, int n) {
    slot.fromDevice(device, src, 0, n);
    slot.mark();
    await();
  }

  /** Copies the first {@code n} bytes of the buffer to GPU {@code device} at {@code dst}; returns when they landed. */
  void toDevice(int device, long dst, int n) {
    slot.toDevice(device, dst, 0, n);
    slot.mark();
    await();
  }

  private void await() {
    int spins = 0;
    while (!slot.done()) {
      if (++spins < 200) Thread.onSpinWait();
      else Thread.yield();
    }
  }

  @Override
  public void close() {
    slot.close();
  }
}
