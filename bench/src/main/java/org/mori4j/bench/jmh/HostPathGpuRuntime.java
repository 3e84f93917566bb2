package org.mori4j.bench.jmh;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.DeviceMemoryInfo;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.HostRegistration;
import org.mori4j.natives.gpu.IpcMapping;
import org.mori4j.natives.gpu.KernelArgs;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.natives.gpu.PointerInfo;

/**
 * A one-device GPU runtime without a GPU, for measuring the host side of the XGMI backend
 * ({@link XgmiBatchHostBenchmark}): "device memory" is host memory of a shared arena, every copy is a
 * synchronous {@code memcpy} done when it is issued (so streams and events are always complete), and a kernel
 * launch of the batch kernel ({@code mori4j_xgmi_gather}: table, count, source base, destination base, common
 * size) performs the gather in Java on the calling thread. Each launch first stores {@link System#nanoTime()}
 * and then bumps {@link #launches()}, so a caller that saw the count change knows when the launch call began:
 * everything the engine and the backend did before that moment is the host cost that a real GPU would add
 * in front of its kernel. It has no IPC (handles cannot be made: the backend then keeps the region to this
 * process, as it does for a driver that refuses) and no peer access (one device).
 */
public final class HostPathGpuRuntime implements GpuRuntime {
  private static final String GATHER = "mori4j_xgmi_gather";

  private final Arena arena = Arena.ofShared();
  private final ConcurrentSkipListMap<Long, Long> allocations = new ConcurrentSkipListMap<>();
  private final AtomicLong launches = new AtomicLong();
  private volatile long lastLaunchNanos;

  /** Kernel launches so far. */
  public long launches() {
    return launches.get();
  }

  /** {@link System#nanoTime()} at the start of the last launch call. */
  public long lastLaunchNanos() {
    return lastLaunchNanos;
  }

  /** Frees every allocation (after the engines are closed). */
  public void shutdown() {
    arena.close();
  }

  @Override
  public String name() {
    return "host-path";
  }

  @Override
  public String version() {
    return "host-path runtime (no GPU: host memory, synchronous copies)";
  }

  @Override
  public int deviceCount() {
    return 1;
  }

  @Override
  public String deviceName(int device) {
    return "host memory " + check(device);
  }

  @Override
  public int computeCapability(int device) {
    check(device);
    return 90;
  }

  @Override
  public int multiprocessorCount(int device) {
    check(device);
    return 132;
  }

  @Override
  public String pciBusId(int device) {
    check(device);
    return "0000:00:00";
  }

  @Override
  public DeviceMemoryInfo memoryInfo(int device) {
    check(device);
    return new DeviceMemoryInfo(1L << 36, 1L << 36);
  }

  @Override
  public DeviceBuffer allocDevice(int device, long size) {
    check(device);
    MemorySegment s = arena.allocate(size, 256);
    allocations.put(s.address(), size);
    return new DeviceBuffer(name(), device, s.address(), size, () -> allocations.remove(s.address()));
  }

  @Override
  public PinnedBuffer allocPinned(long size) {
    MemorySegment s = arena.allocate(size, 4096);
    return new PinnedBuffer(name(), s, size, () -> {});
  }

  @Override
  public HostRegistration registerHost(MemorySegment segment) {
    return new HostRegistration(name(), segment, () -> {});
  }

  private static MemorySegment at(long address, long size) {
    return MemorySegment.ofAddress(address).reinterpret(size);
  }

  @Override
  public void copyHostToDevice(long dst, MemorySegment src, long size) {
    MemorySegment.copy(src, 0, at(dst, size), 0, size);
  }

  @Override
  public void copyDeviceToHost(MemorySegment dst, long src, long size) {
    MemorySegment.copy(at(src, size), 0, dst, 0, size);
  }

  @Override
  public void copyDeviceToDevice(long dst, long src, long size) {
    MemorySegment.copy(at(src, size), 0, at(dst, size), 0, size);
  }

  @Override
  public void copyPeer(long dst, int dstDevice, long src, int srcDevice, long size) {
    check(dstDevice);
    check(srcDevice);
    copyDeviceToDevice(dst, src, size);
  }

  @Override
  public void copyHostToDeviceAsync(long dst, MemorySegment src, long size, GpuStream stream) {
    copyHostToDevice(dst, src, size);
  }

  @Override
  public void copyDeviceToHostAsync(MemorySegment dst, long src, long size, GpuStream stream) {
    copyDeviceToHost(dst, src, size);
  }

  @Override
  public void copyDeviceToDeviceAsync(long dst, long src, long size, GpuStream stream) {
    copyDeviceToDevice(dst, src, size);
  }

  @Override
  public void copyPeerAsync(long dst, int dstDevice, long src, int srcDevice, long size, GpuStream stream) {
    copyPeer(dst, dstDevice, src, srcDevice, size);
  }

  @Override
  public void fill(long dst, byte value, long size) {
    at(dst, size).fill(value);
  }

  @Override
  public GpuStream createStream(int device) {
    check(device);
    return new GpuStream() {
      @Override
      public int device() {
        return device;
      }

      @Override
      public void synchronize() {}

      @Override
      public boolean isComplete() {
        return true;
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public GpuEvent createEvent(int device, boolean timing) {
    check(device);
    return new GpuEvent() {
      @Override
      public int device() {
        return device;
      }

      @Override
      public void record(GpuStream stream) {}

      @Override
      public boolean isComplete() {
        return true;
      }

      @Override
      public void synchronize() {}

      @Override
      public float elapsedMillisSince(GpuEvent start) {
        throw new UnsupportedOperationException("the host-path runtime has no GPU clock");
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public byte[] ipcHandle(long devicePointer) {
    throw new UnsupportedOperationException("the host-path runtime has no IPC: its memory stays in this process");
  }

  @Override
  public IpcMapping openIpcHandle(int device, byte[] handle) {
    throw new UnsupportedOperationException("the host-path runtime has no IPC: its memory stays in this process");
  }

  @Override
  public PointerInfo pointerInfo(long address) {
    Map.Entry<Long, Long> e = allocations.floorEntry(address);
    if (e == null || address >= e.getKey() + e.getValue()) return new PointerInfo(address, false, -1, 0, 0, "unknown");
    return new PointerInfo(address, true, 0, e.getKey(), e.getValue(), "HOST_PATH_DEVICE");
  }

  @Override
  public byte[] compile(int device, String source, String name, String... options) {
    check(device);
    return source.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public GpuModule loadModule(int device, byte[] image) {
    check(device);
    String source = new String(image, StandardCharsets.UTF_8);
    return new GpuModule() {
      @Override
      public int device() {
        return device;
      }

      @Override
      public GpuFunction function(String name) {
        if (!name.equals(GATHER) || !source.contains(name)) throw new IllegalArgumentException("the host-path runtime runs only " + GATHER + ", not " + name);
        return new GpuFunction(name, device, 1);
      }

      @Override
      public GlobalSymbol global(String name) {
        throw new IllegalArgumentException("the host-path runtime has no module globals (" + name + ")");
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public void launch(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    lastLaunchNanos = System.nanoTime();
    launches.incrementAndGet();
    if (!function.name().equals(GATHER)) throw new IllegalArgumentException("the host-path runtime runs only " + GATHER);
    long table, srcBase, dstBase, sameSize;
    int n;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment p = args.toNative(a);
      table = p.getAtIndex(ValueLayout.ADDRESS, 0).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
      n = p.getAtIndex(ValueLayout.ADDRESS, 1).reinterpret(4).get(ValueLayout.JAVA_INT, 0);
      srcBase = p.getAtIndex(ValueLayout.ADDRESS, 2).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
      dstBase = p.getAtIndex(ValueLayout.ADDRESS, 3).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
      sameSize = p.getAtIndex(ValueLayout.ADDRESS, 4).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
    }
    MemorySegment t = at(table, (sameSize != 0 ? 16L : 24L) * n);
    for (int i = 0; i < n; i++) {
      long size = sameSize != 0 ? sameSize : t.getAtIndex(ValueLayout.JAVA_LONG, 2L * n + i);
      copyDeviceToDevice(dstBase + t.getAtIndex(ValueLayout.JAVA_LONG, n + i), srcBase + t.getAtIndex(ValueLayout.JAVA_LONG, i), size);
    }
  }

  @Override
  public boolean canAccessPeer(int device, int peer) {
    check(device);
    check(peer);
    return false;
  }

  @Override
  public void enablePeerAccess(int device, int peer) {
    throw new UnsupportedOperationException("the host-path runtime has one device");
  }

  private static int check(int device) {
    if (device != 0) throw new IllegalArgumentException("device " + device + ": the host-path runtime has one device (0)");
    return device;
  }
}
