package org.mori4j.transport.rdma.verbs;

import java.lang.foreign.MemorySegment;

/**
 * A protection domain ({@code struct ibv_pd}): memory regions and queue pairs created in one domain work only
 * with each other; a remote peer's rkey reaches a region only through a queue pair of the region's domain.
 */
public interface ProtectionDomain extends AutoCloseable {
  /** Registers host memory with {@code IBV_ACCESS_*} flags; the caller owns the region. */
  MemoryRegion registerMemory(MemorySegment memory, int access);

  /**
   * Registers device memory {@code [address, address + length)} of GPU {@code deviceId}. A NIC does it through
   * peer memory or dma-buf; the software provider through the GPU runtime's staging copies. Throws a
   * {@link org.mori4j.natives.NativeException} when the provider cannot reach GPU memory.
   */
  MemoryRegion registerGpuMemory(long address, long length, int deviceId, int access);

  /** A reliable-connected queue pair in RESET. */
  QueuePair createQueuePair(QueuePairSpec spec);

  @Override
  void close();
}
