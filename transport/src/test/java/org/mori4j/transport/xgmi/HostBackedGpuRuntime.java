package org.mori4j.transport.xgmi;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.mori4j.natives.NativeException;
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
 * A genuine in-memory GPU for the XGMI backend's CPU tests (as {@code HostBackedDeviceStaging} is for TCP's
 * staging): "device memory" is a shared memory file mapped into this process, and its address is the device
 * pointer; every copy really moves bytes, asynchronously, in order, on the stream's own thread, after a random
 * delay, so the worker must wait for events; events complete when the stream reaches them. An IPC handle names
 * the file (in the device's directory, which processes playing one host share), and opening it maps the file a
 * second time at another address, which is what another process
 * would get (a handle of a freed allocation, or garbage, fails with a {@link NativeException}, as the driver's
 * does). The batch kernel is run by name on the stream thread: it reads the block table from "device" memory
 * and moves each block, so the backend's table building, upload and launch arguments are what is tested.
 * Unlike CUDA it opens a handle in the exporting process too, which is how one JVM plays two processes. Its
 * streams and events are {@link HostBackedStream} and {@link HostBackedEvent}, its modules and kernels
 * {@link HostBackedKernels}.
 *
 * <p>What it cannot show, and the {@code gpu}-tagged tests on a real GPU do: the CUDA kernel itself, driver
 * IPC, NVLink peer copies, real timings.
 */
public final class HostBackedGpuRuntime implements GpuRuntime {
  private static final long MAGIC = 0x4d344a49_50434831L; // "M4JIPCH1"
  private static final AtomicLong FILES = new AtomicLong();

  private final int devices;
  final int maxDelayMicros;
  private final Path dir;
  private final Arena arena = Arena.ofShared();
  /** Allocations by base address: size, device, file. */
  private final ConcurrentSkipListMap<Long, Allocation> allocations = new ConcurrentSkipListMap<>();
  final AtomicInteger liveStreams = new AtomicInteger();
  final AtomicInteger liveEvents = new AtomicInteger();
  final AtomicInteger liveModules = new AtomicInteger();
  final AtomicInteger liveMappings = new AtomicInteger();
  final AtomicInteger launches = new AtomicInteger();
  private volatile String ipcOpenFailure;
  final AtomicInteger copies = new AtomicInteger();
  final Map<String, Boolean> peerEnabled = new ConcurrentHashMap<>();
  /** While set, stream threads hold their next piece of work (a stalled device), for at most a minute. */
  volatile boolean stalled;

  /** Stalls (true) or releases (false) every stream: work queued meanwhile runs, in order, once released. */
  public void stallStreams(boolean on) {
    stalled = on;
  }

  /** A copy or kernel that touches this address fails on the stream, as an illegal address would. */
  volatile long poisonAddress = -1;

  /**
   * A kernel other tests teach the device (the shmem module's barrier kernel, say): its body runs on the
   * stream's thread, in stream order, with the launch's argument bytes and the module's globals; a body that
   * throws fails the stream as a faulting kernel would.
   */
  public interface KernelBody {
    void run(Launch launch);
  }

  /** One launch as a {@link KernelBody} sees it: argument bytes in parameter order, and the module's globals by name. */
  public record Launch(GpuFunction function, Dim3 grid, Dim3 block, java.util.List<byte[]> args, Map<String, GpuModule.GlobalSymbol> globals) {}

  private final HostBackedKernels kernels = new HostBackedKernels(this);

  /** Kernels named {@code name} run {@code body} from now on (the gather kernel keeps its built-in contract). */
  public void defineKernel(String name, KernelBody body) {
    kernels.defineKernel(name, body);
  }

  /**
   * Every module loaded from now on whose source mentions {@code name} gets a zeroed {@code __device__} global
   * of {@code size} bytes under that name, in device memory of the module's device, freed with the module.
   */
  public void defineGlobal(String name, long size) {
    kernels.defineGlobal(name, size);
  }

  /** IPC mappings open now. */
  public int openMappings() {
    return liveMappings.get();
  }

  /** Modules loaded and not closed. */
  public int openModules() {
    return liveModules.get();
  }

  /** Device allocations not freed. */
  public int liveAllocations() {
    return allocations.size();
  }

  /** From now on every IPC handle fails to open with {@code error} (null: they open again), as a driver may refuse one. */
  public void failIpcOpens(String error) {
    ipcOpenFailure = error;
  }

  /** Kernel launches so far (a batch the engine could not join into one copy is one launch). */
  public int launchCount() {
    return launches.get();
  }

  private record Allocation(long base, long size, int device, Path file) {}

  private final boolean peerAccess;

  public HostBackedGpuRuntime(int devices, int maxDelayMicros) {
    this(devices, maxDelayMicros, true);
  }

  /** {@code peerAccess} false: no two devices can reach each other (PCIe without P2P). */
  public HostBackedGpuRuntime(int devices, int maxDelayMicros, boolean peerAccess) {
    this(devices, maxDelayMicros, peerAccess, newDirectory());
  }

  /**
   * A device whose memory files live in {@code dir}: processes given the same directory play processes of one
   * host sharing a GPU, whose IPC handles open in each other.
   */
  public HostBackedGpuRuntime(int devices, int maxDelayMicros, boolean peerAccess, Path dir) {
    this.peerAccess = peerAccess;
    this.devices = devices;
    this.maxDelayMicros = maxDelayMicros;
    this.dir = dir;
  }

  /** A fresh directory for device memory files, in /dev/shm where there is one. */
  public static Path newDirectory() {
    Path shm = Path.of("/dev/shm");
    try {
      return Files.createTempDirectory(Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")), "m4j-gpu");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  static NativeException fail(String function, String why) {
    return new NativeException("memory", function, 1, "ERROR_INVALID_VALUE", function + " failed: " + why);
  }

  @Override public String name() { return "memory"; }
  @Override public String version() { return "host-backed test device"; }
  @Override public int deviceCount() { return devices; }
  @Override public String deviceName(int device) { return "host-backed device " + check(device); }
  @Override public int computeCapability(int device) { check(device); return 90; }
  @Override public int multiprocessorCount(int device) { check(device); return 4; }
  @Override public String pciBusId(int device) { return String.format("0000:%02x:00", 0x10 + check(device)); }

  @Override
  public DeviceMemoryInfo memoryInfo(int device) {
    long used = allocations.values().stream().filter(a -> a.device == device).mapToLong(Allocation::size).sum();
    return new DeviceMemoryInfo((64L << 30) - used, 64L << 30);
  }

  private int check(int device) {
    if (device < 0 || device >= devices) throw new IllegalArgumentException("no device " + device);
    return device;
  }

  @Override
  public DeviceBuffer allocDevice(int device, long size) {
    check(device);
    Path file = dir.resolve("p" + ProcessHandle.current().pid() + "-" + FILES.incrementAndGet());
    MemorySegment seg = map(file, size, true);
    Allocation a = new Allocation(seg.address(), size, device, file);
    allocations.put(a.base, a);
    return new DeviceBuffer("memory", device, seg.address(), size, () -> {
      allocations.remove(a.base);
      try {
        Files.deleteIfExists(file);
      } catch (IOException ignored) {
        // the mapping dies with the arena
      }
    });
  }

  private MemorySegment map(Path file, long size, boolean create) {
    try (FileChannel ch = create ? FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE)
        : FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      if (create) ch.truncate(size);
      else if (ch.size() < size) throw fail("cuIpcOpenMemHandle", "file shorter than the handle says");
      // a fresh arena per mapping, so that closing a mapping or freeing unmaps it like the driver would
      return ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
    } catch (IOException e) {
      throw fail(create ? "cuMemAlloc" : "cuIpcOpenMemHandle", e.toString());
    }
  }

  @Override
  public PinnedBuffer allocPinned(long size) {
    Arena a = Arena.ofShared();
    MemorySegment seg = a.allocate(size, 64);
    return new PinnedBuffer("memory", seg, size, a::close);
  }

  /** Switches {@link #mappedPointer} off (0), as for a runtime that cannot map pinned memory; on by default. */
  volatile boolean mapsPinned = true;

  /** Kernels here read host memory by address, so a pinned buffer is read in place, as a GPU reads mapped memory. */
  @Override
  public long mappedPointer(PinnedBuffer buffer, int device) {
    check(device);
    return mapsPinned ? buffer.address() : 0;
  }

  @Override
  public HostRegistration registerHost(MemorySegment segment) {
    return new HostRegistration("memory", segment, () -> {});
  }

  static MemorySegment at(long address, long size) {
    return MemorySegment.ofAddress(address).reinterpret(size);
  }

  void move(long dst, long src, long size) {
    if (poisonAddress >= 0 && (poisonAddress >= dst && poisonAddress < dst + size || poisonAddress >= src && poisonAddress < src + size))
      throw fail("copy", "an illegal address was encountered (poisoned 0x" + Long.toHexString(poisonAddress) + ")");
    MemorySegment.copy(at(src, size), 0, at(dst, size), 0, size);
    copies.incrementAndGet();
  }

  @Override public void copyHostToDevice(long dst, MemorySegment src, long size) { move(dst, src.address(), size); }
  @Override public void copyDeviceToHost(MemorySegment dst, long src, long size) { move(dst.address(), src, size); }
  @Override public void copyDeviceToDevice(long dst, long src, long size) { move(dst, src, size); }
  @Override public void copyPeer(long dst, int dstDevice, long src, int srcDevice, long size) { move(dst, src, size); }
  @Override public void fill(long dst, byte value, long size) { at(dst, size).fill(value); }

  @Override
  public void copyHostToDeviceAsync(long dst, MemorySegment src, long size, GpuStream stream) {
    long s = src.address();
    ((HostBackedStream) stream).enqueue(() -> move(dst, s, size));
  }

  @Override
  public void copyDeviceToHostAsync(MemorySegment dst, long src, long size, GpuStream stream) {
    long d = dst.address();
    ((HostBackedStream) stream).enqueue(() -> move(d, src, size));
  }

  @Override
  public void copyDeviceToDeviceAsync(long dst, long src, long size, GpuStream stream) {
    ((HostBackedStream) stream).enqueue(() -> move(dst, src, size));
  }

  @Override
  public void copyPeerAsync(long dst, int dstDevice, long src, int srcDevice, long size, GpuStream stream) {
    if (dstDevice != srcDevice && !peerEnabled.containsKey(srcDevice + "->" + dstDevice) && !peerEnabled.containsKey(dstDevice + "->" + srcDevice))
      throw fail("cuMemcpyPeerAsync", "peer access " + srcDevice + "<->" + dstDevice + " was never enabled (the test device insists)");
    ((HostBackedStream) stream).enqueue(() -> move(dst, src, size));
  }

  @Override
  public GpuStream createStream(int device) {
    return new HostBackedStream(this, check(device));
  }

  @Override
  public GpuEvent createEvent(int device, boolean timing) {
    return new HostBackedEvent(this, check(device), timing);
  }

  @Override
  public byte[] ipcHandle(long devicePointer) {
    Allocation a = allocations.get(devicePointer);
    if (a == null) throw fail("cuIpcGetMemHandle", "0x" + Long.toHexString(devicePointer) + " is not the base of an allocation");
    byte[] path = a.file.getFileName().toString().getBytes(StandardCharsets.UTF_8);
    if (path.length > 64 - 17) throw new IllegalStateException("file name too long for a 64-byte handle: " + a.file);
    return ByteBuffer.allocate(64).putLong(MAGIC).putLong(a.size).put((byte) path.length).put(path).array();
  }

  @Override
  public IpcMapping openIpcHandle(int device, byte[] handle) {
    check(device);
    String refused = ipcOpenFailure;
    if (refused != null) throw fail("cuIpcOpenMemHandle", refused);
    ByteBuffer b = ByteBuffer.wrap(handle);
    if (handle.length != 64 || b.getLong() != MAGIC) throw fail("cuIpcOpenMemHandle", "not an IPC handle");
    long size = b.getLong();
    int n = b.get() & 0xff;
    if (size <= 0 || n > 64 - 17) throw fail("cuIpcOpenMemHandle", "not an IPC handle");
    byte[] path = new byte[n];
    b.get(path);
    String name = new String(path, StandardCharsets.UTF_8);
    if (name.isEmpty() || name.contains("/") || name.contains("..")) throw fail("cuIpcOpenMemHandle", "not an IPC handle");
    Path file = dir.resolve(name);
    if (!Files.exists(file)) throw fail("cuIpcOpenMemHandle", "the allocation is gone (stale handle)");
    MemorySegment seg = map(file, size, false);
    liveMappings.incrementAndGet();
    return new IpcMapping("memory", device, seg.address(), size, liveMappings::decrementAndGet);
  }

  @Override
  public PointerInfo pointerInfo(long address) {
    Map.Entry<Long, Allocation> e = allocations.floorEntry(address);
    if (e == null || address >= e.getKey() + e.getValue().size) return new PointerInfo(address, false, -1, 0, 0, "unknown");
    Allocation a = e.getValue();
    return new PointerInfo(address, true, a.device, a.base, a.size, "HOST_BACKED_DEVICE");
  }

  @Override
  public byte[] compile(int device, String source, String name, String... options) {
    return source.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public GpuModule loadModule(int device, byte[] image) {
    return kernels.loadModule(device, image);
  }

  /**
   * Runs a kernel a test defined ({@link #defineKernel}), else the gather kernel's contract (see
   * {@link HostBackedKernels}), in stream order.
   */
  @Override
  public void launch(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    kernels.launch(function, grid, block, sharedMemBytes, stream, args);
  }

  @Override
  public boolean canAccessPeer(int device, int peer) {
    return peerAccess && check(device) != check(peer);
  }

  @Override
  public void enablePeerAccess(int device, int peer) {
    peerEnabled.put(device + "->" + peer, true);
  }

  /** Frees every mapping (the whole arena) and deletes the directory; tests call it last. */
  public void shutdown() {
    arena.close();
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) Files.deleteIfExists(f);
      Files.deleteIfExists(dir);
    } catch (IOException ignored) {
      // temp files of a test device
    }
  }
}
