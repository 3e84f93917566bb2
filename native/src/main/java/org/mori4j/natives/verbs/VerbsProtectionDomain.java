package org.mori4j.natives.verbs;

import java.lang.foreign.MemorySegment;

/**
 * A protection domain ({@code struct ibv_pd}): memory regions registered in it and queue pairs created in
 * it can reach each other, nothing else can. Deallocation fails ({@code EBUSY}) while an MR or QP of it
 * is still open, so close those first.
 */
public final class VerbsProtectionDomain extends NativeResource {
  VerbsProtectionDomain(MemorySegment pd) {
    super("ibv protection domain", pd, VerbsLayouts.IBV_PD.byteSize());
  }

  /** Registers {@code memory} (native memory, e.g. a registered host buffer) with {@code IBV_ACCESS_*} flags. */
  public VerbsMemoryRegion registerMemory(MemorySegment memory, int access) {
    if (!memory.isNative()) throw new IllegalArgumentException("only native memory can be registered: " + memory);
    return registerMemory(memory.address(), memory.byteSize(), access);
  }

  /** Registers {@code length} bytes at {@code address} (host memory, or device memory with peer-memory support). */
  public VerbsMemoryRegion registerMemory(long address, long length, int access) {
    return new VerbsMemoryRegion(IbVerbs.regMr(handle(), address, length, access));
  }

  /**
   * Registers a dma-buf ({@code ibv_reg_dmabuf_mr}): {@code length} bytes at {@code offset} of the buffer
   * behind {@code fd}, addressed remotely as {@code iova}. This is how GPU memory exported as a dma-buf is
   * registered without peer-memory kernel modules. Fails with {@code ENOSYS} where libibverbs lacks it.
   */
  public VerbsMemoryRegion registerDmabuf(long offset, long length, long iova, int fd, int access) {
    return new VerbsMemoryRegion(IbVerbs.regDmabufMr(handle(), offset, length, iova, fd, access));
  }

  /** A queue pair in this PD (see {@link VerbsQueuePair.Spec}); it starts in the RESET state. */
  public VerbsQueuePair createQueuePair(VerbsQueuePair.Spec spec) {
    return VerbsQueuePair.create(this, spec);
  }

  @Override
  protected void release(MemorySegment handle) {
    IbVerbs.deallocPd(handle);
  }
}
