package org.mori4j.natives.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.mori4j.natives.cuda.CudaDriver.FUNCTIONS;
import static org.mori4j.natives.cuda.CudaDriver.call;
import static org.mori4j.natives.cuda.CudaDriver.check;
import static org.mori4j.natives.cuda.CudaDriver.outHandle;
import static org.mori4j.natives.cuda.CudaDriver.rethrow;
import static org.mori4j.natives.cuda.CudaLayouts.CU_DEVICEPTR;
import static org.mori4j.natives.cuda.CudaLayouts.CU_RESULT;
import static org.mori4j.natives.cuda.CudaLayouts.HANDLE;
import static org.mori4j.natives.cuda.CudaLayouts.SIZE_T;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The execution part of the CUDA driver API: streams, events, modules (load from an in-memory cubin or PTX
 * image, look up kernels and {@code __device__} globals) and kernel launches. The queries that pollers call
 * in a loop ({@code cuStreamQuery}, {@code cuEventQuery}) return a boolean, since {@code CUDA_ERROR_NOT_READY}
 * is their normal "not yet" answer rather than a failure.
 */
public final class CudaExecutionApi {
  private CudaExecutionApi() {}

  private static final FunctionDescriptor ON_HANDLE = FunctionDescriptor.of(CU_RESULT, HANDLE);

  private static final MethodHandle STREAM_CREATE = FUNCTIONS.bind("cuStreamCreate", FunctionDescriptor.of(CU_RESULT, ADDRESS, JAVA_INT));
  private static final MethodHandle STREAM_DESTROY = FUNCTIONS.bind("cuStreamDestroy", "cuStreamDestroy_v2", ON_HANDLE);
  private static final MethodHandle STREAM_SYNCHRONIZE = FUNCTIONS.bind("cuStreamSynchronize", ON_HANDLE);
  private static final MethodHandle STREAM_QUERY = FUNCTIONS.bind("cuStreamQuery", ON_HANDLE);
  private static final MethodHandle EVENT_CREATE = FUNCTIONS.bind("cuEventCreate", FunctionDescriptor.of(CU_RESULT, ADDRESS, JAVA_INT));
  private static final MethodHandle EVENT_DESTROY = FUNCTIONS.bind("cuEventDestroy", "cuEventDestroy_v2", ON_HANDLE);
  private static final MethodHandle EVENT_RECORD = FUNCTIONS.bind("cuEventRecord", FunctionDescriptor.of(CU_RESULT, HANDLE, HANDLE));
  private static final MethodHandle EVENT_QUERY = FUNCTIONS.bind("cuEventQuery", ON_HANDLE);
  private static final MethodHandle EVENT_SYNCHRONIZE = FUNCTIONS.bind("cuEventSynchronize", ON_HANDLE);
  // CUDA 12.8 added cuEventElapsedTime_v2 (same signature) and cuda.h maps the API to it; older drivers
  // export only the unsuffixed one, which is kept as a fallback.
  private static final MethodHandle EVENT_ELAPSED_TIME = FUNCTIONS.bind("cuEventElapsedTime", "cuEventElapsedTime_v2",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, HANDLE, HANDLE), "cuEventElapsedTime");
  private static final MethodHandle MODULE_LOAD_DATA = FUNCTIONS.bind("cuModuleLoadData", FunctionDescriptor.of(CU_RESULT, ADDRESS, ADDRESS));
  private static final MethodHandle MODULE_UNLOAD = FUNCTIONS.bind("cuModuleUnload", ON_HANDLE);
  private static final MethodHandle MODULE_GET_FUNCTION = FUNCTIONS.bind("cuModuleGetFunction",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, HANDLE, ADDRESS));
  // CUDA 12.4+: the loading mode, and every kernel of a module (see loadAllFunctions)
  private static final MethodHandle MODULE_GET_LOADING_MODE = FUNCTIONS.bind("cuModuleGetLoadingMode", FunctionDescriptor.of(CU_RESULT, ADDRESS));
  private static final MethodHandle MODULE_GET_FUNCTION_COUNT = FUNCTIONS.bind("cuModuleGetFunctionCount",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, HANDLE));
  private static final MethodHandle MODULE_ENUMERATE_FUNCTIONS = FUNCTIONS.bind("cuModuleEnumerateFunctions",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, JAVA_INT, HANDLE));
  private static final MethodHandle FUNC_LOAD = FUNCTIONS.bind("cuFuncLoad", ON_HANDLE);
  private static final MethodHandle MODULE_GET_GLOBAL = FUNCTIONS.bind("cuModuleGetGlobal", "cuModuleGetGlobal_v2",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, ADDRESS, HANDLE, ADDRESS));
  private static final MethodHandle LAUNCH_KERNEL = FUNCTIONS.bind("cuLaunchKernel", FunctionDescriptor.of(CU_RESULT, HANDLE,
      JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, HANDLE, ADDRESS, ADDRESS));

  /** Cooperative launches and occupancy, the implementation shared with HIP. */
  static final org.mori4j.natives.gpu.GridLaunchApi GRID = new org.mori4j.natives.gpu.GridLaunchApi(FUNCTIONS, "cuLaunchCooperativeKernel",
      "cuLaunchCooperativeKernel", "cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuOccupancyMaxActiveBlocksPerMultiprocessor", CudaDriver::check);

  /** Forces class initialisation, so that the shared function table lists these bindings. */
  static void touch() {}

  /** A stream in the current context; {@code flags} are {@code CU_STREAM_*}. */
  public static MemorySegment streamCreate(int flags) {
    return outHandle("cuStreamCreate", out -> (int) STREAM_CREATE.invokeExact(out, flags));
  }

  public static void streamDestroy(MemorySegment stream) {
    onHandle(STREAM_DESTROY, "cuStreamDestroy", stream);
  }

  public static void streamSynchronize(MemorySegment stream) {
    onHandle(STREAM_SYNCHRONIZE, "cuStreamSynchronize", stream);
  }

  /** True when all work on {@code stream} has finished. */
  public static boolean streamQuery(MemorySegment stream) {
    return query(STREAM_QUERY, "cuStreamQuery", stream);
  }

  /** An event in the current context; {@code flags} are {@code CU_EVENT_*}. */
  public static MemorySegment eventCreate(int flags) {
    return outHandle("cuEventCreate", out -> (int) EVENT_CREATE.invokeExact(out, flags));
  }

  public static void eventDestroy(MemorySegment event) {
    onHandle(EVENT_DESTROY, "cuEventDestroy", event);
  }

  public static void eventRecord(MemorySegment event, MemorySegment stream) {
    int rc;
    try {
      rc = (int) EVENT_RECORD.invokeExact(event, stream);
    } catch (Throwable t) {
      throw rethrow(t);
    }
    check(rc, "cuEventRecord");
  }

  /** True when the work before the event's last record has finished. */
  public static boolean eventQuery(MemorySegment event) {
    return query(EVENT_QUERY, "cuEventQuery", event);
  }

  public static void eventSynchronize(MemorySegment event) {
    onHandle(EVENT_SYNCHRONIZE, "cuEventSynchronize", event);
  }

  /** Milliseconds between two recorded, completed timing events (about 0.5 us resolution). */
  public static float eventElapsedTime(MemorySegment start, MemorySegment end) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_FLOAT);
      call("cuEventElapsedTime", () -> (int) EVENT_ELAPSED_TIME.invokeExact(out, start, end));
      return out.get(JAVA_FLOAT, 0);
    }
  }

  /** Loads a cubin, fatbin or NUL-terminated PTX image into the current context. */
  public static MemorySegment moduleLoadData(byte[] image) {
    try (Arena arena = Arena.ofConfined()) {
      // PTX must be NUL-terminated; one extra zero byte is harmless for cubin and fatbin images.
      MemorySegment copy = arena.allocate(image.length + 1L, 16);
      MemorySegment.copy(image, 0, copy, JAVA_BYTE, 0, image.length);
      return outHandle("cuModuleLoadData", out -> (int) MODULE_LOAD_DATA.invokeExact(out, copy));
    }
  }

  public static void moduleUnload(MemorySegment module) {
    onHandle(MODULE_UNLOAD, "cuModuleUnload", module);
  }

  public static MemorySegment moduleGetFunction(MemorySegment module, String name) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment cName = arena.allocateFrom(name);
      return outHandle("cuModuleGetFunction(" + name + ")", out -> (int) MODULE_GET_FUNCTION.invokeExact(out, module, cName));
    }
  }

  /**
   * Loads every kernel of {@code module} now when the driver loads kernels lazily ({@code CUDA_MODULE_LOADING},
   * lazy by default since CUDA 12.2): a lazily loaded kernel is loaded at its first {@code cuModuleGetFunction},
   * and that load can wait for kernels already running in the context. A kernel that spins until a host thread
   * or another kernel of the process makes progress (shmem over the host proxy, two PEs in one process) then
   * never lets the load finish. Returns the number of kernels loaded, 0 when loading is eager, or -1 when the
   * driver predates these calls (CUDA 12.4), which leaves loading as the driver does it.
   */
  public static int loadAllFunctions(MemorySegment module) {
    if (!FUNCTIONS.resolved().containsKey("cuFuncLoad") || !FUNCTIONS.resolved().containsKey("cuModuleEnumerateFunctions")) return -1;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment mode = arena.allocate(JAVA_INT);
      call("cuModuleGetLoadingMode", () -> (int) MODULE_GET_LOADING_MODE.invokeExact(mode));
      if (mode.get(JAVA_INT, 0) != CudaConstants.CU_MODULE_LAZY_LOADING) return 0;
      MemorySegment count = arena.allocate(JAVA_INT);
      call("cuModuleGetFunctionCount", () -> (int) MODULE_GET_FUNCTION_COUNT.invokeExact(count, module));
      int n = count.get(JAVA_INT, 0);
      if (n == 0) return 0;
      MemorySegment functions = arena.allocate(ADDRESS, n);
      call("cuModuleEnumerateFunctions", () -> (int) MODULE_ENUMERATE_FUNCTIONS.invokeExact(functions, n, module));
      for (int i = 0; i < n; i++) onHandle(FUNC_LOAD, "cuFuncLoad", functions.getAtIndex(ADDRESS, i));
      return n;
    }
  }

  /** The address and size of the module's {@code __device__} variable {@code name}: {address, size}. */
  public static long[] moduleGetGlobal(MemorySegment module, String name) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment cName = arena.allocateFrom(name);
      MemorySegment address = arena.allocate(CU_DEVICEPTR);
      MemorySegment size = arena.allocate(SIZE_T);
      call("cuModuleGetGlobal(" + name + ")", () -> (int) MODULE_GET_GLOBAL.invokeExact(address, size, module, cName));
      return new long[] {address.get(CU_DEVICEPTR, 0), size.get(SIZE_T, 0)};
    }
  }

  /**
   * Launches {@code function} with {@code kernelParams} (a {@code void**} with one pointer per parameter, see
   * {@link org.mori4j.natives.gpu.KernelArgs}) on {@code stream} ({@link MemorySegment#NULL}: the default
   * stream). Returns once queued; launch-time errors surface here, execution errors at the next sync.
   */
  public static void launchKernel(MemorySegment function, int gridX, int gridY, int gridZ, int blockX, int blockY, int blockZ,
      int sharedMemBytes, MemorySegment stream, MemorySegment kernelParams) {
    int rc;
    try {
      rc = (int) LAUNCH_KERNEL.invokeExact(function, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemBytes, stream, kernelParams,
          MemorySegment.NULL);
    } catch (Throwable t) {
      throw rethrow(t);
    }
    check(rc, "cuLaunchKernel");
  }

  private static void onHandle(MethodHandle handle, String function, MemorySegment target) {
    int rc;
    try {
      rc = (int) handle.invokeExact(target);
    } catch (Throwable t) {
      throw rethrow(t);
    }
    check(rc, function);
  }

  private static boolean query(MethodHandle handle, String function, MemorySegment target) {
    int rc;
    try {
      rc = (int) handle.invokeExact(target);
    } catch (Throwable t) {
      throw rethrow(t);
    }
    if (rc == CudaConstants.CUDA_ERROR_NOT_READY) return false;
    check(rc, function);
    return true;
  }
}
