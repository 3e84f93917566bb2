package org.mori4j.natives.hip;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.mori4j.natives.hip.HipConstants.hipMemcpyDeviceToDevice;
import static org.mori4j.natives.hip.HipConstants.hipMemcpyDeviceToHost;
import static org.mori4j.natives.hip.HipConstants.hipMemcpyHostToDevice;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.DeviceMemoryInfo;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.HostMemory;
import org.mori4j.natives.gpu.HostRegistration;
import org.mori4j.natives.gpu.IpcMapping;
import org.mori4j.natives.gpu.NativeGpuRuntime;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.natives.gpu.PointerInfo;

/**
 * {@link GpuRuntime} on HIP and hiprtc: streams, events, modules and launches are {@link NativeGpuRuntime}'s,
 * written once for CUDA and HIP, on HIP's symbols ({@link Hip#EXECUTION}); devices, memory, copies, IPC, pointer
 * checks and compilation are here. HIP has one current device per thread rather than CUDA's context
 * objects, so every operation first selects the device it acts on with {@code hipSetDevice} on the calling
 * thread; a thread-local remembers the last one set so that a poller calling {@code isComplete()} in a loop
 * pays that only once. Verified here by ABI conformance against Debian's HIP 5.2 headers and library only:
 * the project's GPU machines are NVIDIA, so no HIP path has run on an AMD GPU.
 */
public final class HipRuntime extends NativeGpuRuntime {
  private static final ThreadLocal<Integer> CURRENT = new ThreadLocal<>();

  private final int runtimeVersion;
  private final int driverVersion;

  private HipRuntime(int deviceCount, int runtimeVersion, int driverVersion) {
    super("hip", deviceCount, Hip.EXECUTION, Hip.GRID);
    this.runtimeVersion = runtimeVersion;
    this.driverVersion = driverVersion;
  }

  /**
   * Opens HIP: loads {@code libamdhip64}, runs {@code hipInit} and counts devices. Throws a
   * {@link NativeException} saying which step failed and why, which
   * {@link org.mori4j.natives.gpu.GpuRuntimes} reports when it falls back.
   */
  public static HipRuntime open() {
    Hip.library().require();
    Hip.CALLS.call("hipInit", () -> (int) Hip.INIT.invokeExact(0));
    int count = Hip.CALLS.outInt("hipGetDeviceCount", out -> (int) Hip.GET_DEVICE_COUNT.invokeExact(out));
    if (count == 0) throw new NativeException("hip", "hipGetDeviceCount", HipConstants.hipErrorNoDevice, "hipErrorNoDevice", "hipInit succeeded but there is no HIP device");
    int runtime = Hip.CALLS.outInt("hipRuntimeGetVersion", out -> (int) Hip.RUNTIME_GET_VERSION.invokeExact(out));
    int driver = Hip.CALLS.outInt("hipDriverGetVersion", out -> (int) Hip.DRIVER_GET_VERSION.invokeExact(out));
    return new HipRuntime(count, runtime, driver);
  }

  @Override
  public String version() {
    return "HIP runtime " + runtimeVersion + ", driver " + driverVersion + " (" + Hip.library().loadedName().orElse("?") + ")";
  }

  @Override
  public String deviceName(int device) {
    int handle = Hip.CALLS.outInt("hipDeviceGet", out -> (int) Hip.DEVICE_GET.invokeExact(out, checkDevice(device)));
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment name = arena.allocate(256);
      Hip.CALLS.call("hipDeviceGetName", () -> (int) Hip.DEVICE_GET_NAME.invokeExact(name, 256, handle));
      return name.getString(0);
    }
  }

  @Override
  public int computeCapability(int device) {
    return attribute(HipConstants.hipDeviceAttributeComputeCapabilityMajor, device) * 10
        + attribute(HipConstants.hipDeviceAttributeComputeCapabilityMinor, device);
  }

  @Override
  public int multiprocessorCount(int device) {
    return attribute(HipConstants.hipDeviceAttributeMultiprocessorCount, device);
  }

  @Override
  public String pciBusId(int device) {
    return String.format("%04x:%02x:%02x", attribute(HipConstants.hipDeviceAttributePciDomainID, device),
        attribute(HipConstants.hipDeviceAttributePciBusId, device), attribute(HipConstants.hipDeviceAttributePciDeviceId, device));
  }

  private int attribute(int attribute, int device) {
    int d = checkDevice(device);
    return Hip.CALLS.outInt("hipDeviceGetAttribute", out -> (int) Hip.DEVICE_GET_ATTRIBUTE.invokeExact(out, attribute, d));
  }

  @Override
  public DeviceMemoryInfo memoryInfo(int device) {
    bind(device);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment free = arena.allocate(HipLayouts.SIZE_T);
      MemorySegment total = arena.allocate(HipLayouts.SIZE_T);
      Hip.CALLS.call("hipMemGetInfo", () -> (int) Hip.MEM_GET_INFO.invokeExact(free, total));
      return new DeviceMemoryInfo(free.get(HipLayouts.SIZE_T, 0), total.get(HipLayouts.SIZE_T, 0));
    }
  }

  @Override
  public DeviceBuffer allocDevice(int device, long size) {
    bind(device);
    long pointer = Hip.CALLS.outLong("hipMalloc", out -> (int) Hip.MALLOC.invokeExact(out, size));
    return new DeviceBuffer("hip", device, pointer, size, () -> {
      bind(device);
      Hip.CALLS.call("hipFree", () -> (int) Hip.FREE.invokeExact(pointer));
    });
  }

  @Override
  public PinnedBuffer allocPinned(long size) {
    bindAny();
    MemorySegment raw = Hip.CALLS.outHandle("hipHostMalloc",
        out -> (int) Hip.HOST_MALLOC.invokeExact(out, size, HipConstants.hipHostMallocPortable));
    long address = raw.address();
    return new PinnedBuffer("hip", raw, size, () -> Hip.CALLS.call("hipHostFree", () -> (int) Hip.HOST_FREE.invokeExact(address)));
  }

  @Override
  public HostRegistration registerHost(MemorySegment segment) {
    long address = HostMemory.requireNative(segment, segment.byteSize());
    long size = segment.byteSize();
    bindAny();
    Hip.CALLS.call("hipHostRegister", () -> (int) Hip.HOST_REGISTER.invokeExact(address, size, HipConstants.hipHostRegisterPortable));
    return new HostRegistration("hip", segment, () -> Hip.CALLS.call("hipHostUnregister", () -> (int) Hip.HOST_UNREGISTER.invokeExact(address)));
  }

  @Override
  public void copyHostToDevice(long dst, MemorySegment src, long size) {
    copy(dst, HostMemory.requireNative(src, size), size, hipMemcpyHostToDevice);
  }

  @Override
  public void copyDeviceToHost(MemorySegment dst, long src, long size) {
    copy(HostMemory.requireNative(dst, size), src, size, hipMemcpyDeviceToHost);
  }

  @Override
  public void copyDeviceToDevice(long dst, long src, long size) {
    copy(dst, src, size, hipMemcpyDeviceToDevice);
  }

  private void copy(long dst, long src, long size, int kind) {
    bindAny();
    Hip.CALLS.call("hipMemcpy", () -> (int) Hip.MEMCPY.invokeExact(dst, src, size, kind));
  }

  @Override
  public void copyPeer(long dst, int dstDevice, long src, int srcDevice, long size) {
    checkDevice(dstDevice);
    bind(srcDevice);
    Hip.CALLS.call("hipMemcpyPeer", () -> (int) Hip.MEMCPY_PEER.invokeExact(dst, dstDevice, src, srcDevice, size));
  }

  @Override
  public void copyHostToDeviceAsync(long dst, MemorySegment src, long size, GpuStream stream) {
    copyAsync(dst, HostMemory.requireNative(src, size), size, hipMemcpyHostToDevice, stream);
  }

  @Override
  public void copyDeviceToHostAsync(MemorySegment dst, long src, long size, GpuStream stream) {
    copyAsync(HostMemory.requireNative(dst, size), src, size, hipMemcpyDeviceToHost, stream);
  }

  @Override
  public void copyDeviceToDeviceAsync(long dst, long src, long size, GpuStream stream) {
    copyAsync(dst, src, size, hipMemcpyDeviceToDevice, stream);
  }

  private void copyAsync(long dst, long src, long size, int kind, GpuStream stream) {
    MemorySegment s = boundStream(stream);
    Hip.CALLS.call("hipMemcpyAsync", () -> (int) Hip.MEMCPY_ASYNC.invokeExact(dst, src, size, kind, s));
  }

  @Override
  public void copyPeerAsync(long dst, int dstDevice, long src, int srcDevice, long size, GpuStream stream) {
    checkDevice(dstDevice);
    checkDevice(srcDevice);
    MemorySegment s = boundStream(stream);
    Hip.CALLS.call("hipMemcpyPeerAsync", () -> (int) Hip.MEMCPY_PEER_ASYNC.invokeExact(dst, dstDevice, src, srcDevice, size, s));
  }

  @Override
  public void fill(long dst, byte value, long size) {
    bindAny();
    int v = value & 0xFF;
    Hip.CALLS.call("hipMemset", () -> (int) Hip.MEMSET.invokeExact(dst, v, size));
  }

  @Override
  public byte[] ipcHandle(long devicePointer) {
    bindAny();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment handle = arena.allocate(HipLayouts.HIP_IPC_MEM_HANDLE);
      Hip.CALLS.call("hipIpcGetMemHandle", () -> (int) Hip.IPC_GET_MEM_HANDLE.invokeExact(handle, devicePointer));
      return handle.toArray(JAVA_BYTE);
    }
  }

  @Override
  public IpcMapping openIpcHandle(int device, byte[] handle) {
    if (handle.length != HipLayouts.HIP_IPC_MEM_HANDLE.byteSize()) {
      throw new IllegalArgumentException("a HIP IPC handle is " + HipLayouts.HIP_IPC_MEM_HANDLE.byteSize() + " bytes, not " + handle.length);
    }
    bind(device);
    long pointer;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment value = arena.allocate(HipLayouts.HIP_IPC_MEM_HANDLE);
      MemorySegment.copy(handle, 0, value, JAVA_BYTE, 0, handle.length);
      pointer = Hip.CALLS.outLong("hipIpcOpenMemHandle",
          out -> (int) Hip.IPC_OPEN_MEM_HANDLE.invokeExact(out, value, HipConstants.hipIpcMemLazyEnablePeerAccess));
    }
    long size = addressRange(pointer)[1];
    return new IpcMapping("hip", device, pointer, size, () -> {
      bind(device);
      Hip.CALLS.call("hipIpcCloseMemHandle", () -> (int) Hip.IPC_CLOSE_MEM_HANDLE.invokeExact(pointer));
    });
  }

  private static long[] addressRange(long pointer) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment base = arena.allocate(HipLayouts.DEVICE_POINTER);
      MemorySegment size = arena.allocate(HipLayouts.SIZE_T);
      Hip.CALLS.call("hipMemGetAddressRange", () -> (int) Hip.MEM_GET_ADDRESS_RANGE.invokeExact(base, size, pointer));
      return new long[] {base.get(HipLayouts.DEVICE_POINTER, 0), size.get(HipLayouts.SIZE_T, 0)};
    }
  }

  @Override
  public PointerInfo pointerInfo(long address) {
    bindAny();
    HipPointerAttributes a;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment attributes = arena.allocate(HipLayouts.HIP_POINTER_ATTRIBUTE);
      int rc = Hip.CALLS.invoke(() -> (int) Hip.POINTER_GET_ATTRIBUTES.invokeExact(attributes, address));
      // HIP 5 refuses an address it did not allocate or register (hipErrorInvalidValue); ROCm 6 answers
      // "unregistered" instead. Both mean: not HIP memory.
      if (rc != HipConstants.hipSuccess) {
        return new PointerInfo(address, false, -1, 0, 0, "unknown to HIP (" + Hip.errorName(rc) + ")");
      }
      a = HipPointerAttributes.read(attributes, runtimeVersion);
    }
    if (!a.deviceMemory()) return new PointerInfo(address, false, -1, 0, 0, a.memoryTypeName());
    long[] range = addressRange(address);
    return new PointerInfo(address, true, a.device(), range[0], range[1], a.memoryTypeName());
  }

  @Override
  public byte[] compile(int device, String source, String name, String... options) {
    // Without --offload-arch hiprtc compiles for the current device, so make it the one asked for.
    bind(device);
    return Hiprtc.COMPILER.compile(source, name, options);
  }

  @Override
  public boolean canAccessPeer(int device, int peer) {
    int d = checkDevice(device);
    int p = checkDevice(peer);
    return Hip.CALLS.outInt("hipDeviceCanAccessPeer", out -> (int) Hip.DEVICE_CAN_ACCESS_PEER.invokeExact(out, d, p)) != 0;
  }

  @Override
  public void enablePeerAccess(int device, int peer) {
    int p = checkDevice(peer);
    bind(device);
    int rc = Hip.CALLS.invoke(() -> (int) Hip.DEVICE_ENABLE_PEER_ACCESS.invokeExact(p, 0));
    if (rc != HipConstants.hipErrorPeerAccessAlreadyEnabled) Hip.CALLS.check(rc, "hipDeviceEnablePeerAccess");
  }

  /** Makes {@code device} current on this thread. */
  @Override
  protected void bind(int device) {
    Integer current = CURRENT.get();
    if (current == null || current != checkDevice(device)) {
      Hip.setDevice(device);
      CURRENT.set(device);
    }
  }

  /** For operations that only need some device selected (unified addressing finds the memory's own). */
  private void bindAny() {
    if (CURRENT.get() == null) bind(0);
  }
}
