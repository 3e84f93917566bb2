package org.mori4j.transport.rdma.verbs;

/**
 * What a reliable-connected queue pair is created with: its completion queues and the depth of its send and
 * receive queues (one scatter/gather entry per request). A post beyond the send queue's depth fails with
 * {@code ENOMEM}, as on a NIC.
 */
public record QueuePairSpec(CompletionQueue sendCq, CompletionQueue receiveCq, int maxSendWr, int maxReceiveWr) {
  public QueuePairSpec {
    if (sendCq == null || receiveCq == null) throw new IllegalArgumentException("queue pair needs a send and a receive CQ");
    if (maxSendWr < 1) throw new IllegalArgumentException("maxSendWr must be >= 1: " + maxSendWr);
    if (maxReceiveWr < 0) throw new IllegalArgumentException("maxReceiveWr must be >= 0: " + maxReceiveWr);
  }
}
