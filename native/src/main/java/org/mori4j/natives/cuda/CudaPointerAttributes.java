package org.mori4j.natives.cuda;

/**
 * What {@code cuPointerGetAttributes} reports for one address: its {@code CUmemorytype} (0 when CUDA does not
 * know the address), the device ordinal (-1 when unknown), the allocation it falls in, and the owning context.
 */
public record CudaPointerAttributes(int memoryType, int deviceOrdinal, long rangeStart, long rangeSize, long context) {

  /** The memory type's name, for messages. */
  public String memoryTypeName() {
    return switch (memoryType) {
      case 0 -> "not a CUDA allocation";
      case CudaConstants.CU_MEMORYTYPE_HOST -> "CU_MEMORYTYPE_HOST";
      case CudaConstants.CU_MEMORYTYPE_DEVICE -> "CU_MEMORYTYPE_DEVICE";
      case CudaConstants.CU_MEMORYTYPE_ARRAY -> "CU_MEMORYTYPE_ARRAY";
      case CudaConstants.CU_MEMORYTYPE_UNIFIED -> "CU_MEMORYTYPE_UNIFIED";
      default -> "CUmemorytype " + memoryType;
    };
  }
}
