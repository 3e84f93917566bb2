package org.mori4j.natives.hip;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;

/**
 * What {@code hipPointerGetAttributes} reported for one address: its {@code hipMemoryType} and device. The
 * enum was renumbered in ROCm 6 (to CUDA's values, with 0 now meaning "unregistered"), so the runtime's
 * version decides how the number is read; the struct's layout itself did not move.
 */
record HipPointerAttributes(int memoryType, int device, boolean rocm6) {
  /** ROCm 6.0's {@code hipRuntimeGetVersion}: major * 10^7 + minor * 10^5 + patch. */
  static final int ROCM6_RUNTIME_VERSION = 60_000_000;

  static HipPointerAttributes read(MemorySegment attributes, int runtimeVersion) {
    return new HipPointerAttributes(attributes.get(JAVA_INT, HipLayouts.MEMORY_TYPE_OFFSET),
        attributes.get(JAVA_INT, HipLayouts.DEVICE_OFFSET), runtimeVersion >= ROCM6_RUNTIME_VERSION);
  }

  boolean deviceMemory() {
    return memoryType == (rocm6 ? HipConstants.Rocm6.hipMemoryTypeDevice : HipConstants.hipMemoryTypeDevice);
  }

  /** The memory type's name, for messages. */
  String memoryTypeName() {
    if (rocm6) {
      return switch (memoryType) {
        case HipConstants.Rocm6.hipMemoryTypeUnregistered -> "hipMemoryTypeUnregistered";
        case HipConstants.Rocm6.hipMemoryTypeHost -> "hipMemoryTypeHost";
        case HipConstants.Rocm6.hipMemoryTypeDevice -> "hipMemoryTypeDevice";
        case HipConstants.Rocm6.hipMemoryTypeManaged -> "hipMemoryTypeManaged";
        case HipConstants.Rocm6.hipMemoryTypeArray -> "hipMemoryTypeArray";
        case HipConstants.Rocm6.hipMemoryTypeUnified -> "hipMemoryTypeUnified";
        default -> "hipMemoryType " + memoryType;
      };
    }
    return switch (memoryType) {
      case HipConstants.hipMemoryTypeHost -> "hipMemoryTypeHost";
      case HipConstants.hipMemoryTypeDevice -> "hipMemoryTypeDevice";
      case HipConstants.hipMemoryTypeArray -> "hipMemoryTypeArray";
      case HipConstants.hipMemoryTypeUnified -> "hipMemoryTypeUnified";
      default -> "hipMemoryType " + memoryType;
    };
  }
}
