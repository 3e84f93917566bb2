package org.mori4j.transport.rdma.verbs;

/**
 * A registered memory region ({@code struct ibv_mr}): local work requests name it by {@link #lkey()}, remote
 * ones by {@link #rkey()} with an address inside {@code [address, address + length)}; the access flags given
 * at registration say what remote peers may do. Closing it deregisters it: later requests with its keys fail
 * as they would on a NIC.
 */
public interface MemoryRegion extends AutoCloseable {
  long address();

  long length();

  int lkey();

  int rkey();

  int access();

  @Override
  void close();
}
