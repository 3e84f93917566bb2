package org.mori4j.natives.cuda;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.DeviceMemoryInfo;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.HostMemory;
import org.mori4j.natives.gpu.HostRegistration;
import org.mori4j.natives.gpu.IpcMapping;
import org.mori4j.natives.gpu.KernelArgs;
import org.mori4j.natives.gpu.NativeGpuRuntime;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.natives.gpu.PointerInfo;

/**
 * {@link GpuRuntime} on the CUDA driver API and NVRTC: streams, events, modules and launches are
 * {@link NativeGpuRuntime}'s, written once for CUDA and HIP, on CUDA's symbols ({@link CudaExecutionApi#API});
 * devices, memory, copies, IPC, pointer checks and compilation are here. It works in each device's primary
 * context (the one the CUDA runtime API and libraries such as PyTorch also use, so device pointers from them are
 * valid here), retained on first use and kept for the life of the process. The driver's current context is per thread,
 * so every operation first makes the right one current on the calling thread; a thread-local remembers the
 * last one set so that a poller calling {@code isComplete()} in a loop pays that only once.
 */
public final class CudaRuntime extends NativeGpuRuntime {
  private static final ThreadLocal<MemorySegment> CURRENT = new ThreadLocal<>();

  private final AtomicReferenceArray<MemorySegment> contexts;
  private final int driverVersion;

  private CudaRuntime(int deviceCount, int driverVersion) {
    super("cuda", deviceCount, CudaExecutionApi.API, CudaExecutionApi.GRID);
    this.contexts = new AtomicReferenceArray<>(deviceCount);
    this.driverVersion = driverVersion;
  }

  /**
   * Opens the driver: loads {@code libcuda.so.1}, runs {@code cuInit} and counts devices. Throws a
   * {@link NativeException} saying which step failed and why (library not found, {@code cuInit} error, no
   * device), which {@link org.mori4j.natives.gpu.GpuRuntimes} reports when it falls back.
   */
  public static CudaRuntime open() {
    CudaDriver.library().require();
    CudaDriver.init();
    int count = CudaDriver.deviceCount();
    if (count == 0) throw new NativeException("cuda", "cuDeviceGetCount", CudaConstants.CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "cuInit succeeded but there is no CUDA device");
    return new CudaRuntime(count, CudaDriver.driverVersion());
  }

  @Override
  public String version() {
    String nvrtc;
    try {
      int[] v = Nvrtc.version();
      nvrtc = "NVRTC " + v[0] + "." + v[1];
    } catch (NativeException e) {
      nvrtc = "no NVRTC (" + e.getMessage() + ")";
    }
    return "CUDA driver " + driverVersion / 1000 + "." + driverVersion % 1000 / 10 + " (" + CudaDriver.library().loadedName().orElse("?") + "), " + nvrtc;
  }

  @Override
  public String deviceName(int device) {
    return CudaDriver.deviceName(CudaDriver.device(checkDevice(device)));
  }

  @Override
  public int computeCapability(int device) {
    int handle = CudaDriver.device(checkDevice(device));
    return CudaDriver.deviceAttribute(CudaConstants.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle) * 10
        + CudaDriver.deviceAttribute(CudaConstants.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle);
  }

  @Override
  public int multiprocessorCount(int device) {
    return CudaDriver.deviceAttribute(CudaConstants.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, CudaDriver.device(checkDevice(device)));
  }

  @Override
  public String pciBusId(int device) {
    int handle = CudaDriver.device(checkDevice(device));
    return String.format("%04x:%02x:%02x", CudaDriver.deviceAttribute(CudaConstants.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, handle),
        CudaDriver.deviceAttribute(CudaConstants.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, handle),
        CudaDriver.deviceAttribute(CudaConstants.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, handle));
  }

  @Override
  public DeviceMemoryInfo memoryInfo(int device) {
    bind(device);
    long[] freeAndTotal = CudaMemoryApi.memGetInfo();
    return new DeviceMemoryInfo(freeAndTotal[0], freeAndTotal[1]);
  }

  @Override
  public DeviceBuffer allocDevice(int device, long size) {
    bind(device);
    long pointer = CudaMemoryApi.memAlloc(size);
    return new DeviceBuffer("cuda", device, pointer, size, () -> {
      bind(device);
      CudaMemoryApi.memFree(pointer);
    });
  }

  @Override
  public PinnedBuffer allocPinned(long size) {
    bindAny();
    MemorySegment raw = CudaMemoryApi.memAllocHost(size);
    return new PinnedBuffer("cuda", raw, size, () -> {
      bindAny();
      CudaMemoryApi.memFreeHost(raw);
    });
  }

  /** cuMemAllocHost memory is mapped into every context under unified addressing; the driver names the address. */
  @Override
  public long mappedPointer(PinnedBuffer buffer, int device) {
    bind(device);
    return CudaMemoryApi.memHostGetDevicePointer(buffer.segment());
  }

  @Override
  public HostRegistration registerHost(MemorySegment segment) {
    HostMemory.requireNative(segment, segment.byteSize());
    bindAny();
    CudaMemoryApi.memHostRegister(segment, segment.byteSize(), CudaConstants.CU_MEMHOSTREGISTER_PORTABLE);
    return new HostRegistration("cuda", segment, () -> {
      bindAny();
      CudaMemoryApi.memHostUnregister(segment);
    });
  }

  @Override
  public void copyHostToDevice(long dst, MemorySegment src, long size) {
    long host = HostMemory.requireNative(src, size);
    bindAny();
    CudaMemoryApi.memcpyHtoD(dst, host, size);
  }

  @Override
  public void copyDeviceToHost(MemorySegment dst, long src, long size) {
    long host = HostMemory.requireNative(dst, size);
    bindAny();
    CudaMemoryApi.memcpyDtoH(host, src, size);
  }

  @Override
  public void copyDeviceToDevice(long dst, long src, long size) {
    bindAny();
    CudaMemoryApi.memcpyDtoD(dst, src, size);
  }

  @Override
  public void copyPeer(long dst, int dstDevice, long src, int srcDevice, long size) {
    MemorySegment dstContext = context(dstDevice);
    bind(srcDevice);
    CudaMemoryApi.memcpyPeer(dst, dstContext, src, context(srcDevice), size);
  }

  @Override
  public void copyHostToDeviceAsync(long dst, MemorySegment src, long size, GpuStream stream) {
    long host = HostMemory.requireNative(src, size);
    CudaMemoryApi.memcpyHtoDAsync(dst, host, size, boundStream(stream));
  }

  @Override
  public void copyDeviceToHostAsync(MemorySegment dst, long src, long size, GpuStream stream) {
    long host = HostMemory.requireNative(dst, size);
    CudaMemoryApi.memcpyDtoHAsync(host, src, size, boundStream(stream));
  }

  @Override
  public void copyDeviceToDeviceAsync(long dst, long src, long size, GpuStream stream) {
    CudaMemoryApi.memcpyDtoDAsync(dst, src, size, boundStream(stream));
  }

  @Override
  public void copyPeerAsync(long dst, int dstDevice, long src, int srcDevice, long size, GpuStream stream) {
    MemorySegment dstContext = context(dstDevice);
    MemorySegment srcContext = context(srcDevice);
    CudaMemoryApi.memcpyPeerAsync(dst, dstContext, src, srcContext, size, boundStream(stream));
  }

  @Override
  public void fill(long dst, byte value, long size) {
    bindAny();
    CudaMemoryApi.memsetD8(dst, value, size);
  }

  @Override
  public byte[] ipcHandle(long devicePointer) {
    bindAny();
    return CudaMemoryApi.ipcGetMemHandle(devicePointer);
  }

  @Override
  public IpcMapping openIpcHandle(int device, byte[] handle) {
    bind(device);
    long pointer = CudaMemoryApi.ipcOpenMemHandle(handle, CudaConstants.CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    long size = CudaMemoryApi.memGetAddressRange(pointer)[1];
    return new IpcMapping("cuda", device, pointer, size, () -> {
      bind(device);
      CudaMemoryApi.ipcCloseMemHandle(pointer);
    });
  }

  @Override
  public PointerInfo pointerInfo(long address) {
    bindAny();
    CudaPointerAttributes a;
    try {
      a = CudaDriver.pointerAttributes(address);
    } catch (NativeException e) {
      // Documented to succeed for unknown addresses; some drivers refuse address 0 or odd ranges instead.
      return new PointerInfo(address, false, -1, 0, 0, "unknown to CUDA (" + e.getMessage() + ")");
    }
    boolean device = a.memoryType() == CudaConstants.CU_MEMORYTYPE_DEVICE;
    return new PointerInfo(address, device, device ? a.deviceOrdinal() : -1, a.rangeStart(), a.rangeSize(), a.memoryTypeName());
  }

  @Override
  public byte[] compile(int device, String source, String name, String... options) {
    List<String> all = new ArrayList<>(List.of(options));
    if (all.stream().noneMatch(o -> o.startsWith("-arch") || o.startsWith("--gpu-architecture"))) {
      // A cubin for this exact device: loads without a PTX JIT step at module load.
      all.add("-arch=sm_" + computeCapability(device));
    }
    return Nvrtc.compile(source, name, all.toArray(String[]::new));
  }

  /** Every kernel now, while nothing of ours spins: see {@link CudaExecutionApi#loadAllFunctions}. */
  @Override
  protected void prepareModule(MemorySegment module) {
    CudaExecutionApi.loadAllFunctions(module);
  }

  /** Lays the arguments out in the process-wide spare ({@link LaunchScratch}) when it is free and large enough. */
  @Override
  protected void launchOn(MemorySegment streamHandle, GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, KernelArgs args) {
    LaunchScratch scratch = LaunchScratch.take(args);
    if (scratch == null) {
      super.launchOn(streamHandle, function, grid, block, sharedMemBytes, args);
      return;
    }
    try {
      launchKernel(function, grid, block, sharedMemBytes, streamHandle, scratch.write(args));
    } finally {
      scratch.giveBack();
    }
  }

  @Override
  public boolean canAccessPeer(int device, int peer) {
    return CudaDriver.deviceCanAccessPeer(CudaDriver.device(checkDevice(device)), CudaDriver.device(checkDevice(peer)));
  }

  @Override
  public void enablePeerAccess(int device, int peer) {
    MemorySegment peerContext = context(peer);
    bind(device);
    CudaDriver.ctxEnablePeerAccess(peerContext);
  }

  /** Makes {@code device}'s primary context current on this thread. */
  @Override
  protected void bind(int device) {
    MemorySegment context = context(device);
    if (!context.equals(CURRENT.get())) {
      CudaDriver.setCurrentContext(context);
      CURRENT.set(context);
    }
  }

  /** For operations that only need some context (unified addressing finds the memory's own device). */
  private void bindAny() {
    if (CURRENT.get() == null) bind(0);
  }

  private MemorySegment context(int device) {
    MemorySegment context = contexts.get(checkDevice(device));
    return context != null ? context : retain(device);
  }

  private synchronized MemorySegment retain(int device) {
    MemorySegment context = contexts.get(device);
    if (context == null) {
      context = CudaDriver.primaryContextRetain(CudaDriver.device(device));
      contexts.set(device, context);
    }
    return context;
  }
}
