package org.mori4j.transport;


/**
 * How a one-sided backend (XGMI, RDMA) learns, once per remote region, what the region's owner really
 * registered. Its copies and RDMA work requests never reach the owner's engine, so it cannot refuse one the
 * way a TCP target does. Instead, before the first transfer to or from a region the backend asks the owning engine
 * (through the engines' control plane, which the engine provides) whether that region id with that access
 * key is registered, and gets back the address, size and the backend's data (XGMI: IPC handle; RDMA: rkeys) the owner holds. Every copy is then
 * checked against that answer, not against the caller's descriptor: a forged or stale descriptor (another
 * size, address or IPC handle; a region deregistered since) gets an error, never bytes.
 */
@FunctionalInterface
public interface RegionConfirmer {
  /** Asks engine {@code peerKey} about region {@code regionId}; {@code answer} is called exactly once, from any thread. */
  void confirm(String peerKey, long regionId, long accessKey, Answer answer);

  /** The owner's reply. */
  interface Answer {
    /** The region is registered: its address and size in the owner, and the owner's data for it of the asking backend. */
    void registered(long address, long size, byte[] backendData);

    /** The owner refused (not registered, wrong key, not GPU memory) or could not be asked. */
    void refused(TransportError error, String reason);
  }
}
