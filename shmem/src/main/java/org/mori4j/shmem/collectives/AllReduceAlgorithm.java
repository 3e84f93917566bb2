package org.mori4j.shmem.collectives;

/**
 * The two all-reduce kernels of the shmem collectives (seed 003's kernels A and B), and {@link #AUTO}, which
 * lets {@link ShmemCollectives} pick by size.
 */
public enum AllReduceAlgorithm {
  /** Pick by message size: the kernel measured faster at that size (see {@link ShmemCollectives.Settings}). */
  AUTO,
  /**
   * Kernel A: each PE reads its 1/n of the buffer from every PE over the peer mappings, sums in fp32 and writes
   * the result into that part of every PE's buffer. No scratch memory; two signal rounds per call.
   */
  P2P_READ,
  /**
   * Kernel B: each PE puts its buffer chunk by chunk into the other PEs' scratch areas with a signal per chunk,
   * then reduces the chunks locally as they arrive. Needs scratch of (n - 1) times the message per PE.
   */
  PUT_SIGNAL
}
