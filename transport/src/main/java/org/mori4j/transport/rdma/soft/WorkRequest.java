package org.mori4j.transport.rdma.soft;

/**
 * One send work request as the requester connection copies it out of the send queue (under the queue pair's
 * lock) to transmit it; reused for every request, so that transmitting allocates nothing.
 */
final class WorkRequest {
  int opcode;
  int flags;
  long wrId;
  long localAddress;
  int length;
  int lkey;
  long remoteAddress;
  int rkey;
  int immediate;
}
