package org.mori4j.transport.rdma.ibv;

import org.mori4j.natives.verbs.VerbsMemoryRegion;
import org.mori4j.transport.rdma.verbs.MemoryRegion;

/**
 * A registered region ({@code ibv_mr}, owned): keys and bounds as the NIC granted them, and the access flags
 * it was registered with. Closing deregisters it ({@code ibv_dereg_mr}); its getters fail from then on.
 */
final class IbvMemoryRegion implements MemoryRegion {
  private final VerbsMemoryRegion mr;
  private final int access;

  IbvMemoryRegion(VerbsMemoryRegion mr, int access) {
    this.mr = mr;
    this.access = access;
  }

  @Override
  public long address() {
    return mr.address();
  }

  @Override
  public long length() {
    return mr.length();
  }

  @Override
  public int lkey() {
    return mr.lkey();
  }

  @Override
  public int rkey() {
    return mr.rkey();
  }

  @Override
  public int access() {
    return access;
  }

  @Override
  public void close() {
    mr.close();
  }

  @Override
  public String toString() {
    return "ibverbs " + mr;
  }
}
