package org.mori4j.transport.rdma.ibv;

import static org.mori4j.natives.verbs.VerbsConstants.IBV_QPT_RC;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.VerbsProtectionDomain;
import org.mori4j.natives.verbs.VerbsQueuePair;
import org.mori4j.transport.rdma.verbs.CompletionQueue;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.ProtectionDomain;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.QueuePairSpec;

/**
 * A protection domain ({@code ibv_pd}, owned). Host memory is registered with {@code ibv_reg_mr} on the
 * segment's address; GPU memory with {@code ibv_reg_mr} on the device pointer, which the kernel accepts only
 * when a peer-memory client (nvidia-peermem, AMD's peer memory) can pin it; without one the verb fails and
 * the exception says what is needed. Queue pairs are reliable-connected with one SGE per request and no
 * inline data, completing on the given ibverbs CQs.
 */
final class IbvProtectionDomain implements ProtectionDomain {
  private final VerbsProtectionDomain pd;

  IbvProtectionDomain(VerbsProtectionDomain pd) {
    this.pd = pd;
  }

  @Override
  public MemoryRegion registerMemory(MemorySegment memory, int access) {
    if (memory == null) throw new IllegalArgumentException("memory must not be null");
    if (!memory.isNative()) throw new IllegalArgumentException("only native memory can be registered, not " + memory);
    if (memory.byteSize() == 0) throw new IllegalArgumentException("memory to register is empty: " + memory);
    return new IbvMemoryRegion(pd.registerMemory(memory, access), access);
  }

  @Override
  public MemoryRegion registerGpuMemory(long address, long length, int deviceId, int access) {
    if (address == 0) throw new IllegalArgumentException("GPU " + deviceId + " address must not be 0");
    if (length <= 0) throw new IllegalArgumentException("GPU memory length must be > 0: " + length);
    try {
      return new IbvMemoryRegion(pd.registerMemory(address, length, access), access);
    } catch (NativeException e) {
      throw gpuRegistrationFailure(e, address, length, deviceId);
    }
  }

  /** The failure of {@code ibv_reg_mr} on device memory, saying what a NIC needs to reach GPU memory. */
  static NativeException gpuRegistrationFailure(NativeException e, long address, long length, int deviceId) {
    return new NativeException(e.library(), e.function(), e.code(), e.codeName(), "registering " + length
        + " bytes of GPU " + deviceId + " memory at 0x" + Long.toHexString(address) + " with the NIC failed: "
        + e.getMessage() + ". A NIC reaches GPU memory only through peer memory (the nvidia-peermem or AMD "
        + "peer-memory kernel module loaded) or dma-buf (ibv_reg_dmabuf_mr with an exported GPU buffer, "
        + "rdma-core 34+ and a kernel with dma-buf RDMA support)");
  }

  @Override
  public QueuePair createQueuePair(QueuePairSpec spec) {
    IbvCompletionQueue send = ibverbs(spec.sendCq(), "sendCq");
    IbvCompletionQueue receive = ibverbs(spec.receiveCq(), "receiveCq");
    VerbsQueuePair qp = pd.createQueuePair(new VerbsQueuePair.Spec(send.verbs(), receive.verbs(), IBV_QPT_RC,
        spec.maxSendWr(), spec.maxReceiveWr(), 1, 1, 0, false));
    try {
      return new IbvQueuePair(qp);
    } catch (RuntimeException e) {
      qp.close();
      throw e;
    }
  }

  private static IbvCompletionQueue ibverbs(CompletionQueue cq, String what) {
    if (cq instanceof IbvCompletionQueue q) return q;
    throw new IllegalArgumentException(what + " is not an ibverbs completion queue: " + cq);
  }

  /** {@code ibv_dealloc_pd}: fails (EBUSY) while a region or queue pair of this domain is open. */
  @Override
  public void close() {
    pd.close();
  }

  @Override
  public String toString() {
    return "ibverbs " + pd;
  }
}
