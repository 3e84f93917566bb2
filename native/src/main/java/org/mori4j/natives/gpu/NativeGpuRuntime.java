package org.mori4j.natives.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Locale;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;

/**
 * What {@link GpuRuntime} on the CUDA driver API and on HIP share, written once: streams, events and modules (the
 * owners {@link NativeStream}, {@link NativeEvent}, {@link NativeModule} over the runtime's {@link ExecutionApi}),
 * kernel launches (plain and through {@link GridLaunchApi}), and the device-range and stream checks with their
 * messages. A subclass says how a device becomes current on the calling thread ({@link #bind}: CUDA sets the
 * device's primary context, HIP selects the device) and implements devices, memory, copies, IPC, pointer checks
 * and compilation, where the two APIs really differ (separate copy functions or a copy kind; contexts or device
 * ordinals for peers; a list of pointer attributes or a struct).
 */
public abstract class NativeGpuRuntime implements GpuRuntime {
  private final String name;
  private final String label;
  private final int deviceCount;
  private final ExecutionApi api;
  private final GridLaunchApi grid;

  /** {@code name} is {@link #name()} ({@code "cuda"}); messages name the runtime in capitals ({@code "not a CUDA stream"}). */
  protected NativeGpuRuntime(String name, int deviceCount, ExecutionApi api, GridLaunchApi grid) {
    this.name = name;
    this.label = name.toUpperCase(Locale.ROOT);
    this.deviceCount = deviceCount;
    this.api = api;
    this.grid = grid;
  }

  /**
   * Makes {@code device} the one the calling thread's next calls act on, after checking it exists
   * ({@link #checkDevice}); cheap when it already is, since pollers call it before every query.
   */
  protected abstract void bind(int device);

  /**
   * Runs after a module is loaded on its device, before it is handed out; a failure unloads the module again.
   * CUDA loads every kernel here when the driver loads them lazily.
   */
  protected void prepareModule(MemorySegment module) {}

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final int deviceCount() {
    return deviceCount;
  }

  protected final ExecutionApi api() {
    return api;
  }

  @Override
  public GpuStream createStream(int device) {
    bind(device);
    return new NativeStream(this, device, api.streamCreate(api.codes().nonBlockingStream()));
  }

  @Override
  public GpuEvent createEvent(int device, boolean timing) {
    bind(device);
    return new NativeEvent(this, device, api.eventCreate(timing ? api.codes().timedEvent() : api.codes().untimedEvent()));
  }

  @Override
  public GpuModule loadModule(int device, byte[] image) {
    bind(device);
    MemorySegment handle = api.moduleLoadData(image);
    try {
      prepareModule(handle);
    } catch (RuntimeException e) {
      api.moduleUnload(handle);
      throw e;
    }
    return new NativeModule(this, device, handle);
  }

  @Override
  public final void launch(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    launchOn(launchStream(function, stream), function, grid, block, sharedMemBytes, args);
  }

  /**
   * Lays {@code args} out in native memory and launches on {@code streamHandle}, the function's device current. The
   * launch copies the parameter values when it queues the kernel, so the memory is free again once it returns: here
   * an arena of the call's own; CUDA reuses a spare.
   */
  protected void launchOn(MemorySegment streamHandle, GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, KernelArgs args) {
    try (Arena arena = Arena.ofConfined()) {
      launchKernel(function, grid, block, sharedMemBytes, streamHandle, args.toNative(arena));
    }
  }

  /** The plain launch of {@code function} with parameters already laid out ({@link KernelArgs#writeTo}). */
  protected final void launchKernel(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, MemorySegment stream, MemorySegment params) {
    api.launchKernel(MemorySegment.ofAddress(function.handle()), grid.x(), grid.y(), grid.z(), block.x(), block.y(), block.z(), sharedMemBytes,
        stream, params);
  }

  @Override
  public void launchCooperative(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    MemorySegment streamHandle = launchStream(function, stream);
    try (Arena arena = Arena.ofConfined()) {
      this.grid.launchCooperative(MemorySegment.ofAddress(function.handle()), grid, block, sharedMemBytes, streamHandle, args.toNative(arena));
    }
  }

  @Override
  public int maxActiveBlocksPerMultiprocessor(GpuFunction function, int blockThreads, int dynamicSharedBytes) {
    bind(function.device());
    return grid.maxActiveBlocksPerMultiprocessor(MemorySegment.ofAddress(function.handle()), blockThreads, dynamicSharedBytes);
  }

  /**
   * The stream a launch of {@code function} goes to (NULL: the legacy default stream), with the function's device
   * made current; a stream of another device is refused.
   */
  protected final MemorySegment launchStream(GpuFunction function, GpuStream stream) {
    if (stream == null) {
      bind(function.device());
      return MemorySegment.NULL;
    }
    NativeStream s = bindStream(stream);
    if (s.device() != function.device()) {
      throw new IllegalArgumentException("kernel " + function.name() + " is loaded on device " + function.device() + " but the stream is on device " + s.device());
    }
    return s.handle();
  }

  /** The native handle of {@code stream}, a stream of this runtime, with its device made current. */
  protected final MemorySegment boundStream(GpuStream stream) {
    return bindStream(stream).handle();
  }

  private NativeStream bindStream(GpuStream stream) {
    NativeStream s = ownStream(stream);
    bind(s.device());
    return s;
  }

  /** {@code stream} as one of this runtime's kind, or the refusal naming what it is. */
  final NativeStream ownStream(GpuStream stream) {
    if (!(stream instanceof NativeStream s) || s.runtime().api != api) throw new IllegalArgumentException("not a " + label + " stream: " + stream);
    return s;
  }

  /** {@code event} as one of this runtime's kind, or the refusal naming what it is. */
  final NativeEvent ownEvent(GpuEvent event) {
    if (!(event instanceof NativeEvent e) || e.runtime().api != api) throw new IllegalArgumentException("not a " + label + " event: " + event);
    return e;
  }

  /** {@code device}, or the refusal saying how many devices there are. */
  protected final int checkDevice(int device) {
    if (device < 0 || device >= deviceCount) {
      throw new IllegalArgumentException("no " + label + " device " + device + " (this machine has " + deviceCount + ")");
    }
    return device;
  }
}
