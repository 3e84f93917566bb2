package org.mori4j.natives.gpu;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;

/**
 * A {@link GpuRuntime} that hands every call to another one, for wrappers that change or observe a few calls and
 * leave the rest alone (a launch clock for host-cost benchmarks, timing events for a test device): a subclass
 * overrides only what it changes, and a method added to {@link GpuRuntime} is forwarded here once instead of in every
 * wrapper. The default methods are forwarded too, so the wrapped runtime's own versions (cooperative launch, the
 * occupancy calculator, mapped host memory) stay in effect.
 */
public abstract class ForwardingGpuRuntime implements GpuRuntime {
  /** The runtime every call goes to unless a subclass overrides it. */
  protected final GpuRuntime delegate;

  protected ForwardingGpuRuntime(GpuRuntime delegate) {
    this.delegate = delegate;
  }

  @Override public String name() { return delegate.name(); }
  @Override public boolean available() { return delegate.available(); }
  @Override public String version() { return delegate.version(); }
  @Override public int deviceCount() { return delegate.deviceCount(); }
  @Override public String deviceName(int device) { return delegate.deviceName(device); }
  @Override public int computeCapability(int device) { return delegate.computeCapability(device); }
  @Override public int multiprocessorCount(int device) { return delegate.multiprocessorCount(device); }
  @Override public String pciBusId(int device) { return delegate.pciBusId(device); }
  @Override public DeviceMemoryInfo memoryInfo(int device) { return delegate.memoryInfo(device); }
  @Override public DeviceBuffer allocDevice(int device, long size) { return delegate.allocDevice(device, size); }
  @Override public PinnedBuffer allocPinned(long size) { return delegate.allocPinned(size); }
  @Override public long mappedPointer(PinnedBuffer buffer, int device) { return delegate.mappedPointer(buffer, device); }
  @Override public HostRegistration registerHost(MemorySegment segment) { return delegate.registerHost(segment); }
  @Override public void copyHostToDevice(long dst, MemorySegment src, long size) { delegate.copyHostToDevice(dst, src, size); }
  @Override public void copyDeviceToHost(MemorySegment dst, long src, long size) { delegate.copyDeviceToHost(dst, src, size); }
  @Override public void copyDeviceToDevice(long dst, long src, long size) { delegate.copyDeviceToDevice(dst, src, size); }
  @Override public void copyPeer(long dst, int dstDevice, long src, int srcDevice, long size) { delegate.copyPeer(dst, dstDevice, src, srcDevice, size); }
  @Override public void copyHostToDeviceAsync(long dst, MemorySegment src, long size, GpuStream stream) { delegate.copyHostToDeviceAsync(dst, src, size, stream); }
  @Override public void copyDeviceToHostAsync(MemorySegment dst, long src, long size, GpuStream stream) { delegate.copyDeviceToHostAsync(dst, src, size, stream); }
  @Override public void copyDeviceToDeviceAsync(long dst, long src, long size, GpuStream stream) { delegate.copyDeviceToDeviceAsync(dst, src, size, stream); }

  @Override
  public void copyPeerAsync(long dst, int dstDevice, long src, int srcDevice, long size, GpuStream stream) {
    delegate.copyPeerAsync(dst, dstDevice, src, srcDevice, size, stream);
  }

  @Override public void fill(long dst, byte value, long size) { delegate.fill(dst, value, size); }
  @Override public GpuStream createStream(int device) { return delegate.createStream(device); }
  @Override public GpuEvent createEvent(int device, boolean timing) { return delegate.createEvent(device, timing); }
  @Override public byte[] ipcHandle(long devicePointer) { return delegate.ipcHandle(devicePointer); }
  @Override public IpcMapping openIpcHandle(int device, byte[] handle) { return delegate.openIpcHandle(device, handle); }
  @Override public PointerInfo pointerInfo(long address) { return delegate.pointerInfo(address); }
  @Override public PointerInfo requireDeviceMemory(long address, long size, int device) { return delegate.requireDeviceMemory(address, size, device); }
  @Override public byte[] compile(int device, String source, String name, String... options) { return delegate.compile(device, source, name, options); }
  @Override public GpuModule loadModule(int device, byte[] image) { return delegate.loadModule(device, image); }

  @Override
  public void launch(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    delegate.launch(function, grid, block, sharedMemBytes, stream, args);
  }

  @Override
  public void launchCooperative(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    delegate.launchCooperative(function, grid, block, sharedMemBytes, stream, args);
  }

  @Override
  public int maxActiveBlocksPerMultiprocessor(GpuFunction function, int blockThreads, int dynamicSharedBytes) {
    return delegate.maxActiveBlocksPerMultiprocessor(function, blockThreads, dynamicSharedBytes);
  }

  @Override public boolean canAccessPeer(int device, int peer) { return delegate.canAccessPeer(device, peer); }
  @Override public void enablePeerAccess(int device, int peer) { delegate.enablePeerAccess(device, peer); }
}
