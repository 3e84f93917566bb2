package org.mori4j.natives.cuda;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

/**
 * The C types of the CUDA driver API and NVRTC as FFM layouts (x86-64 and aarch64 Linux, LP64). Handles
 * ({@code CUcontext}, {@code CUstream}, ...) are opaque pointers; {@code CUdeviceptr} is a 64-bit integer,
 * not a pointer, because device memory is not CPU-addressable. {@code CUipcMemHandle} is the one struct:
 * 64 opaque bytes that {@code cuIpcOpenMemHandle} takes by value. The ABI test checks each size and offset
 * against {@code sizeof}/{@code offsetof} from a probe compiled against {@code cuda.h}.
 */
public final class CudaLayouts {
  private CudaLayouts() {}

  /** {@code CUresult} (an enum). */
  public static final ValueLayout.OfInt CU_RESULT = ValueLayout.JAVA_INT;
  /** {@code CUdevice} (an int ordinal-like handle). */
  public static final ValueLayout.OfInt CU_DEVICE = ValueLayout.JAVA_INT;
  /** {@code CUdeviceptr} ({@code unsigned long long}). */
  public static final ValueLayout.OfLong CU_DEVICEPTR = ValueLayout.JAVA_LONG;
  /** {@code size_t}. */
  public static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG;
  /** {@code CUpointer_attribute}, {@code CUdevice_attribute}, {@code CUmemorytype} (enums). */
  public static final ValueLayout.OfInt CU_ENUM = ValueLayout.JAVA_INT;
  /** {@code CUcontext}, {@code CUstream}, {@code CUevent}, {@code CUmodule}, {@code CUfunction}, {@code nvrtcProgram}. */
  public static final AddressLayout HANDLE = ValueLayout.ADDRESS;

  /** {@code struct CUipcMemHandle_st { char reserved[CU_IPC_HANDLE_SIZE]; }}. */
  public static final StructLayout CU_IPC_MEM_HANDLE = MemoryLayout.structLayout(
      MemoryLayout.sequenceLayout(CudaConstants.CU_IPC_HANDLE_SIZE, ValueLayout.JAVA_BYTE).withName("reserved"))
      .withName("CUipcMemHandle");
}
