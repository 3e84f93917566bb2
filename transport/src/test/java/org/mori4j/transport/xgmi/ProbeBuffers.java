package org.mori4j.transport.xgmi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * The memory of one {@link GatherKernelProbe} shape: a source buffer on one device and a destination buffer on the
 * other (or the same), each with an eighth more slots than blocks, the blocks placed in slots drawn from a shuffled
 * free list on each side (as a KV cache's allocator hands them out); the block tables on the device that runs the
 * kernel; and the check, which runs on the destination's device: every block's bytes equal its source's and every
 * slot no block went to is still zero.
 */
final class ProbeBuffers implements AutoCloseable {
  private final GpuRuntime gpu;
  private final ProbeShape shape;
  private final int srcDevice, dstDevice;
  private final DeviceBuffer src, dst, checkTable, unused;
  private final int unusedCount;
  private final long slotBytes;
  private final Checker checker;
  /** The kernel tables: launch t's {@code per} source offsets then its {@code per} destination offsets. */
  private final MemorySegment hostTables;
  private final Arena arena = Arena.ofShared();
  private final Map<Integer, DeviceBuffer> tables = new HashMap<>();
  /** The same tables in page-locked host memory, for variants that read them in place (made on first use). */
  private PinnedBuffer pinnedTables;

  ProbeBuffers(GpuRuntime gpu, ProbeShape shape, int srcDevice, int dstDevice, Checker sourceFiller, Checker checker) {
    this.gpu = gpu;
    this.shape = shape;
    this.srcDevice = srcDevice;
    this.dstDevice = dstDevice;
    this.checker = checker;
    int n = shape.blocks();
    int slots = n + n / 8;
    long bs = shape.blockSize();
    slotBytes = (long) slots * bs;
    SplittableRandom r = new SplittableRandom(20261125L ^ n);
    int[] from = shuffled(slots, r), to = shuffled(slots, r);
    int per = shape.perLaunch();
    hostTables = arena.allocate(16L * n, 16);
    MemorySegment check = arena.allocate(16L * n, 16);
    for (int i = 0; i < n; i++) {
      int t = i / per, k = i % per;
      hostTables.setAtIndex(ValueLayout.JAVA_LONG, 2L * per * t + k, from[i] * bs);
      hostTables.setAtIndex(ValueLayout.JAVA_LONG, 2L * per * t + per + k, to[i] * bs);
      check.setAtIndex(ValueLayout.JAVA_LONG, i, from[i] * bs);
      check.setAtIndex(ValueLayout.JAVA_LONG, n + i, to[i] * bs);
    }
    unusedCount = slots - n;
    MemorySegment free = arena.allocate(8L * Math.max(1, unusedCount), 8);
    for (int i = n; i < slots; i++) free.setAtIndex(ValueLayout.JAVA_LONG, i - n, to[i] * bs);
    DeviceBuffer s = null, d = null, c = null, u = null;
    try {
      s = gpu.allocDevice(srcDevice, slotBytes);
      d = gpu.allocDevice(dstDevice, slotBytes);
      c = gpu.allocDevice(dstDevice, 16L * n);
      u = gpu.allocDevice(dstDevice, 8L * Math.max(1, unusedCount));
      gpu.copyHostToDevice(c.address(), check, 16L * n);
      gpu.copyHostToDevice(u.address(), free, 8L * Math.max(1, unusedCount));
    } catch (RuntimeException e) {
      for (DeviceBuffer b : new DeviceBuffer[] {s, d, c, u}) if (b != null) b.close();
      arena.close();
      throw e;
    }
    src = s;
    dst = d;
    checkTable = c;
    unused = u;
    sourceFiller.fill(src.address(), slotBytes, 77, false);
  }

  private static int[] shuffled(int slots, SplittableRandom r) {
    int[] a = new int[slots];
    for (int i = 0; i < slots; i++) a[i] = i;
    for (int i = slots - 1; i > 0; i--) {
      int j = r.nextInt(i + 1), t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }

  /** Puts the kernel tables on {@code device} (once per device). */
  void uploadTables(int device) {
    tables.computeIfAbsent(device, dv -> {
      DeviceBuffer t = gpu.allocDevice(dv, 16L * shape.blocks());
      gpu.copyHostToDevice(t.address(), hostTables, 16L * shape.blocks());
      return t;
    });
  }

  /** Where a kernel on {@code device} reads the tables in place from page-locked host memory. */
  private long mappedTables(int device) {
    if (pinnedTables == null) {
      pinnedTables = gpu.allocPinned(16L * shape.blocks());
      MemorySegment.copy(hostTables, 0, pinnedTables.segment(), 0, 16L * shape.blocks());
    }
    long at = gpu.mappedPointer(pinnedTables, device);
    if (at == 0) throw new IllegalStateException(gpu.name() + " cannot map page-locked host memory into device " + device);
    return at;
  }

  /** Every launch of the shape, round-robin over the first {@code count} of {@code streams} (as the backend spreads batches). */
  void run(GpuStream[] streams, int count, GatherVariants.Variant v) {
    long table = v.mappedTable() ? mappedTables(streams[0].device()) : tables.get(streams[0].device()).address();
    int per = shape.perLaunch();
    for (int t = 0; t < shape.launches(); t++) {
      v.launch(streams[t % count], table + 16L * per * t, per, src.address(), dst.address(), shape.blockSize());
    }
  }

  /** The same bytes as one contiguous copy on the same route. */
  void copyAll(GpuStream stream) {
    if (srcDevice == dstDevice) gpu.copyDeviceToDeviceAsync(dst.address(), src.address(), shape.bytes(), stream);
    else gpu.copyPeerAsync(dst.address(), dstDevice, src.address(), srcDevice, shape.bytes(), stream);
  }

  /** Runs {@code v} once on a zeroed destination and says "ok" or what is wrong. */
  String checkOnce(GpuStream stream, GatherVariants.Variant v) {
    checker.fill(dst.address(), slotBytes, 0, true);
    run(new GpuStream[] {stream}, 1, v);
    stream.synchronize();
    long differ = checker.compare(checkTable.address(), shape.blocks(), src.address(), dst.address(), shape.blockSize());
    long stray = unusedCount == 0 ? 0 : checker.zeros(unused.address(), unusedCount, dst.address(), shape.blockSize());
    return differ == 0 && stray == 0 ? "ok" : "BAD(" + differ + " words differ, " + stray + " stray words)";
  }

  @Override
  public void close() {
    for (DeviceBuffer t : tables.values()) t.close();
    if (pinnedTables != null) pinnedTables.close();
    src.close();
    dst.close();
    checkTable.close();
    unused.close();
    arena.close();
  }

  /** The probe's helper kernels on one device: fill a buffer, compare blocks by a table, count non-zero words. */
  static final class Checker implements AutoCloseable {
    static final String SOURCE = """
        typedef unsigned long long u64;
        extern "C" __global__ void probe_fill(u64* p, u64 words, u64 seed, int zero) {
          for (u64 i = (u64) blockIdx.x * blockDim.x + threadIdx.x; i < words; i += (u64) gridDim.x * blockDim.x) {
            u64 x = (i + seed) * 0x9E3779B97F4A7C15ull;
            x ^= x >> 29; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 32;
            p[i] = zero ? 0ull : x;
          }
        }
        extern "C" __global__ void probe_compare(const u64* table, unsigned int n, u64 srcBase, u64 dstBase, u64 size, u64* bad) {
          const u64 words = size / 8;
          for (u64 w = (u64) blockIdx.x * blockDim.x + threadIdx.x; w < (u64) n * words; w += (u64) gridDim.x * blockDim.x) {
            const u64 i = w / words, k = w - i * words;
            if (((const u64*) (srcBase + table[i]))[k] != ((const u64*) (dstBase + table[(u64) n + i]))[k]) atomicAdd(bad, 1ull);
          }
        }
        extern "C" __global__ void probe_zeros(const u64* offsets, unsigned int m, u64 base, u64 size, u64* bad) {
          const u64 words = size / 8;
          for (u64 w = (u64) blockIdx.x * blockDim.x + threadIdx.x; w < (u64) m * words; w += (u64) gridDim.x * blockDim.x) {
            const u64 i = w / words, k = w - i * words;
            if (((const u64*) (base + offsets[i]))[k] != 0ull) atomicAdd(bad, 1ull);
          }
        }
        """;
    private final GpuRuntime gpu;
    private final GpuModule module;
    private final GpuFunction fill, compare, zeros;
    private final GpuStream stream;
    private final DeviceBuffer counter;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment host = arena.allocate(8, 8);
    private final Dim3 grid;

    Checker(GpuRuntime gpu, int device) {
      this.gpu = gpu;
      this.module = gpu.loadModule(device, gpu.compile(device, SOURCE, "probe_check.cu"));
      this.fill = module.function("probe_fill");
      this.compare = module.function("probe_compare");
      this.zeros = module.function("probe_zeros");
      this.stream = gpu.createStream(device);
      this.counter = gpu.allocDevice(device, 8);
      this.grid = Dim3.of(gpu.multiprocessorCount(device) * 8);
    }

    void fill(long base, long bytes, long seed, boolean zero) {
      gpu.launch(fill, grid, Dim3.of(256), 0, stream, KernelArgs.of().pointer(base).i64(bytes / 8).i64(seed).i32(zero ? 1 : 0));
      stream.synchronize();
    }

    long compare(long table, int n, long srcBase, long dstBase, long size) {
      return count(compare, KernelArgs.of().pointer(table).i32(n).pointer(srcBase).pointer(dstBase).i64(size).pointer(counter.address()));
    }

    long zeros(long offsets, int m, long base, long size) {
      return count(zeros, KernelArgs.of().pointer(offsets).i32(m).pointer(base).i64(size).pointer(counter.address()));
    }

    private long count(GpuFunction f, KernelArgs args) {
      host.set(ValueLayout.JAVA_LONG, 0, 0);
      gpu.copyHostToDeviceAsync(counter.address(), host, 8, stream);
      gpu.launch(f, grid, Dim3.of(256), 0, stream, args);
      gpu.copyDeviceToHostAsync(host, counter.address(), 8, stream);
      stream.synchronize();
      return host.get(ValueLayout.JAVA_LONG, 0);
    }

    @Override
    public void close() {
      counter.close();
      stream.close();
      module.close();
      arena.close();
    }
  }
}
