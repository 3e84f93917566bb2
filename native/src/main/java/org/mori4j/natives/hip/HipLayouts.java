package org.mori4j.natives.hip;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * The C types of HIP and hiprtc as FFM layouts (LP64 Linux). Unlike CUDA, HIP passes device pointers as
 * {@code void*}; handles ({@code hipStream_t}, {@code hipModule_t}, ...) are opaque pointers. Two structs:
 * {@code hipIpcMemHandle_t} (64 opaque bytes, passed by value to {@code hipIpcOpenMemHandle}) and
 * {@code hipPointerAttribute_t}. The ABI test checks every size and named field offset here against the
 * {@code sizeof}/{@code offsetof} a probe compiled against the HIP headers prints.
 */
public final class HipLayouts {
  private HipLayouts() {}

  /** {@code hipError_t}, {@code hiprtcResult}, {@code hipMemcpyKind}, {@code hipDeviceAttribute_t} (enums). */
  public static final ValueLayout.OfInt HIP_ENUM = ValueLayout.JAVA_INT.withName("hipError_t");
  /** {@code size_t}. */
  public static final ValueLayout.OfLong SIZE_T = ValueLayout.JAVA_LONG.withName("size_t");
  /** Every handle type ({@code hipStream_t}, {@code hipModule_t}, ...) and host pointers we keep as segments. */
  public static final AddressLayout POINTER = ValueLayout.ADDRESS.withName("hipStream_t");
  /**
   * {@code void*} device pointers and {@code hipDeviceptr_t} as plain 64-bit integers: same register and
   * size as a pointer on LP64, and device memory is never dereferenced from Java anyway.
   */
  public static final ValueLayout.OfLong DEVICE_POINTER = ValueLayout.JAVA_LONG.withName("hipDeviceptr_t");

  /** {@code struct hipIpcMemHandle_st { char reserved[HIP_IPC_HANDLE_SIZE]; }}. */
  public static final StructLayout HIP_IPC_MEM_HANDLE = MemoryLayout.structLayout(
      MemoryLayout.sequenceLayout(HipConstants.HIP_IPC_HANDLE_SIZE, ValueLayout.JAVA_BYTE).withName("reserved"))
      .withName("hipIpcMemHandle_t");

  /**
   * {@code hipPointerAttribute_t}. The first field is {@code memoryType} in HIP 5 and {@code type} in ROCm 6,
   * at the same offset with the same size; only the enum's values moved (see {@link HipConstants.Rocm6}).
   */
  public static final StructLayout HIP_POINTER_ATTRIBUTE = MemoryLayout.structLayout(
      ValueLayout.JAVA_INT.withName("memoryType"),
      ValueLayout.JAVA_INT.withName("device"),
      ValueLayout.ADDRESS.withName("devicePointer"),
      ValueLayout.ADDRESS.withName("hostPointer"),
      ValueLayout.JAVA_INT.withName("isManaged"),
      ValueLayout.JAVA_INT.withName("allocationFlags"))
      .withName("hipPointerAttribute_t");

  /** Every C type the bindings pass or read, named as in the headers, for the ABI test (see CudaLayouts.ALL). */
  public static final List<MemoryLayout> ALL = List.of(HIP_IPC_MEM_HANDLE, HIP_POINTER_ATTRIBUTE, HIP_ENUM,
      HIP_ENUM.withName("hiprtcResult"), HIP_ENUM.withName("hipMemcpyKind"), HIP_ENUM.withName("hipDeviceAttribute_t"),
      HIP_ENUM.withName("hipMemoryType"), HIP_ENUM.withName("hipDevice_t"), SIZE_T, POINTER, POINTER.withName("hipEvent_t"),
      POINTER.withName("hipModule_t"), POINTER.withName("hipFunction_t"), POINTER.withName("hiprtcProgram"), DEVICE_POINTER,
      DEVICE_POINTER.withName("void*"));

  static final long MEMORY_TYPE_OFFSET = HIP_POINTER_ATTRIBUTE.byteOffset(MemoryLayout.PathElement.groupElement("memoryType"));
  static final long DEVICE_OFFSET = HIP_POINTER_ATTRIBUTE.byteOffset(MemoryLayout.PathElement.groupElement("device"));
}
