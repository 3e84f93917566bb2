package org.mori4j.natives.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.mori4j.natives.cuda.CudaLayouts.CU_DEVICE;
import static org.mori4j.natives.cuda.CudaLayouts.CU_DEVICEPTR;
import static org.mori4j.natives.cuda.CudaLayouts.CU_ENUM;
import static org.mori4j.natives.cuda.CudaLayouts.CU_RESULT;
import static org.mori4j.natives.cuda.CudaLayouts.HANDLE;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.NativeLibrary;
import org.mori4j.natives.gpu.FunctionTable;
import org.mori4j.natives.gpu.StatusCalls;

/**
 * The CUDA driver API ({@code libcuda.so.1}) through FFM: initialisation, devices, primary contexts, errors
 * and peer access here; memory and copies in {@link CudaMemoryApi}; streams, events, modules and launches in
 * {@link CudaExecutionApi}. All three bind into one {@link FunctionTable}, under the exported names that
 * {@code cuda.h}'s macros map each API to ({@code cuMemAlloc} is {@code cuMemAlloc_v2}; the unsuffixed
 * symbols are the legacy 32-bit ABI kept for old binaries). Every call checks its {@code CUresult} and
 * throws a {@link NativeException} carrying the code, {@code cuGetErrorName} and {@code cuGetErrorString}.
 * The library is opened when this class loads; where it is absent every call throws saying so.
 */
public final class CudaDriver {
  private CudaDriver() {}

  static final FunctionTable FUNCTIONS = new FunctionTable(NativeLibrary.open("cuda", "libcuda.so.1", "libcuda.so"));

  private static final MethodHandle INIT = FUNCTIONS.bind("cuInit", FunctionDescriptor.of(CU_RESULT, JAVA_INT));
  private static final MethodHandle DRIVER_GET_VERSION = FUNCTIONS.bind("cuDriverGetVersion", FunctionDescriptor.of(CU_RESULT, ADDRESS));
  private static final MethodHandle DEVICE_GET_COUNT = FUNCTIONS.bind("cuDeviceGetCount", FunctionDescriptor.of(CU_RESULT, ADDRESS));
  private static final MethodHandle DEVICE_GET = FUNCTIONS.bind("cuDeviceGet", FunctionDescriptor.of(CU_RESULT, ADDRESS, JAVA_INT));
  private static final MethodHandle DEVICE_GET_NAME = FUNCTIONS.bind("cuDeviceGetName", FunctionDescriptor.of(CU_RESULT, ADDRESS, JAVA_INT, CU_DEVICE));
  private static final MethodHandle DEVICE_GET_ATTRIBUTE = FUNCTIONS.bind("cuDeviceGetAttribute",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, CU_ENUM, CU_DEVICE));
  private static final MethodHandle PRIMARY_CTX_RETAIN = FUNCTIONS.bind("cuDevicePrimaryCtxRetain", FunctionDescriptor.of(CU_RESULT, ADDRESS, CU_DEVICE));
  private static final MethodHandle PRIMARY_CTX_RELEASE = FUNCTIONS.bind("cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2",
      FunctionDescriptor.of(CU_RESULT, CU_DEVICE));
  private static final MethodHandle CTX_SET_CURRENT = FUNCTIONS.bind("cuCtxSetCurrent", FunctionDescriptor.of(CU_RESULT, HANDLE));
  private static final MethodHandle CTX_GET_CURRENT = FUNCTIONS.bind("cuCtxGetCurrent", FunctionDescriptor.of(CU_RESULT, ADDRESS));
  private static final MethodHandle DEVICE_CAN_ACCESS_PEER = FUNCTIONS.bind("cuDeviceCanAccessPeer",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, CU_DEVICE, CU_DEVICE));
  private static final MethodHandle CTX_ENABLE_PEER_ACCESS = FUNCTIONS.bind("cuCtxEnablePeerAccess", FunctionDescriptor.of(CU_RESULT, HANDLE, JAVA_INT));
  private static final MethodHandle POINTER_GET_ATTRIBUTE = FUNCTIONS.bind("cuPointerGetAttribute",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, CU_ENUM, CU_DEVICEPTR));
  private static final MethodHandle POINTER_GET_ATTRIBUTES = FUNCTIONS.bind("cuPointerGetAttributes",
      FunctionDescriptor.of(CU_RESULT, JAVA_INT, ADDRESS, ADDRESS, CU_DEVICEPTR));
  private static final MethodHandle GET_ERROR_NAME = FUNCTIONS.bind("cuGetErrorName", FunctionDescriptor.of(CU_RESULT, CU_RESULT, ADDRESS));
  private static final MethodHandle GET_ERROR_STRING = FUNCTIONS.bind("cuGetErrorString", FunctionDescriptor.of(CU_RESULT, CU_RESULT, ADDRESS));

  /** Every call's check: a {@code CUresult} other than success becomes a NativeException named by the driver. */
  static final StatusCalls CALLS = new StatusCalls("cuda", CudaConstants.CUDA_SUCCESS, CudaDriver::errorName, CudaDriver::errorString);

  static {
    // The other API groups bind into the same table; touching them here makes the table complete as soon as
    // anyone (a test, a runtime) looks at it.
    CudaMemoryApi.touch();
    CudaExecutionApi.touch();
  }

  /** The library as opened (or the reasons it could not be). */
  public static NativeLibrary library() {
    return FUNCTIONS.library();
  }

  /** Every bound API and the symbol bound for it (for the ABI tests). */
  public static FunctionTable functions() {
    return FUNCTIONS;
  }

  /** Runs {@code cuInit}; first raises {@code CUDA_DEVICE_MAX_CONNECTIONS} when unset ({@link CudaConnections}). */
  public static void init() {
    CudaConnections.apply();
    CALLS.call("cuInit", () -> (int) INIT.invokeExact(0));
  }

  /** The driver's CUDA version, e.g. 13000 for 13.0. */
  public static int driverVersion() {
    return CALLS.outInt("cuDriverGetVersion", out -> (int) DRIVER_GET_VERSION.invokeExact(out));
  }

  public static int deviceCount() {
    return CALLS.outInt("cuDeviceGetCount", out -> (int) DEVICE_GET_COUNT.invokeExact(out));
  }

  /** The {@code CUdevice} handle of device {@code ordinal}. */
  public static int device(int ordinal) {
    return CALLS.outInt("cuDeviceGet", out -> (int) DEVICE_GET.invokeExact(out, ordinal));
  }

  public static String deviceName(int device) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment name = arena.allocate(256);
      CALLS.call("cuDeviceGetName", () -> (int) DEVICE_GET_NAME.invokeExact(name, 256, device));
      return name.getString(0);
    }
  }

  /** A {@code CU_DEVICE_ATTRIBUTE_*} value of {@code device}. */
  public static int deviceAttribute(int attribute, int device) {
    return CALLS.outInt("cuDeviceGetAttribute", out -> (int) DEVICE_GET_ATTRIBUTE.invokeExact(out, attribute, device));
  }

  /** Retains (creating on first use) the device's primary context, the one the runtime API shares too. */
  public static MemorySegment primaryContextRetain(int device) {
    return CALLS.outHandle("cuDevicePrimaryCtxRetain", out -> (int) PRIMARY_CTX_RETAIN.invokeExact(out, device));
  }

  public static void primaryContextRelease(int device) {
    CALLS.call("cuDevicePrimaryCtxRelease", () -> (int) PRIMARY_CTX_RELEASE.invokeExact(device));
  }

  /** Makes {@code context} current on the calling thread (contexts are per thread in the driver API). */
  public static void setCurrentContext(MemorySegment context) {
    int rc;
    try {
      rc = (int) CTX_SET_CURRENT.invokeExact(context);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    CALLS.check(rc, "cuCtxSetCurrent");
  }

  /** The calling thread's current context ({@link MemorySegment#NULL} when none). */
  public static MemorySegment currentContext() {
    return CALLS.outHandle("cuCtxGetCurrent", out -> (int) CTX_GET_CURRENT.invokeExact(out));
  }

  public static boolean deviceCanAccessPeer(int device, int peer) {
    return CALLS.outInt("cuDeviceCanAccessPeer", out -> (int) DEVICE_CAN_ACCESS_PEER.invokeExact(out, device, peer)) != 0;
  }

  /**
   * Lets the current context reach {@code peerContext}'s memory. Returns false when it already could
   * ({@code CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED}), which callers treat as success.
   */
  public static boolean ctxEnablePeerAccess(MemorySegment peerContext) {
    int rc;
    try {
      rc = (int) CTX_ENABLE_PEER_ACCESS.invokeExact(peerContext, 0);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    if (rc == CudaConstants.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) return false;
    CALLS.check(rc, "cuCtxEnablePeerAccess");
    return true;
  }

  /**
   * One {@code CU_POINTER_ATTRIBUTE_*} of {@code pointer}, widened to a long (every attribute we read is at
   * most 8 bytes and written into a zeroed 8-byte cell). Unlike {@link #pointerAttributes}, it fails for an
   * address CUDA does not know.
   */
  public static long pointerAttribute(int attribute, long pointer) {
    return CALLS.outLong("cuPointerGetAttribute", out -> (int) POINTER_GET_ATTRIBUTE.invokeExact(out, attribute, pointer));
  }

  /**
   * Memory type, device ordinal, allocation range and context of {@code pointer} in one call. For an address
   * CUDA does not know, this succeeds with memory type 0 and a null range, which is why the pointer check
   * uses it rather than {@link #pointerAttribute}.
   */
  public static CudaPointerAttributes pointerAttributes(long pointer) {
    int[] attributes = {CudaConstants.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CudaConstants.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        CudaConstants.CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CudaConstants.CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        CudaConstants.CU_POINTER_ATTRIBUTE_CONTEXT};
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment ids = arena.allocateFrom(JAVA_INT, attributes);
      MemorySegment cells = arena.allocate(JAVA_LONG, attributes.length); // zeroed: unset attributes read 0
      cells.setAtIndex(JAVA_LONG, 1, -1L); // device ordinal: -1 unless the driver writes it
      MemorySegment data = arena.allocate(ADDRESS, attributes.length);
      for (int i = 0; i < attributes.length; i++) data.setAtIndex(ADDRESS, i, cells.asSlice(i * 8L, 8));
      CALLS.call("cuPointerGetAttributes", () -> (int) POINTER_GET_ATTRIBUTES.invokeExact(attributes.length, ids, data, pointer));
      // MEMORY_TYPE is an unsigned int and DEVICE_ORDINAL an int: read only the 4 bytes the driver wrote.
      return new CudaPointerAttributes(cells.get(JAVA_INT, 0), cells.get(JAVA_INT, 8), cells.get(JAVA_LONG, 16),
          cells.get(JAVA_LONG, 24), cells.get(JAVA_LONG, 32));
    }
  }

  /** {@code cuGetErrorName}, or {@code "CUresult <code>"} for a code the driver does not know. */
  public static String errorName(int code) {
    return errorText(GET_ERROR_NAME, code);
  }

  /** {@code cuGetErrorString}: the driver's one-line description. */
  public static String errorString(int code) {
    return errorText(GET_ERROR_STRING, code);
  }

  private static String errorText(MethodHandle handle, int code) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      int rc = (int) handle.invokeExact(code, out);
      MemorySegment text = out.get(ADDRESS, 0);
      return rc != 0 || text.equals(MemorySegment.NULL) ? "CUresult " + code : text.reinterpret(4096).getString(0);
    } catch (Throwable t) {
      return "CUresult " + code;
    }
  }
}
