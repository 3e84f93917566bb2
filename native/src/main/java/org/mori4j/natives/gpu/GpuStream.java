package org.mori4j.natives.gpu;

/**
 * An ordered queue of GPU work (copies, kernels, event records) on one device. Work on one stream runs in
 * issue order; work on different streams may overlap, which is how copies and socket I/O are pipelined.
 */
public interface GpuStream extends AutoCloseable {
  int device();

  /** Blocks until all work issued so far has finished (and throws if any of it failed). */
  void synchronize();

  /** True when all work issued so far has finished; never blocks. */
  boolean isComplete();

  @Override
  void close();
}
