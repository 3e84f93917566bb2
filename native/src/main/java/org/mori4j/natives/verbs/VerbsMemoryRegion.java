package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;

/**
 * A registered memory region ({@code struct ibv_mr}): the local key that work requests quote for its
 * bytes, and the remote key a peer quotes to RDMA-read or -write it. The keys are copied at registration
 * (they never change) but are refused after {@link #close()} ({@code ibv_dereg_mr}), when they are dead.
 */
public final class VerbsMemoryRegion extends NativeResource {
  private final long address;
  private final long length;
  private final int lkey;
  private final int rkey;

  VerbsMemoryRegion(MemorySegment mr) {
    super("ibv memory region", mr, VerbsLayouts.IBV_MR.byteSize());
    this.address = mr.get(ADDRESS, VerbsLayouts.MR_ADDR).address();
    this.length = mr.get(JAVA_LONG, VerbsLayouts.MR_LENGTH);
    this.lkey = mr.get(JAVA_INT, VerbsLayouts.MR_LKEY);
    this.rkey = mr.get(JAVA_INT, VerbsLayouts.MR_RKEY);
  }

  public long address() {
    ensureOpen();
    return address;
  }

  public long length() {
    ensureOpen();
    return length;
  }

  public int lkey() {
    ensureOpen();
    return lkey;
  }

  public int rkey() {
    ensureOpen();
    return rkey;
  }

  @Override
  protected void release(MemorySegment handle) {
    IbVerbs.deregMr(handle);
  }
}
