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
 * synchronous {@code memcpy} done when it is issued (it stands in for the copy call's own cost), and a kernel
 * launch of the batch kernel ({@code mori4j_xgmi_gather}: table, count, source base, destination base, common
 * size) is asynchronous as on a GPU: the call reads its arguments and queues the gather, which a "device" thread of
 * this runtime then does in Java; an event recorded after a launch completes once the device thread has done it
 * (so a thread that launches from the caller's side is not held for the gather's milliseconds, as it would not be
 * on a GPU). Each launch first stores {@link System#nanoTime()} and then bumps {@link #launches()}, so a caller
 * that saw the count change knows when the launch call began: everything the engine and the backend did before
 * that moment is the host cost that a real GPU would add in front of its kernel. It has no IPC (handles cannot be made: the backend then keeps the region to this
 * process, as it does for a driver that refuses) and no peer access (one device).
 */
public final class HostPathGpuRuntime implements GpuRuntime, LaunchClock {
  private static final String GATHER = "mori4j_xgmi_gather";

  private final Arena arena = Arena.ofShared();
  private final ConcurrentSkipListMap<Long, Long> allocations = new ConcurrentSkipListMap<>();
  private final AtomicLong launches = new AtomicLong();
  private volatile long lastLaunchNanos;
  /** Gathers launched and not yet done, in launch order; the device thread takes them. */
  private final java.util.concurrent.ConcurrentLinkedQueue<Runnable> queued = new java.util.concurrent.ConcurrentLinkedQueue<>();
  /** Gathers the device thread has finished (an event recorded after launch {@code k} is complete once this is {@code >= k}). */
  private final AtomicLong finished = new AtomicLong();
  private volatile boolean deviceSleeping;
  private volatile boolean stopped;
  private final Thread deviceThread = Thread.ofPlatform().daemon().name("host-path-device").unstarted(this::runDevice);

  /** Kernel launches so far. */
  @Override
  public long launches() {
    return launches.get();
  }

  /** {@link System#nanoTime()} at the start of the last launch call. */
  @Override
  public long lastLaunchNanos() {
    return lastLaunchNanos;
  }

  /** Frees every allocation (after the engines are closed). */
  public void shutdown() {
    stopped = true;
    java.util.concurrent.locks.LockSupport.unpark(deviceThread);
    try {
      deviceThread.join(10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    arena.close();
  }

  /** The device: runs queued gathers in order; spins a millisecond for the next one, then sleeps until a launch. */
  private void runDevice() {
    long idleSince = System.nanoTime();
    while (!stopped) {
      Runnable g = queued.poll();
      if (g != null) {
        try {
          g.run();
        } finally {
          finished.incrementAndGet();
        }
        idleSince = System.nanoTime();
      } else if (System.nanoTime() - idleSince < 1_000_000L) {
        Thread.onSpinWait();
      } else {
        deviceSleeping = true;
        if (queued.isEmpty() && !stopped) java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
        deviceSleeping = false;
        idleSince = System.nanoTime();
      }
    }
  }

  /** Waits until every gather launched so far is done (synchronous copies and synchronize calls). */
  private void awaitDevice() {
    long target = launches.get();
    while (finished.get() < target) Thread.onSpinWait();
  }

  @Override
  public String name() {
    return "host-path";
  }

  @Override
  public String version() {
    return "host-path runtime (no GPU: host memory, synchronous copies, the gather on a device thread)";
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

  /** The "device" reads host memory: a pinned buffer is read in place, as a GPU reads mapped page-locked memory. */
  @Override
  public long mappedPointer(PinnedBuffer buffer, int device) {
    check(device);
    return buffer.address();
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
    awaitDevice();
    MemorySegment.copy(src, 0, at(dst, size), 0, size);
  }

  @Override
  public void copyDeviceToHost(MemorySegment dst, long src, long size) {
    awaitDevice();
    MemorySegment.copy(at(src, size), 0, dst, 0, size);
  }

  @Override
  public void copyDeviceToDevice(long dst, long src, long size) {
    awaitDevice();
    MemorySegment.copy(at(src, size), 0, at(dst, size), 0, size);
  }

  @Override
  public void copyPeer(long dst, int dstDevice, long src, int srcDevice, long size) {
    check(dstDevice);
    check(srcDevice);
    copyDeviceToDevice(dst, src, size);
  }

  /** The block table's upload: a memcpy on the calling thread, for the copy call's cost (nothing launched reads that slot's table). */
  @Override
  public void copyHostToDeviceAsync(long dst, MemorySegment src, long size, GpuStream stream) {
    MemorySegment.copy(src, 0, at(dst, size), 0, size);
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
      public void synchronize() {
        awaitDevice();
      }

      @Override
      public boolean isComplete() {
        return finished.get() >= launches.get();
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public GpuEvent createEvent(int device, boolean timing) {
    check(device);
    return new GpuEvent() {
      /** The launches before this event's record: it completes once the device thread has done them all. */
      private volatile long after;

      @Override
      public int device() {
        return device;
      }

      @Override
      public void record(GpuStream stream) {
        after = launches.get();
      }

      @Override
      public boolean isComplete() {
        return finished.get() >= after;
      }

      @Override
      public void synchronize() {
        while (!isComplete()) Thread.onSpinWait();
      }

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
    if (!function.name().equals(GATHER)) throw new IllegalArgumentException("the host-path runtime runs only " + GATHER);
    if (deviceThread.getState() == Thread.State.NEW) startDevice();
    lastLaunchNanos = System.nanoTime();
    launches.incrementAndGet(); // every counted launch queues exactly one task below, so the device's count catches up
    long table, srcBase, dstBase, sameSize;
    int n;
    try (Arena a = Arena.ofConfined()) {
      MemorySegment p = args.toNative(a);
      table = p.getAtIndex(ValueLayout.ADDRESS, 0).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
      n = p.getAtIndex(ValueLayout.ADDRESS, 1).reinterpret(4).get(ValueLayout.JAVA_INT, 0);
      srcBase = p.getAtIndex(ValueLayout.ADDRESS, 2).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
      dstBase = p.getAtIndex(ValueLayout.ADDRESS, 3).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
      sameSize = p.getAtIndex(ValueLayout.ADDRESS, 4).reinterpret(8).get(ValueLayout.JAVA_LONG, 0);
    } catch (RuntimeException e) {
      queue(() -> {});
      throw e;
    }
    long tableAddress = table, src = srcBase, dst = dstBase, common = sameSize;
    int count = n;
    queue(() -> {
      MemorySegment t = at(tableAddress, (common != 0 ? 16L : 24L) * count);
      for (int i = 0; i < count; i++) {
        long size = common != 0 ? common : t.getAtIndex(ValueLayout.JAVA_LONG, 2L * count + i);
        long d = dst + t.getAtIndex(ValueLayout.JAVA_LONG, count + i), s = src + t.getAtIndex(ValueLayout.JAVA_LONG, i);
        MemorySegment.copy(at(s, size), 0, at(d, size), 0, size);
      }
    });
  }

  private void queue(Runnable gather) {
    queued.add(gather);
    if (deviceSleeping) java.util.concurrent.locks.LockSupport.unpark(deviceThread);
  }

  private synchronized void startDevice() {
    if (deviceThread.getState() == Thread.State.NEW) deviceThread.start();
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
