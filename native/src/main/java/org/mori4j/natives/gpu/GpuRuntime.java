package org.mori4j.natives.gpu;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;

/**
 * The GPU operations the engine needs, the same for NVIDIA (CUDA driver API, NVRTC) and AMD (HIP, hiprtc):
 * devices, device and pinned host memory, host registration, copies (synchronous and on streams; host to
 * device, device to host, device to device and between devices), streams and events, IPC handles for
 * sharing device memory with another process, pointer checks, run-time compiled modules and kernel
 * launches, and peer access. Pick an implementation with {@link GpuRuntimes#select}. Device pointers are
 * {@code long}s; host memory is a {@link MemorySegment}, whose size bounds every copy into or out of it.
 * Every method may be called from any thread: implementations make the device's context current on the
 * calling thread themselves. Failures are {@link org.mori4j.natives.NativeException}s that name the native
 * function, its error code and the code's name.
 */
public interface GpuRuntime {
  /** {@code "cuda"} or {@code "hip"} ({@code "none"} when no runtime could be opened). */
  String name();

  /** False only for the stand-in {@link GpuRuntimes#select} returns when neither runtime could be opened. */
  default boolean available() {
    return true;
  }

  /** Runtime and driver versions, for logs. */
  String version();

  int deviceCount();

  String deviceName(int device);

  /** Compute capability for CUDA ({@code major * 10 + minor}, e.g. 90), the gfx major/minor pair for HIP. */
  int computeCapability(int device);

  /** Streaming multiprocessors (CUDA) or compute units (HIP) of {@code device}: how wide a kernel grid pays off. */
  int multiprocessorCount(int device);

  /**
   * Where {@code device} sits on the PCI bus, as {@code "dddd:bb:dd"} (domain, bus, device; hex). The same
   * physical GPU has the same location in every process of the machine, whatever ordinal each process gives
   * it ({@code CUDA_VISIBLE_DEVICES}), so processes name devices to each other this way.
   */
  String pciBusId(int device);

  /** Free and total memory of {@code device}. */
  DeviceMemoryInfo memoryInfo(int device);

  DeviceBuffer allocDevice(int device, long size);

  PinnedBuffer allocPinned(long size);

  /**
   * The address at which kernels on {@code device} read and write {@code buffer} in place (page-locked memory mapped
   * into the device's address space, reached over PCIe), or 0 when this runtime cannot tell that they can: the data
   * then has to be copied into device memory for a kernel. Valid while {@code buffer} is open.
   */
  default long mappedPointer(PinnedBuffer buffer, int device) {
    return 0;
  }

  /** Page-locks {@code segment} for fast and asynchronous copies until the registration is closed. */
  HostRegistration registerHost(MemorySegment segment);

  void copyHostToDevice(long dst, MemorySegment src, long size);

  void copyDeviceToHost(MemorySegment dst, long src, long size);

  void copyDeviceToDevice(long dst, long src, long size);

  /** Copies between two devices' memory (over NVLink/XGMI where present). */
  void copyPeer(long dst, int dstDevice, long src, int srcDevice, long size);

  /** Asynchronous on {@code stream}; {@code src} should be pinned or registered or the copy is synchronous. */
  void copyHostToDeviceAsync(long dst, MemorySegment src, long size, GpuStream stream);

  void copyDeviceToHostAsync(MemorySegment dst, long src, long size, GpuStream stream);

  void copyDeviceToDeviceAsync(long dst, long src, long size, GpuStream stream);

  void copyPeerAsync(long dst, int dstDevice, long src, int srcDevice, long size, GpuStream stream);

  /** Sets {@code size} bytes of device memory to {@code value}. */
  void fill(long dst, byte value, long size);

  GpuStream createStream(int device);

  /** An event; with {@code timing} false it is cheaper and cannot be used for elapsed time. */
  GpuEvent createEvent(int device, boolean timing);

  /** The 64-byte IPC handle of the allocation that {@code devicePointer} starts. */
  byte[] ipcHandle(long devicePointer);

  /** Opens another process's allocation from its {@link #ipcHandle} on {@code device}. */
  IpcMapping openIpcHandle(int device, byte[] handle);

  /** What the driver knows about {@code address}; never throws for an unknown address. */
  PointerInfo pointerInfo(long address);

  /**
   * Checks that {@code [address, address + size)} is device memory on {@code device} inside one allocation,
   * and says exactly what is wrong otherwise: the engine calls this before it registers GPU memory, so a bad
   * pointer is refused at registration instead of faulting in a copy later.
   */
  default PointerInfo requireDeviceMemory(long address, long size, int device) {
    String where = "0x" + Long.toHexString(address) + " (+" + size + " bytes)";
    if (size <= 0) throw new IllegalArgumentException("GPU memory " + where + ": size must be positive");
    PointerInfo info = pointerInfo(address);
    if (!info.deviceMemory()) {
      throw new IllegalArgumentException("GPU memory " + where + " is not " + name() + " device memory (driver says: " + info.memoryType() + ")");
    }
    if (info.device() != device) {
      throw new IllegalArgumentException("GPU memory " + where + " is on device " + info.device() + ", not device " + device);
    }
    if (!info.covers(address, size)) {
      throw new IllegalArgumentException("GPU memory " + where + " runs past its allocation [0x" + Long.toHexString(info.rangeStart())
          + ", +" + info.rangeSize() + " bytes)");
    }
    return info;
  }

  /**
   * Compiles GPU C++ source at run time (NVRTC or hiprtc) for {@code device}'s architecture unless
   * {@code options} name one; the result is ready for {@link #loadModule}. A compile error throws with the
   * compiler's log in the message.
   */
  byte[] compile(int device, String source, String name, String... options);

  GpuModule loadModule(int device, byte[] image);

  /** Launches {@code function} on {@code stream} (null: the device's default stream); returns at once. */
  void launch(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args);

  /**
   * Launches {@code function} with all its blocks resident at once, so that they may wait for each other (a
   * grid-wide barrier, signals between blocks); the driver refuses a grid the GPU cannot hold instead of
   * letting it deadlock. Size the grid with {@link #maxActiveBlocksPerMultiprocessor} times
   * {@link #multiprocessorCount}. Runtimes without it (test devices) throw {@link UnsupportedOperationException}.
   */
  default void launchCooperative(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    throw new UnsupportedOperationException("GPU runtime " + name() + " has no cooperative launch");
  }

  /**
   * How many blocks of {@code function} with {@code blockThreads} threads and {@code dynamicSharedBytes} of
   * dynamic shared memory one multiprocessor holds at once (the driver's occupancy calculator).
   */
  default int maxActiveBlocksPerMultiprocessor(GpuFunction function, int blockThreads, int dynamicSharedBytes) {
    throw new UnsupportedOperationException("GPU runtime " + name() + " has no occupancy calculator");
  }

  boolean canAccessPeer(int device, int peer);

  /** Lets kernels and copies on {@code device} reach {@code peer}'s memory directly; idempotent. */
  void enablePeerAccess(int device, int peer);
}
