package org.mori4j.bench.kv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.mori4j.io.IoEngine;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheLayout;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;

/**
 * The buffers behind one kv-bench cache, host segments (TCP) or device memory from the GPU runtime (XGMI), with
 * what the byte check needs: copy a slot in from or out to host memory. It owns the memory: closing it frees
 * the device buffers (the arena of host buffers is the caller's).
 */
abstract sealed class KvBenchMemory implements AutoCloseable {
  final KvCacheLayout layout;

  KvBenchMemory(KvCacheLayout layout) {
    this.layout = layout;
  }

  /** The cache over these buffers, registered on {@code engine}. */
  abstract KvCache register(IoEngine engine, String name);

  /** Copies {@code len} bytes of {@code src} to {@code offset} of buffer {@code buffer}. */
  abstract void write(int buffer, long offset, MemorySegment src, long len);

  /** Copies {@code len} bytes at {@code offset} of buffer {@code buffer} into {@code dst}. */
  abstract void read(int buffer, long offset, MemorySegment dst, long len);

  @Override
  public void close() {}

  static KvBenchMemory host(KvCacheLayout layout, Arena arena) {
    return new Host(layout, arena);
  }

  static KvBenchMemory gpu(KvCacheLayout layout, GpuRuntime gpu, int device) {
    return new Gpu(layout, gpu, device);
  }

  static final class Host extends KvBenchMemory {
    final List<MemorySegment> buffers = new ArrayList<>();

    Host(KvCacheLayout layout, Arena arena) {
      super(layout);
      for (int i = 0; i < layout.buffers(); i++) {
        MemorySegment s = arena.allocate(layout.bufferBytes(), 4096);
        s.fill((byte) (i + 1));
        buffers.add(s);
      }
    }

    @Override
    KvCache register(IoEngine engine, String name) {
      return KvCache.create(engine, name, layout, buffers);
    }

    @Override
    void write(int buffer, long offset, MemorySegment src, long len) {
      MemorySegment.copy(src, 0, buffers.get(buffer), offset, len);
    }

    @Override
    void read(int buffer, long offset, MemorySegment dst, long len) {
      MemorySegment.copy(buffers.get(buffer), offset, dst, 0, len);
    }
  }

  static final class Gpu extends KvBenchMemory {
    final GpuRuntime gpu;
    final int device;
    final List<DeviceBuffer> buffers = new ArrayList<>();

    Gpu(KvCacheLayout layout, GpuRuntime gpu, int device) {
      super(layout);
      this.gpu = gpu;
      this.device = device;
      try {
        for (int i = 0; i < layout.buffers(); i++) {
          DeviceBuffer b = gpu.allocDevice(device, layout.bufferBytes());
          buffers.add(b);
          gpu.fill(b.address(), (byte) (i + 1), layout.bufferBytes());
        }
      } catch (RuntimeException | Error e) {
        close();
        throw e;
      }
    }

    @Override
    KvCache register(IoEngine engine, String name) {
      long[] addresses = buffers.stream().mapToLong(DeviceBuffer::address).toArray();
      return KvCache.createAt(engine, name, layout, addresses, layout.bufferBytes(), device, MemoryLocationType.GPU);
    }

    @Override
    void write(int buffer, long offset, MemorySegment src, long len) {
      gpu.copyHostToDevice(buffers.get(buffer).address() + offset, src, len);
    }

    @Override
    void read(int buffer, long offset, MemorySegment dst, long len) {
      gpu.copyDeviceToHost(dst, buffers.get(buffer).address() + offset, len);
    }

    @Override
    public void close() {
      for (DeviceBuffer b : buffers) b.close();
      buffers.clear();
    }
  }
}
