package org.mori4j.natives.cuda;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.util.List;

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
  public static final ValueLayout.OfInt CU_RESULT = ValueLayout.JAVA_INT.withName("CUresult");
  /** {@code CUdevice} (an int ordinal-like handle). */
  public static final ValueLayout.OfInt CU_DEVICE = ValueLayout.JAVA_INT.withName("CUdevice");
  /** {@code CUdeviceptr} ({@code unsigned long long}). */
  public static final ValueLayout.OfLong CU_DEVICEPTR = ValueLayout.JAVA_LONG.withName("CUdeviceptr");
  /** {@code size_t}. */
  public static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG.withName("size_t");
  /** {@code CUpointer_attribute}, {@code CUdevice_attribute}, {@code CUmemorytype} (enums). */
  public static final ValueLayout.OfInt CU_ENUM = ValueLayout.JAVA_INT.withName("CUpointer_attribute");
  /** {@code CUcontext}, {@code CUstream}, {@code CUevent}, {@code CUmodule}, {@code CUfunction}, {@code nvrtcProgram}. */
  public static final AddressLayout HANDLE = ValueLayout.ADDRESS.withName("CUcontext");

  /** {@code struct CUipcMemHandle_st { char reserved[CU_IPC_HANDLE_SIZE]; }}. */
  public static final StructLayout CU_IPC_MEM_HANDLE = MemoryLayout.structLayout(
      MemoryLayout.sequenceLayout(CudaConstants.CU_IPC_HANDLE_SIZE, ValueLayout.JAVA_BYTE).withName("reserved"))
      .withName("CUipcMemHandle");

  /**
   * Every C type the bindings pass or read, named as in the headers, for the ABI test: one Java layout often
   * stands for several C types of one size ({@link #CU_ENUM} for each enum, {@link #HANDLE} for each handle),
   * so each C name is listed with the layout that stands for it.
   */
  public static final List<MemoryLayout> ALL = List.of(CU_IPC_MEM_HANDLE, CU_RESULT, CU_DEVICE, CU_DEVICEPTR, SIZE_T,
      CU_ENUM, CU_ENUM.withName("CUdevice_attribute"), CU_ENUM.withName("CUmemorytype"),
      HANDLE, HANDLE.withName("CUstream"), HANDLE.withName("CUevent"), HANDLE.withName("CUmodule"), HANDLE.withName("CUfunction"));
}
