package org.mori4j.natives.hip;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
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
import static org.mori4j.natives.hip.HipLayouts.DEVICE_POINTER;
import static org.mori4j.natives.hip.HipLayouts.HIP_ENUM;
import static org.mori4j.natives.hip.HipLayouts.HIP_IPC_MEM_HANDLE;
import static org.mori4j.natives.hip.HipLayouts.POINTER;
import static org.mori4j.natives.hip.HipLayouts.SIZE_T;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;
import org.mori4j.natives.gpu.ExecutionApi;
import org.mori4j.natives.gpu.FunctionTable;
import org.mori4j.natives.gpu.GridLaunchApi;
import org.mori4j.natives.gpu.StatusCalls;

/**
 * The HIP runtime ({@code libamdhip64.so}) through FFM: devices, memory, copies, IPC handles, pointer attributes
 * and peer access, each a {@code MethodHandle} bound in one {@link FunctionTable} under the exported name; streams,
 * events, modules and launches are the {@link ExecutionApi} shared with CUDA on HIP's names ({@link #EXECUTION}),
 * bound into the same table. HIP keeps one current device per thread (not a context
 * object as the CUDA driver API does), so callers select it with {@link #setDevice} first. Every call checks
 * its {@code hipError_t} and throws a {@link NativeException} carrying the code and {@code hipGetErrorName}.
 * Device pointers are passed as {@code long}s: a {@code void*} and a 64-bit integer travel in the same
 * register on LP64, and the data path then needs no {@link MemorySegment} per copy. ROCm 6 ships
 * {@code .so.6}, ROCm 5 (Debian 12) {@code .so.5}; the first that loads is used.
 */
public final class Hip {
  private Hip() {}

  static final FunctionTable FUNCTIONS =
      new FunctionTable(NativeLibrary.open("hip", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"));

  /** Every call's check: a {@code hipError_t} other than success becomes a NativeException named by HIP. */
  static final StatusCalls CALLS = new StatusCalls("hip", HipConstants.hipSuccess, Hip::errorName, Hip::errorString);

  private static final FunctionDescriptor OUT = FunctionDescriptor.of(HIP_ENUM, ADDRESS);
  private static final FunctionDescriptor ON_HANDLE = FunctionDescriptor.of(HIP_ENUM, POINTER);
  private static final FunctionDescriptor ON_POINTER = FunctionDescriptor.of(HIP_ENUM, DEVICE_POINTER);

  static final MethodHandle INIT = FUNCTIONS.bind("hipInit", FunctionDescriptor.of(HIP_ENUM, JAVA_INT));
  static final MethodHandle DRIVER_GET_VERSION = FUNCTIONS.bind("hipDriverGetVersion", OUT);
  static final MethodHandle RUNTIME_GET_VERSION = FUNCTIONS.bind("hipRuntimeGetVersion", OUT);
  static final MethodHandle GET_DEVICE_COUNT = FUNCTIONS.bind("hipGetDeviceCount", OUT);
  static final MethodHandle SET_DEVICE = FUNCTIONS.bind("hipSetDevice", FunctionDescriptor.of(HIP_ENUM, JAVA_INT));
  static final MethodHandle GET_DEVICE = FUNCTIONS.bind("hipGetDevice", OUT);
  static final MethodHandle DEVICE_GET = FUNCTIONS.bind("hipDeviceGet", FunctionDescriptor.of(HIP_ENUM, ADDRESS, JAVA_INT));
  static final MethodHandle DEVICE_GET_NAME = FUNCTIONS.bind("hipDeviceGetName", FunctionDescriptor.of(HIP_ENUM, ADDRESS, JAVA_INT, JAVA_INT));
  static final MethodHandle DEVICE_GET_ATTRIBUTE = FUNCTIONS.bind("hipDeviceGetAttribute",
      FunctionDescriptor.of(HIP_ENUM, ADDRESS, HIP_ENUM, JAVA_INT));
  static final MethodHandle MALLOC = FUNCTIONS.bind("hipMalloc", FunctionDescriptor.of(HIP_ENUM, ADDRESS, SIZE_T));
  static final MethodHandle MEM_GET_INFO = FUNCTIONS.bind("hipMemGetInfo", FunctionDescriptor.of(HIP_ENUM, ADDRESS, ADDRESS));
  static final MethodHandle FREE = FUNCTIONS.bind("hipFree", ON_POINTER);
  static final MethodHandle HOST_MALLOC = FUNCTIONS.bind("hipHostMalloc", FunctionDescriptor.of(HIP_ENUM, ADDRESS, SIZE_T, JAVA_INT));
  static final MethodHandle HOST_FREE = FUNCTIONS.bind("hipHostFree", ON_POINTER);
  static final MethodHandle HOST_REGISTER = FUNCTIONS.bind("hipHostRegister", FunctionDescriptor.of(HIP_ENUM, DEVICE_POINTER, SIZE_T, JAVA_INT));
  static final MethodHandle HOST_UNREGISTER = FUNCTIONS.bind("hipHostUnregister", ON_POINTER);
  static final MethodHandle MEMCPY = FUNCTIONS.bind("hipMemcpy",
      FunctionDescriptor.of(HIP_ENUM, DEVICE_POINTER, DEVICE_POINTER, SIZE_T, HIP_ENUM));
  static final MethodHandle MEMCPY_ASYNC = FUNCTIONS.bind("hipMemcpyAsync",
      FunctionDescriptor.of(HIP_ENUM, DEVICE_POINTER, DEVICE_POINTER, SIZE_T, HIP_ENUM, POINTER));
  static final MethodHandle MEMCPY_PEER = FUNCTIONS.bind("hipMemcpyPeer",
      FunctionDescriptor.of(HIP_ENUM, DEVICE_POINTER, JAVA_INT, DEVICE_POINTER, JAVA_INT, SIZE_T));
  static final MethodHandle MEMCPY_PEER_ASYNC = FUNCTIONS.bind("hipMemcpyPeerAsync",
      FunctionDescriptor.of(HIP_ENUM, DEVICE_POINTER, JAVA_INT, DEVICE_POINTER, JAVA_INT, SIZE_T, POINTER));
  static final MethodHandle MEMSET = FUNCTIONS.bind("hipMemset", FunctionDescriptor.of(HIP_ENUM, DEVICE_POINTER, JAVA_INT, SIZE_T));
  static final MethodHandle MEM_GET_ADDRESS_RANGE = FUNCTIONS.bind("hipMemGetAddressRange",
      FunctionDescriptor.of(HIP_ENUM, ADDRESS, ADDRESS, DEVICE_POINTER));
  static final MethodHandle POINTER_GET_ATTRIBUTES = FUNCTIONS.bind("hipPointerGetAttributes",
      FunctionDescriptor.of(HIP_ENUM, ADDRESS, DEVICE_POINTER));
  static final MethodHandle IPC_GET_MEM_HANDLE = FUNCTIONS.bind("hipIpcGetMemHandle", FunctionDescriptor.of(HIP_ENUM, ADDRESS, DEVICE_POINTER));
  // hipIpcMemHandle_t is passed BY VALUE (64 bytes): the struct layout makes the linker pass it the way the
  // C ABI passes a large struct (in memory on the stack), which a pointer parameter would get wrong.
  static final MethodHandle IPC_OPEN_MEM_HANDLE = FUNCTIONS.bind("hipIpcOpenMemHandle",
      FunctionDescriptor.of(HIP_ENUM, ADDRESS, HIP_IPC_MEM_HANDLE, JAVA_INT));
  static final MethodHandle IPC_CLOSE_MEM_HANDLE = FUNCTIONS.bind("hipIpcCloseMemHandle", ON_POINTER);
  static final MethodHandle DEVICE_CAN_ACCESS_PEER = FUNCTIONS.bind("hipDeviceCanAccessPeer",
      FunctionDescriptor.of(HIP_ENUM, ADDRESS, JAVA_INT, JAVA_INT));
  static final MethodHandle DEVICE_ENABLE_PEER_ACCESS = FUNCTIONS.bind("hipDeviceEnablePeerAccess",
      FunctionDescriptor.of(HIP_ENUM, JAVA_INT, JAVA_INT));
  /**
   * Cooperative launches and occupancy, the implementation shared with CUDA. hipModuleLaunchCooperativeKernel
   * is newer than ROCm 5.2's library (the ABI machines'): there it fails when called, naming the symbol.
   */
  static final GridLaunchApi GRID = new GridLaunchApi(FUNCTIONS, "hipModuleLaunchCooperativeKernel",
      "hipModuleLaunchCooperativeKernel", "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor",
      CALLS);
  private static final MethodHandle GET_ERROR_NAME = FUNCTIONS.bind("hipGetErrorName", FunctionDescriptor.of(ADDRESS, HIP_ENUM));
  private static final MethodHandle GET_ERROR_STRING = FUNCTIONS.bind("hipGetErrorString", FunctionDescriptor.of(ADDRESS, HIP_ENUM));

  /** Streams, events, modules and launches: the implementation shared with CUDA, on HIP's names. */
  static final ExecutionApi EXECUTION = new ExecutionApi(FUNCTIONS, CALLS,
      new ExecutionApi.Codes(HipConstants.hipErrorNotReady, HipConstants.hipStreamNonBlocking, HipConstants.hipEventDefault,
          HipConstants.hipEventDisableTiming),
      symbol(STREAM_CREATE, "hipStreamCreateWithFlags"),
      symbol(STREAM_DESTROY, "hipStreamDestroy"),
      symbol(STREAM_SYNCHRONIZE, "hipStreamSynchronize"),
      symbol(STREAM_QUERY, "hipStreamQuery"),
      symbol(EVENT_CREATE, "hipEventCreateWithFlags"),
      symbol(EVENT_DESTROY, "hipEventDestroy"),
      symbol(EVENT_RECORD, "hipEventRecord"),
      symbol(EVENT_QUERY, "hipEventQuery"),
      symbol(EVENT_SYNCHRONIZE, "hipEventSynchronize"),
      symbol(EVENT_ELAPSED_TIME, "hipEventElapsedTime"),
      symbol(MODULE_LOAD_DATA, "hipModuleLoadData"),
      symbol(MODULE_UNLOAD, "hipModuleUnload"),
      symbol(MODULE_GET_FUNCTION, "hipModuleGetFunction"),
      symbol(MODULE_GET_GLOBAL, "hipModuleGetGlobal"),
      symbol(LAUNCH_KERNEL, "hipModuleLaunchKernel"));

  /** The library as opened (or the reasons it could not be). */
  public static NativeLibrary library() {
    return FUNCTIONS.library();
  }

  /** Every bound API and the symbol bound for it (for the ABI tests). */
  public static FunctionTable functions() {
    return FUNCTIONS;
  }

  /** {@code hipGetErrorName}, or {@code "hipError_t <code>"} when the library cannot name it. */
  public static String errorName(int code) {
    return StatusCalls.text(GET_ERROR_NAME, code, "hipError_t");
  }

  /** {@code hipGetErrorString}: HIP's one-line description of {@code code}. */
  public static String errorString(int code) {
    return StatusCalls.text(GET_ERROR_STRING, code, "hipError_t");
  }

  /** Makes {@code device} the calling thread's current HIP device. */
  public static void setDevice(int device) {
    CALLS.call("hipSetDevice", () -> (int) SET_DEVICE.invokeExact(device));
  }
}
