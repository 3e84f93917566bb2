package org.mori4j.shmem.collectives;

/**
 * Reduction operations, named as NCCL and MORI name them. The shmem all-reduce kernels implement {@link #SUM}
 * (what MORI's all-reduce kernels and seed 003 do); the others are refused with an error that says so, rather
 * than being missing from the API a caller ports from NCCL.
 */
public enum ShmemReduceOp {
  SUM,
  PROD,
  MAX,
  MIN,
  AVG;

  /** True for the operations the kernels implement. */
  public boolean supported() {
    return this == SUM;
  }
}
