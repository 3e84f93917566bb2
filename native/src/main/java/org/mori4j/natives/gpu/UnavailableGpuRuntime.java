package org.mori4j.natives.gpu;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;

/**
 * The runtime {@link GpuRuntimes#select} returns when no GPU runtime could be opened: {@link #available()}
 * is false, {@link #name()} is {@code "none"}, {@link #version()} is the reason, and every GPU call (from
 * {@link #deviceCount()} on) throws the same {@link NativeException}, whose message names every runtime
 * tried and why it failed.
 */
final class UnavailableGpuRuntime implements GpuRuntime {
  private final String reason;

  UnavailableGpuRuntime(String reason) {
    this.reason = reason;
  }

  private NativeException fail() {
    return new NativeException("gpu", -1, "NO_GPU_RUNTIME", reason);
  }

  @Override public String name() { return "none"; }
  @Override public boolean available() { return false; }
  @Override public String version() { return reason; }
  @Override public int deviceCount() { throw fail(); }
  @Override public void launchCooperative(GpuFunction f, Dim3 g, Dim3 b, int shared, GpuStream s, KernelArgs a) { throw fail(); }
  @Override public int maxActiveBlocksPerMultiprocessor(GpuFunction f, int blockThreads, int dynamicSharedBytes) { throw fail(); }
  @Override public String deviceName(int device) { throw fail(); }
  @Override public int computeCapability(int device) { throw fail(); }
  @Override public int multiprocessorCount(int device) { throw fail(); }
  @Override public String pciBusId(int device) { throw fail(); }
  @Override public DeviceMemoryInfo memoryInfo(int device) { throw fail(); }
  @Override public DeviceBuffer allocDevice(int device, long size) { throw fail(); }
  @Override public PinnedBuffer allocPinned(long size) { throw fail(); }
  @Override public HostRegistration registerHost(MemorySegment segment) { throw fail(); }
  @Override public void copyHostToDevice(long dst, MemorySegment src, long size) { throw fail(); }
  @Override public void copyDeviceToHost(MemorySegment dst, long src, long size) { throw fail(); }
  @Override public void copyDeviceToDevice(long dst, long src, long size) { throw fail(); }
  @Override public void copyPeer(long dst, int dstDevice, long src, int srcDevice, long size) { throw fail(); }
  @Override public void copyHostToDeviceAsync(long dst, MemorySegment src, long size, GpuStream stream) { throw fail(); }
  @Override public void copyDeviceToHostAsync(MemorySegment dst, long src, long size, GpuStream stream) { throw fail(); }
  @Override public void copyDeviceToDeviceAsync(long dst, long src, long size, GpuStream stream) { throw fail(); }
  @Override public void copyPeerAsync(long dst, int dstDevice, long src, int srcDevice, long size, GpuStream stream) { throw fail(); }
  @Override public void fill(long dst, byte value, long size) { throw fail(); }
  @Override public GpuStream createStream(int device) { throw fail(); }
  @Override public GpuEvent createEvent(int device, boolean timing) { throw fail(); }
  @Override public byte[] ipcHandle(long devicePointer) { throw fail(); }
  @Override public IpcMapping openIpcHandle(int device, byte[] handle) { throw fail(); }
  @Override public PointerInfo pointerInfo(long address) { throw fail(); }
  @Override public PointerInfo requireDeviceMemory(long address, long size, int device) { throw fail(); }
  @Override public byte[] compile(int device, String source, String name, String... options) { throw fail(); }
  @Override public GpuModule loadModule(int device, byte[] image) { throw fail(); }
  @Override public void launch(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) { throw fail(); }
  @Override public boolean canAccessPeer(int device, int peer) { throw fail(); }
  @Override public void enablePeerAccess(int device, int peer) { throw fail(); }
}
