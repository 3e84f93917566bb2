package org.mori4j.natives.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.mori4j.natives.cuda.CudaDriver.CALLS;
import static org.mori4j.natives.cuda.CudaDriver.FUNCTIONS;
import static org.mori4j.natives.cuda.CudaLayouts.CU_DEVICEPTR;
import static org.mori4j.natives.cuda.CudaLayouts.CU_IPC_MEM_HANDLE;
import static org.mori4j.natives.cuda.CudaLayouts.CU_RESULT;
import static org.mori4j.natives.cuda.CudaLayouts.HANDLE;
import static org.mori4j.natives.cuda.CudaLayouts.SIZE_T;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.mori4j.natives.gpu.FunctionTable;

/**
 * The memory part of the CUDA driver API: device and pinned host allocation, host registration, copies
 * (synchronous and asynchronous, within and between devices), memset, address ranges and IPC handles. The
 * copy calls that sit on the data path are written out with {@code invokeExact} and no allocation; the rest
 * go through the driver's {@link org.mori4j.natives.gpu.StatusCalls}. Every function needs a current context on the
 * calling thread ({@link CudaDriver#setCurrentContext}).
 */
public final class CudaMemoryApi {
  private CudaMemoryApi() {}

  private static final FunctionDescriptor COPY = FunctionDescriptor.of(CU_RESULT, CU_DEVICEPTR, CU_DEVICEPTR, SIZE_T);
  private static final FunctionDescriptor COPY_ASYNC = FunctionDescriptor.of(CU_RESULT, CU_DEVICEPTR, CU_DEVICEPTR, SIZE_T, HANDLE);

  private static final MethodHandle MEM_ALLOC = FUNCTIONS.bind("cuMemAlloc", "cuMemAlloc_v2", FunctionDescriptor.of(CU_RESULT, ADDRESS, SIZE_T));
  private static final MethodHandle MEM_GET_INFO = FUNCTIONS.bind("cuMemGetInfo", "cuMemGetInfo_v2", FunctionDescriptor.of(CU_RESULT, ADDRESS, ADDRESS));
  private static final MethodHandle MEM_FREE = FUNCTIONS.bind("cuMemFree", "cuMemFree_v2", FunctionDescriptor.of(CU_RESULT, CU_DEVICEPTR));
  private static final MethodHandle MEM_ALLOC_HOST = FUNCTIONS.bind("cuMemAllocHost", "cuMemAllocHost_v2",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, SIZE_T));
  private static final MethodHandle MEM_FREE_HOST = FUNCTIONS.bind("cuMemFreeHost", FunctionDescriptor.of(CU_RESULT, ADDRESS));
  private static final MethodHandle MEM_HOST_GET_DEVICE_POINTER = FUNCTIONS.bind("cuMemHostGetDevicePointer", "cuMemHostGetDevicePointer_v2",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, ADDRESS, JAVA_INT));
  private static final MethodHandle MEM_HOST_REGISTER = FUNCTIONS.bind("cuMemHostRegister", "cuMemHostRegister_v2",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, SIZE_T, JAVA_INT));
  private static final MethodHandle MEM_HOST_UNREGISTER = FUNCTIONS.bind("cuMemHostUnregister", FunctionDescriptor.of(CU_RESULT, ADDRESS));
  private static final MethodHandle MEMCPY = FUNCTIONS.bind("cuMemcpy", COPY);
  private static final MethodHandle MEMCPY_ASYNC = FUNCTIONS.bind("cuMemcpyAsync", COPY_ASYNC);
  // Host pointers are passed as plain addresses (JAVA_LONG, like CUdeviceptr): same register, same ABI, and
  // the copy calls need no MemorySegment wrapping on the hot path.
  private static final MethodHandle MEMCPY_HTOD = FUNCTIONS.bind("cuMemcpyHtoD", "cuMemcpyHtoD_v2", COPY);
  private static final MethodHandle MEMCPY_DTOH = FUNCTIONS.bind("cuMemcpyDtoH", "cuMemcpyDtoH_v2", COPY);
  private static final MethodHandle MEMCPY_DTOD = FUNCTIONS.bind("cuMemcpyDtoD", "cuMemcpyDtoD_v2", COPY);
  private static final MethodHandle MEMCPY_HTOD_ASYNC = FUNCTIONS.bind("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2", COPY_ASYNC);
  private static final MethodHandle MEMCPY_DTOH_ASYNC = FUNCTIONS.bind("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2", COPY_ASYNC);
  private static final MethodHandle MEMCPY_DTOD_ASYNC = FUNCTIONS.bind("cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2", COPY_ASYNC);
  private static final MethodHandle MEMCPY_PEER = FUNCTIONS.bind("cuMemcpyPeer",
      FunctionDescriptor.of(CU_RESULT, CU_DEVICEPTR, HANDLE, CU_DEVICEPTR, HANDLE, SIZE_T));
  private static final MethodHandle MEMCPY_PEER_ASYNC = FUNCTIONS.bind("cuMemcpyPeerAsync",
      FunctionDescriptor.of(CU_RESULT, CU_DEVICEPTR, HANDLE, CU_DEVICEPTR, HANDLE, SIZE_T, HANDLE));
  private static final MethodHandle MEMSET_D8 = FUNCTIONS.bind("cuMemsetD8", "cuMemsetD8_v2",
      FunctionDescriptor.of(CU_RESULT, CU_DEVICEPTR, JAVA_BYTE, SIZE_T));
  private static final MethodHandle MEM_GET_ADDRESS_RANGE = FUNCTIONS.bind("cuMemGetAddressRange", "cuMemGetAddressRange_v2",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, ADDRESS, CU_DEVICEPTR));
  private static final MethodHandle IPC_GET_MEM_HANDLE = FUNCTIONS.bind("cuIpcGetMemHandle",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, CU_DEVICEPTR));
  // CUipcMemHandle is passed BY VALUE: the struct layout makes the linker copy its 64 bytes the way the C
  // ABI passes a large struct (on the stack), which a pointer parameter would get wrong.
  private static final MethodHandle IPC_OPEN_MEM_HANDLE = FUNCTIONS.bind("cuIpcOpenMemHandle", "cuIpcOpenMemHandle_v2",
      FunctionDescriptor.of(CU_RESULT, ADDRESS, CU_IPC_MEM_HANDLE, JAVA_INT));
  private static final MethodHandle IPC_CLOSE_MEM_HANDLE = FUNCTIONS.bind("cuIpcCloseMemHandle", FunctionDescriptor.of(CU_RESULT, CU_DEVICEPTR));

  /** Forces class initialisation, so that the shared function table lists these bindings. */
  static void touch() {}

  public static long memAlloc(long size) {
    return CALLS.outLong("cuMemAlloc", out -> (int) MEM_ALLOC.invokeExact(out, size));
  }

  /** Free and total bytes of the current context's device: {free, total}. */
  public static long[] memGetInfo() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment free = arena.allocate(SIZE_T);
      MemorySegment total = arena.allocate(SIZE_T);
      CALLS.call("cuMemGetInfo", () -> (int) MEM_GET_INFO.invokeExact(free, total));
      return new long[] {free.get(SIZE_T, 0), total.get(SIZE_T, 0)};
    }
  }

  public static void memFree(long pointer) {
    CALLS.call("cuMemFree", () -> (int) MEM_FREE.invokeExact(pointer));
  }

  /** Page-locked host memory, portable to all contexts under unified addressing. */
  public static MemorySegment memAllocHost(long size) {
    return CALLS.outHandle("cuMemAllocHost", out -> (int) MEM_ALLOC_HOST.invokeExact(out, size));
  }

  public static void memFreeHost(MemorySegment pointer) {
    CALLS.call("cuMemFreeHost", () -> (int) MEM_FREE_HOST.invokeExact(pointer));
  }

  /** The current context's device address of page-locked host memory {@code host} (under unified addressing: itself). */
  public static long memHostGetDevicePointer(MemorySegment host) {
    return CALLS.outLong("cuMemHostGetDevicePointer", out -> (int) MEM_HOST_GET_DEVICE_POINTER.invokeExact(out, host, 0));
  }

  /** Page-locks existing host memory; {@code flags} are {@code CU_MEMHOSTREGISTER_*}. */
  public static void memHostRegister(MemorySegment memory, long size, int flags) {
    CALLS.call("cuMemHostRegister", () -> (int) MEM_HOST_REGISTER.invokeExact(memory, size, flags));
  }

  public static void memHostUnregister(MemorySegment memory) {
    CALLS.call("cuMemHostUnregister", () -> (int) MEM_HOST_UNREGISTER.invokeExact(memory));
  }

  /** A copy between any two addresses under unified addressing; the driver infers the direction. */
  public static void memcpy(long dst, long src, long size) {
    copy(MEMCPY, "cuMemcpy", dst, src, size);
  }

  public static void memcpyAsync(long dst, long src, long size, MemorySegment stream) {
    copyAsync(MEMCPY_ASYNC, "cuMemcpyAsync", dst, src, size, stream);
  }

  public static void memcpyHtoD(long dstDevice, long srcHost, long size) {
    copy(MEMCPY_HTOD, "cuMemcpyHtoD", dstDevice, srcHost, size);
  }

  public static void memcpyDtoH(long dstHost, long srcDevice, long size) {
    copy(MEMCPY_DTOH, "cuMemcpyDtoH", dstHost, srcDevice, size);
  }

  public static void memcpyDtoD(long dstDevice, long srcDevice, long size) {
    copy(MEMCPY_DTOD, "cuMemcpyDtoD", dstDevice, srcDevice, size);
  }

  public static void memcpyHtoDAsync(long dstDevice, long srcHost, long size, MemorySegment stream) {
    copyAsync(MEMCPY_HTOD_ASYNC, "cuMemcpyHtoDAsync", dstDevice, srcHost, size, stream);
  }

  public static void memcpyDtoHAsync(long dstHost, long srcDevice, long size, MemorySegment stream) {
    copyAsync(MEMCPY_DTOH_ASYNC, "cuMemcpyDtoHAsync", dstHost, srcDevice, size, stream);
  }

  public static void memcpyDtoDAsync(long dstDevice, long srcDevice, long size, MemorySegment stream) {
    copyAsync(MEMCPY_DTOD_ASYNC, "cuMemcpyDtoDAsync", dstDevice, srcDevice, size, stream);
  }

  /** A copy between two devices' memory, each named with its context. */
  public static void memcpyPeer(long dst, MemorySegment dstContext, long src, MemorySegment srcContext, long size) {
    int rc;
    try {
      rc = (int) MEMCPY_PEER.invokeExact(dst, dstContext, src, srcContext, size);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    CALLS.check(rc, "cuMemcpyPeer");
  }

  public static void memcpyPeerAsync(long dst, MemorySegment dstContext, long src, MemorySegment srcContext, long size, MemorySegment stream) {
    int rc;
    try {
      rc = (int) MEMCPY_PEER_ASYNC.invokeExact(dst, dstContext, src, srcContext, size, stream);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    CALLS.check(rc, "cuMemcpyPeerAsync");
  }

  public static void memsetD8(long dst, byte value, long count) {
    CALLS.call("cuMemsetD8", () -> (int) MEMSET_D8.invokeExact(dst, value, count));
  }

  /** The base and size of the allocation containing {@code pointer}: {base, size}. */
  public static long[] memGetAddressRange(long pointer) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment base = arena.allocate(CU_DEVICEPTR);
      MemorySegment size = arena.allocate(SIZE_T);
      CALLS.call("cuMemGetAddressRange", () -> (int) MEM_GET_ADDRESS_RANGE.invokeExact(base, size, pointer));
      return new long[] {base.get(CU_DEVICEPTR, 0), size.get(SIZE_T, 0)};
    }
  }

  /** The 64 bytes another process passes to {@link #ipcOpenMemHandle} to map this allocation. */
  public static byte[] ipcGetMemHandle(long pointer) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment handle = arena.allocate(CU_IPC_MEM_HANDLE);
      CALLS.call("cuIpcGetMemHandle", () -> (int) IPC_GET_MEM_HANDLE.invokeExact(handle, pointer));
      return handle.toArray(JAVA_BYTE);
    }
  }

  /** Maps another process's allocation into the current context; {@code flags} are {@code CU_IPC_MEM_*}. */
  public static long ipcOpenMemHandle(byte[] handle, int flags) {
    if (handle.length != CU_IPC_MEM_HANDLE.byteSize()) {
      throw new IllegalArgumentException("a CUDA IPC handle is " + CU_IPC_MEM_HANDLE.byteSize() + " bytes, not " + handle.length);
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment value = arena.allocate(CU_IPC_MEM_HANDLE);
      MemorySegment.copy(handle, 0, value, JAVA_BYTE, 0, handle.length);
      return CALLS.outLong("cuIpcOpenMemHandle", out -> (int) IPC_OPEN_MEM_HANDLE.invokeExact(out, value, flags));
    }
  }

  public static void ipcCloseMemHandle(long pointer) {
    CALLS.call("cuIpcCloseMemHandle", () -> (int) IPC_CLOSE_MEM_HANDLE.invokeExact(pointer));
  }

  private static void copy(MethodHandle handle, String function, long dst, long src, long size) {
    int rc;
    try {
      rc = (int) handle.invokeExact(dst, src, size);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    CALLS.check(rc, function);
  }

  private static void copyAsync(MethodHandle handle, String function, long dst, long src, long size, MemorySegment stream) {
    int rc;
    try {
      rc = (int) handle.invokeExact(dst, src, size, stream);
    } catch (Throwable t) {
      throw FunctionTable.rethrow(t);
    }
    CALLS.check(rc, function);
  }
}
