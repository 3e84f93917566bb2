package org.mori4j.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.mori4j.io.IoEngine;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * A buffer of the benchmark registered with an engine: host memory ({@code --mem-type cpu}) or device memory
 * of one GPU ({@code --mem-type gpu}), with the few things the benchmark does to it outside the measured
 * transfers — put a row's pattern in, wipe it, and bring a sample back to the CPU for the integrity check.
 * Device memory is not addressable from the CPU, so those go through a pinned staging chunk with the
 * runtime's synchronous copies; from pinned memory those return only once the copy is done, so the next
 * transfer (which the engine stages on its own non-blocking streams) never races them. {@link #close()}
 * frees the memory: close the engine first, because until then it may still copy to or from it.
 */
public abstract sealed class BenchMemory implements AutoCloseable {
  /** Staging chunk for device buffers: big enough that a 256 MiB fill is a few dozen copies. */
  static final long STAGING_CHUNK = 8L << 20;

  private final MemoryDesc desc;

  private BenchMemory(MemoryDesc desc) {
    this.desc = desc;
  }

  /** Host memory of {@code size} bytes (page-aligned), registered as CPU memory with {@code engine}. */
  public static BenchMemory host(IoEngine engine, long size) {
    Arena arena = Arena.ofShared();
    try {
      MemorySegment seg = arena.allocate(size, 4096);
      return new Host(engine.registerMemory(seg), arena, seg);
    } catch (RuntimeException | Error e) {
      arena.close();
      throw e;
    }
  }

  /** Device memory of {@code size} bytes on {@code device}, registered as GPU memory with {@code engine}. */
  public static BenchMemory gpu(IoEngine engine, GpuRuntime runtime, int device, long size) {
    DeviceBuffer buffer = runtime.allocDevice(device, size);
    PinnedBuffer staging = null;
    try {
      staging = runtime.allocPinned(Math.min(size, STAGING_CHUNK));
      MemoryDesc desc = engine.registerMemory(buffer.address(), size, device, MemoryLocationType.GPU);
      return new Gpu(desc, runtime, buffer, staging);
    } catch (RuntimeException | Error e) {
      if (staging != null) staging.close();
      buffer.close();
      throw e;
    }
  }

  /** The registration. */
  public MemoryDesc desc() {
    return desc;
  }

  public long size() {
    return desc.size();
  }

  /** "cpu" or "GPU&lt;n&gt;", for titles. */
  public abstract String describe();

  /** Puts the pattern of {@code seed} over {@code [0, length)}. */
  public abstract void fillPattern(long length, long seed);

  /** Sets {@code [0, length)} to zero. */
  public abstract void zero(long length);

  /**
   * The {@code n} bytes at {@code offset} where the CPU can read them, at offset 0 of the returned segment;
   * valid until the next call on this buffer. {@code n} is at most {@link EngineBenchmark#SAMPLE_BYTES} x 2.
   */
  public abstract MemorySegment sample(long offset, long n);

  @Override
  public abstract void close();

  private static final class Host extends BenchMemory {
    private final Arena arena;
    private final MemorySegment seg;

    Host(MemoryDesc desc, Arena arena, MemorySegment seg) {
      super(desc);
      this.arena = arena;
      this.seg = seg;
    }

    @Override
    public String describe() {
      return "cpu";
    }

    @Override
    public void fillPattern(long length, long seed) {
      DataPattern.fill(seg, length, seed);
    }

    @Override
    public void zero(long length) {
      seg.asSlice(0, length).fill((byte) 0);
    }

    @Override
    public MemorySegment sample(long offset, long n) {
      return seg.asSlice(offset, n);
    }

    @Override
    public void close() {
      arena.close();
    }
  }

  private static final class Gpu extends BenchMemory {
    private final GpuRuntime runtime;
    private final DeviceBuffer buffer;
    private final PinnedBuffer staging;

    Gpu(MemoryDesc desc, GpuRuntime runtime, DeviceBuffer buffer, PinnedBuffer staging) {
      super(desc);
      this.runtime = runtime;
      this.buffer = buffer;
      this.staging = staging;
    }

    @Override
    public String describe() {
      return "GPU" + buffer.device();
    }

    @Override
    public void fillPattern(long length, long seed) {
      MemorySegment chunk = staging.segment();
      for (long off = 0; off < length; off += chunk.byteSize()) {
        long n = Math.min(chunk.byteSize(), length - off);
        DataPattern.fillAt(chunk, off, n, seed);
        runtime.copyHostToDevice(buffer.address() + off, chunk, n);
      }
    }

    @Override
    public void zero(long length) {
      // not runtime.fill: a memset on the legacy stream may still be running when the engine's non-blocking
      // staging streams write the next row into this buffer; a copy from pinned memory is done when it returns
      MemorySegment chunk = staging.segment();
      chunk.fill((byte) 0);
      for (long off = 0; off < length; off += chunk.byteSize()) {
        runtime.copyHostToDevice(buffer.address() + off, chunk, Math.min(chunk.byteSize(), length - off));
      }
    }

    @Override
    public MemorySegment sample(long offset, long n) {
      MemorySegment chunk = staging.segment();
      if (n > chunk.byteSize()) throw new IllegalArgumentException("sample of " + n + " bytes > staging chunk " + chunk.byteSize());
      runtime.copyDeviceToHost(chunk, buffer.address() + offset, n);
      return chunk.asSlice(0, n);
    }

    @Override
    public void close() {
      try {
        staging.close();
      } finally {
        buffer.close();
      }
    }
  }
}
