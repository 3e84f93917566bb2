package org.mori4j.io.gpuinit;

import org.mori4j.io.TransferStatus;

/**
 * The proxy's copy of one send work request from the moment it is read from the ring until it retires: decoded
 * once (the device may reuse the slot as soon as it retires), then issued, then completed. One record per ring
 * slot, reused, so reading a WQE allocates nothing.
 */
final class WqeRecord {
  static final int NEW = 0, ENGINE = 1, PEER = 2, DONE = 3;

  long index = -1;
  int op, flags, imm, lkey, length, rkey;
  long wrId, laddr, raddr, compareAdd, swap;
  int phase;
  TransferStatus status;
  Region local;
  int wc;
  String message;
  long deadline;
  /** When the proxy started it (System.nanoTime): the liveness probe's clock. */
  long startedAt;
  long byteLen;

  void done(int wcStatus, String why, long bytes) {
    phase = DONE;
    wc = wcStatus;
    message = why;
    byteLen = bytes;
  }

  boolean signaled() {
    return (flags & GpuQueueLayout.FLAG_SIGNALED) != 0;
  }
}
