package org.mori4j.natives.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.mori4j.natives.cuda.CudaDriver.CALLS;
import static org.mori4j.natives.cuda.CudaDriver.FUNCTIONS;
import static org.mori4j.natives.cuda.CudaLayouts.CU_RESULT;
import static org.mori4j.natives.cuda.CudaLayouts.HANDLE;
import static org.mori4j.natives.gpu.ExecutionApi.Function.EVENT_CREATE;
import static org.mori4j.natives.gpu.ExecutionApi.Function.EVENT_DESTROY;
import static org.mori4j.natives.gpu.ExecutionApi.Function.EVENT_ELAPSED_TIME;
import static org.mori4j.natives.gpu.ExecutionApi.Function.EVENT_QUERY;
import static org.mori4j.natives.gpu.ExecutionApi.Function.EVENT_RECORD;
import static org.mori4j.natives.gpu.ExecutionApi.Function.EVENT_SYNCHRONIZE;
import static org.mori4j.natives.gpu.ExecutionApi.Function.LAUNCH_KERNEL;
import static org.mori4j.natives.gpu.ExecutionApi.Function.MODULE_GET_FUNCTION;
import static org.mori4j.natives.gpu.ExecutionApi.Function.MODULE_GET_GLOBAL;
import static org.mori4j.natives.gpu.ExecutionApi.Function.MODULE_LOAD_DATA;
import static org.mori4j.natives.gpu.ExecutionApi.Function.MODULE_UNLOAD;
import static org.mori4j.natives.gpu.ExecutionApi.Function.STREAM_CREATE;
import static org.mori4j.natives.gpu.ExecutionApi.Function.STREAM_DESTROY;
import static org.mori4j.natives.gpu.ExecutionApi.Function.STREAM_QUERY;
import static org.mori4j.natives.gpu.ExecutionApi.Function.STREAM_SYNCHRONIZE;
import static org.mori4j.natives.gpu.ExecutionApi.symbol;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.mori4j.natives.gpu.ExecutionApi;
import org.mori4j.natives.gpu.GridLaunchApi;

/**
 * The execution part of the CUDA driver API: streams, events, modules and kernel launches are the shared
 * {@link ExecutionApi} on CUDA's symbols ({@link #API}, which {@link CudaRuntime} and its owners use), with the
 * static forms below for code that drives the driver directly (the launch-cost probes); cooperative launches and
 * occupancy are the shared {@link GridLaunchApi}. What only CUDA has lives here: loading every kernel of a module
 * up front ({@link #loadAllFunctions}).
 */
public final class CudaExecutionApi {
  private CudaExecutionApi() {}

  /** Streams, events, modules and launches, under the symbols {@code cuda.h} maps each API to. */
  static final ExecutionApi API = new ExecutionApi(FUNCTIONS, CALLS,
      new ExecutionApi.Codes(CudaConstants.CUDA_ERROR_NOT_READY, CudaConstants.CU_STREAM_NON_BLOCKING, CudaConstants.CU_EVENT_DEFAULT,
          CudaConstants.CU_EVENT_DISABLE_TIMING),
      symbol(STREAM_CREATE, "cuStreamCreate"),
      symbol(STREAM_DESTROY, "cuStreamDestroy", "cuStreamDestroy_v2"),
      symbol(STREAM_SYNCHRONIZE, "cuStreamSynchronize"),
      symbol(STREAM_QUERY, "cuStreamQuery"),
      symbol(EVENT_CREATE, "cuEventCreate"),
      symbol(EVENT_DESTROY, "cuEventDestroy", "cuEventDestroy_v2"),
      symbol(EVENT_RECORD, "cuEventRecord"),
      symbol(EVENT_QUERY, "cuEventQuery"),
      symbol(EVENT_SYNCHRONIZE, "cuEventSynchronize"),
      // CUDA 12.8 added cuEventElapsedTime_v2 (same signature) and cuda.h maps the API to it; older drivers
      // export only the unsuffixed one, which is kept as a fallback.
      symbol(EVENT_ELAPSED_TIME, "cuEventElapsedTime", "cuEventElapsedTime_v2", "cuEventElapsedTime"),
      symbol(MODULE_LOAD_DATA, "cuModuleLoadData"),
      symbol(MODULE_UNLOAD, "cuModuleUnload"),
      symbol(MODULE_GET_FUNCTION, "cuModuleGetFunction"),
      symbol(MODULE_GET_GLOBAL, "cuModuleGetGlobal", "cuModuleGetGlobal_v2"),
      symbol(LAUNCH_KERNEL, "cuLaunchKernel"));

  // CUDA 12.4+: the loading mode, and every kernel of a module (see loadAllFunctions)
  private static final MethodHandle MODULE_GET_LOADING_MODE = FUNCTIONS.bind("cuModuleGetLoadingMode", FunctionDescriptor.of(CU_RESULT, ADDRESS));
  private static final MethodHandle MODULE_GET_FUNCTION_COUNT = FUNCTIONS.bind("cuModuleGetFunctionCount",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, HANDLE));
  private static final MethodHandle MODULE_ENUMERATE_FUNCTIONS = FUNCTIONS.bind("cuModuleEnumerateFunctions",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, JAVA_INT, HANDLE));
  private static final MethodHandle FUNC_LOAD = FUNCTIONS.bind("cuFuncLoad", FunctionDescriptor.of(CU_RESULT, HANDLE));

  /** Cooperative launches and occupancy, the implementation shared with HIP. */
  static final GridLaunchApi GRID = new GridLaunchApi(FUNCTIONS, "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel",
      "cuOccupancyMaxActiveBlocksPerMultiprocessor", "cuOccupancyMaxActiveBlocksPerMultiprocessor", CALLS);

  /** Forces class initialisation, so that the shared function table lists these bindings. */
  static void touch() {}

  /** A stream in the current context; {@code flags} are {@code CU_STREAM_*}. */
  public static MemorySegment streamCreate(int flags) {
    return API.streamCreate(flags);
  }

  public static void streamDestroy(MemorySegment stream) {
    API.streamDestroy(stream);
  }

  public static void streamSynchronize(MemorySegment stream) {
    API.streamSynchronize(stream);
  }

  /** An event in the current context; {@code flags} are {@code CU_EVENT_*}. */
  public static MemorySegment eventCreate(int flags) {
    return API.eventCreate(flags);
  }

  public static void eventDestroy(MemorySegment event) {
    API.eventDestroy(event);
  }

  public static void eventRecord(MemorySegment event, MemorySegment stream) {
    API.eventRecord(event, stream);
  }

  /** True when the work before the event's last record has finished. */
  public static boolean eventQuery(MemorySegment event) {
    return API.eventQuery(event);
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
      CALLS.call("cuModuleGetLoadingMode", () -> (int) MODULE_GET_LOADING_MODE.invokeExact(mode));
      if (mode.get(JAVA_INT, 0) != CudaConstants.CU_MODULE_LAZY_LOADING) return 0;
      MemorySegment count = arena.allocate(JAVA_INT);
      CALLS.call("cuModuleGetFunctionCount", () -> (int) MODULE_GET_FUNCTION_COUNT.invokeExact(count, module));
      int n = count.get(JAVA_INT, 0);
      if (n == 0) return 0;
      MemorySegment functions = arena.allocate(ADDRESS, n);
      CALLS.call("cuModuleEnumerateFunctions", () -> (int) MODULE_ENUMERATE_FUNCTIONS.invokeExact(functions, n, module));
      for (int i = 0; i < n; i++) {
        MemorySegment function = functions.getAtIndex(ADDRESS, i);
        CALLS.call("cuFuncLoad", () -> (int) FUNC_LOAD.invokeExact(function));
      }
      return n;
    }
  }

  /**
   * Launches {@code function} with {@code kernelParams} (a {@code void**} with one pointer per parameter, see
   * {@link org.mori4j.natives.gpu.KernelArgs}) on {@code stream} ({@link MemorySegment#NULL}: the default
   * stream). Returns once queued; launch-time errors surface here, execution errors at the next sync.
   */
  public static void launchKernel(MemorySegment function, int gridX, int gridY, int gridZ, int blockX, int blockY, int blockZ,
      int sharedMemBytes, MemorySegment stream, MemorySegment kernelParams) {
    API.launchKernel(function, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedMemBytes, stream, kernelParams);
  }
}
