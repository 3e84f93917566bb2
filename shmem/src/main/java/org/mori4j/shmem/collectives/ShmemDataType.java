package org.mori4j.shmem.collectives;

/**
 * Element types of the shmem collectives, as MORI's and NCCL's names have them. Broadcast and all-gather move
 * bytes and take any of them; all-reduce is implemented for {@link #BFLOAT16}, {@link #FLOAT16} and
 * {@link #FLOAT32} (accumulated in fp32), and refuses the others by name.
 */
public enum ShmemDataType {
  BFLOAT16(2, "bf16"),
  FLOAT16(2, "fp16"),
  FLOAT32(4, "fp32"),
  FLOAT64(8, null),
  INT8(1, null),
  UINT8(1, null),
  INT32(4, null),
  UINT32(4, null),
  INT64(8, null),
  UINT64(8, null);

  private final int bytes;
  private final String kernelSuffix;

  ShmemDataType(int bytes, String kernelSuffix) {
    this.bytes = bytes;
    this.kernelSuffix = kernelSuffix;
  }

  /** Bytes per element. */
  public int bytes() {
    return bytes;
  }

  /** True for the types {@link ShmemCollectives#allReduce} reduces. */
  public boolean reducible() {
    return kernelSuffix != null;
  }

  /** The all-reduce kernels' name suffix ({@code bf16}, {@code fp16}, {@code fp32}); null for the others. */
  String kernelSuffix() {
    return kernelSuffix;
  }
}
