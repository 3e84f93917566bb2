package org.mori4j.natives.nccl;

/**
 * NCCL's element types ({@code ncclDataType_t}) that mori4j passes to NCCL, with the value {@code nccl.h}
 * gives each and its width. Aliases ({@code ncclHalf}, {@code ncclFloat}, ...) share these values and are not
 * repeated. The values are checked against the real header by {@code NcclAbiConformanceTest}.
 */
public enum NcclDataType {
  INT8("ncclInt8", 0, 1),
  UINT8("ncclUint8", 1, 1),
  INT32("ncclInt32", 2, 4),
  UINT32("ncclUint32", 3, 4),
  INT64("ncclInt64", 4, 8),
  UINT64("ncclUint64", 5, 8),
  FLOAT16("ncclFloat16", 6, 2),
  FLOAT32("ncclFloat32", 7, 4),
  FLOAT64("ncclFloat64", 8, 8),
  BFLOAT16("ncclBfloat16", 9, 2);

  private final String cName;
  private final int value;
  private final int bytes;

  NcclDataType(String cName, int value, int bytes) {
    this.cName = cName;
    this.value = value;
    this.bytes = bytes;
  }

  /** The enumerator's name in {@code nccl.h}. */
  public String cName() {
    return cName;
  }

  /** The enumerator's value, what the native call receives. */
  public int value() {
    return value;
  }

  /** Bytes per element. */
  public int bytes() {
    return bytes;
  }
}
