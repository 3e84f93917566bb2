package org.mori4j.bench.jmh;

import java.lang.foreign.MemorySegment;
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
 * A real GPU runtime (CUDA or HIP) behind a pass-through that stores {@link System#nanoTime()} at the start of every
 * kernel launch call and then counts it, as {@link HostPathGpuRuntime} does, so that {@link XgmiBatchHostBenchmark} can
 * time a {@code batchWrite} from its call to the real {@code cuLaunchKernel} (with the real pinned table, the real
 * {@code cuMemcpyHtoDAsync} upload and the driver's own costs in front of it). Every other call goes straight through;
 * the wrapper adds one virtual call per runtime call and nothing else.
 */
final class TimedGpuRuntime implements GpuRuntime, LaunchClock {
  private final GpuRuntime gpu;
  private final AtomicLong launches = new AtomicLong();
  private volatile long lastLaunchNanos;

  TimedGpuRuntime(GpuRuntime gpu) {
    this.gpu = gpu;
  }

  @Override public long launches() { return launches.get(); }
  @Override public long lastLaunchNanos() { return lastLaunchNanos; }

  @Override
  public void launch(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    lastLaunchNanos = System.nanoTime();
    launches.incrementAndGet();
    gpu.launch(function, grid, block, sharedMemBytes, stream, args);
  }

  @Override public String name() { return gpu.name(); }
  @Override public boolean available() { return gpu.available(); }
  @Override public String version() { return gpu.version(); }
  @Override public int deviceCount() { return gpu.deviceCount(); }
  @Override public String deviceName(int device) { return gpu.deviceName(device); }
  @Override public int computeCapability(int device) { return gpu.computeCapability(device); }
  @Override public int multiprocessorCount(int device) { return gpu.multiprocessorCount(device); }
  @Override public String pciBusId(int device) { return gpu.pciBusId(device); }
  @Override public DeviceMemoryInfo memoryInfo(int device) { return gpu.memoryInfo(device); }
  @Override public DeviceBuffer allocDevice(int device, long size) { return gpu.allocDevice(device, size); }
  @Override public PinnedBuffer allocPinned(long size) { return gpu.allocPinned(size); }
  @Override public long mappedPointer(PinnedBuffer buffer, int device) { return gpu.mappedPointer(buffer, device); }
  @Override public HostRegistration registerHost(MemorySegment segment) { return gpu.registerHost(segment); }
  @Override public void copyHostToDevice(long dst, MemorySegment src, long size) { gpu.copyHostToDevice(dst, src, size); }
  @Override public void copyDeviceToHost(MemorySegment dst, long src, long size) { gpu.copyDeviceToHost(dst, src, size); }
  @Override public void copyDeviceToDevice(long dst, long src, long size) { gpu.copyDeviceToDevice(dst, src, size); }
  @Override public void copyPeer(long dst, int dstDevice, long src, int srcDevice, long size) { gpu.copyPeer(dst, dstDevice, src, srcDevice, size); }
  @Override public void copyHostToDeviceAsync(long dst, MemorySegment src, long size, GpuStream stream) { gpu.copyHostToDeviceAsync(dst, src, size, stream); }
  @Override public void copyDeviceToHostAsync(MemorySegment dst, long src, long size, GpuStream stream) { gpu.copyDeviceToHostAsync(dst, src, size, stream); }
  @Override public void copyDeviceToDeviceAsync(long dst, long src, long size, GpuStream stream) { gpu.copyDeviceToDeviceAsync(dst, src, size, stream); }
  @Override
  public void copyPeerAsync(long dst, int dstDevice, long src, int srcDevice, long size, GpuStream stream) {
    gpu.copyPeerAsync(dst, dstDevice, src, srcDevice, size, stream);
  }
  @Override public void fill(long dst, byte value, long size) { gpu.fill(dst, value, size); }
  @Override public GpuStream createStream(int device) { return gpu.createStream(device); }
  @Override public GpuEvent createEvent(int device, boolean timing) { return gpu.createEvent(device, timing); }
  @Override public byte[] ipcHandle(long devicePointer) { return gpu.ipcHandle(devicePointer); }
  @Override public IpcMapping openIpcHandle(int device, byte[] handle) { return gpu.openIpcHandle(device, handle); }
  @Override public PointerInfo pointerInfo(long address) { return gpu.pointerInfo(address); }
  @Override public byte[] compile(int device, String source, String name, String... options) { return gpu.compile(device, source, name, options); }
  @Override public GpuModule loadModule(int device, byte[] image) { return gpu.loadModule(device, image); }
  @Override
  public void launchCooperative(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    gpu.launchCooperative(function, grid, block, sharedMemBytes, stream, args);
  }
  @Override
  public int maxActiveBlocksPerMultiprocessor(GpuFunction function, int blockThreads, int dynamicSharedBytes) {
    return gpu.maxActiveBlocksPerMultiprocessor(function, blockThreads, dynamicSharedBytes);
  }
  @Override public boolean canAccessPeer(int device, int peer) { return gpu.canAccessPeer(device, peer); }
  @Override public void enablePeerAccess(int device, int peer) { gpu.enablePeerAccess(device, peer); }
}
