package org.mori4j.transport.rdma.verbs;

/**
 * An open RDMA device context ({@code struct ibv_context}): ports and their GIDs, and the factory of
 * protection domains, completion channels and completion queues. Closing it closes nothing it created; each
 * of those has its own owner, which must close it first, as with {@code ibv_close_device}.
 */
public interface VerbsDevice extends AutoCloseable {
  String name();

  /** Physical ports, numbered from 1 as in verbs. */
  int portCount();

  PortInfo queryPort(int port);

  /** GID {@code index} of {@code port} (16 bytes). */
  byte[] queryGid(int port, int index);

  /** Largest number of outstanding work requests per queue the device supports. */
  int maxQueuePairWorkRequests();

  /** Largest completion queue the device supports. */
  int maxCompletionQueueEntries();

  ProtectionDomain allocateProtectionDomain();

  CompletionChannel createCompletionChannel();

  /** A completion queue of at least {@code entries} entries, raising events on {@code channel} (null: none). */
  CompletionQueue createCompletionQueue(int entries, CompletionChannel channel);

  @Override
  void close();
}
