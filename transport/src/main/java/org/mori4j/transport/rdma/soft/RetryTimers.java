package org.mori4j.transport.rdma.soft;

/**
 * The RC retry rules of one {@link RequesterConnection}, kept apart from its transmit and receive paths: the
 * retry count that a DROPPED notice spends (waiting the ACK timeout), the RNR retry count that an RNR NAK spends
 * (waiting the responder's RNR timer; 7 is forever), the one retransmission either schedules (from which request,
 * at what time), and the retry budget: how long the connection may keep connecting, or stay silent with requests
 * outstanding, before the peer counts as lost. An acknowledgement restores both counts, as it does on a NIC. The
 * connection decides what a spent count or budget means (which completion status, which log line). Runs on the
 * device's I/O thread only, like its connection.
 */
final class RetryTimers {
  /** The QP's local ACK timeout; -1 when its timeout attribute is 0 (infinite in IB). */
  private final long ackTimeoutNanos;
  /** Silence (or connecting) longer than this fails the peer; -1: never (timeout 0 is infinite in IB). */
  final long budgetNanos;
  private final int retryCount;
  private final int rnrRetry;
  private final long connectStartNanos = System.nanoTime();
  private int retriesLeft;
  private int rnrLeft;
  /** Retransmission from {@link #rewindSeq} is due at {@link #resumeAtNanos} (-1: none). */
  private long rewindSeq = -1;
  private long resumeAtNanos;

  /** {@code floorNanos}: the device's minimum retry budget, so that a short ACK timeout does not drop a slow peer. */
  RetryTimers(long ackTimeoutNanos, int retryCount, int rnrRetry, long floorNanos) {
    this.ackTimeoutNanos = ackTimeoutNanos;
    this.retryCount = retryCount;
    this.rnrRetry = rnrRetry;
    this.budgetNanos = ackTimeoutNanos < 0 ? -1 : Math.max(floorNanos, ackTimeoutNanos * (retryCount + 1));
    this.retriesLeft = retryCount;
    this.rnrLeft = rnrRetry;
  }

  /** An acknowledgement: the peer made progress, so both retry counts start over. */
  void acknowledged() {
    retriesLeft = retryCount;
    rnrLeft = rnrRetry;
  }

  /** Whether a retransmission is scheduled. */
  boolean rewinding() {
    return rewindSeq >= 0;
  }

  /** Whether an answer for request {@code seq} comes too late to matter: a retransmission from it or earlier is scheduled. */
  boolean covers(long seq) {
    return rewindSeq >= 0 && seq >= rewindSeq;
  }

  /** Whether the scheduled retransmission is due at {@code now}. */
  boolean resumeDue(long now) {
    return rewindSeq >= 0 && now - resumeAtNanos >= 0;
  }

  /** Takes the scheduled retransmission: the request to transmit again from. */
  long takeRewind() {
    long seq = rewindSeq;
    rewindSeq = -1;
    return seq;
  }

  /** An RNR NAK for {@code seq}: false when the RNR retries are spent, else the retransmission after its timer is scheduled. */
  boolean rnr(long seq, int timerCode) {
    if (rnrRetry != 7) {
      if (rnrLeft == 0) return false;
      rnrLeft--;
    }
    rewind(seq, SoftWire.rnrDelayNanos(timerCode));
    return true;
  }

  /** A DROPPED notice for {@code seq}: false when the retries are spent, else the retransmission after the ACK timeout is scheduled. */
  boolean dropped(long seq) {
    if (ackTimeoutNanos >= 0) {
      if (retriesLeft == 0) return false;
      retriesLeft--;
    }
    rewind(seq, ackTimeoutNanos >= 0 ? ackTimeoutNanos : SoftWire.ackTimeoutNanos(14));
    return true;
  }

  private void rewind(long seq, long delayNanos) {
    rewindSeq = seq;
    resumeAtNanos = System.nanoTime() + delayNanos;
  }

  /** Whether connecting has taken longer than the budget. */
  boolean connectTimedOut(long now) {
    return budgetNanos >= 0 && now - connectStartNanos >= budgetNanos;
  }

  /** Whether the silence since {@code lastProgressNanos}, with requests outstanding, has used up the budget. */
  boolean silentTooLong(long now, long lastProgressNanos) {
    return budgetNanos >= 0 && now - lastProgressNanos >= budgetNanos;
  }

  /**
   * The next time the connection's timer is wanted: the end of the connect budget while connecting, else the
   * scheduled retransmission or the end of the silence budget (with requests {@code outstanding}), whichever
   * comes first; {@link SoftConnection#NO_DEADLINE} when none applies.
   */
  long deadline(boolean connected, boolean outstanding, long lastProgressNanos) {
    if (!connected) return budgetNanos < 0 ? SoftConnection.NO_DEADLINE : connectStartNanos + budgetNanos;
    long d = rewindSeq >= 0 ? resumeAtNanos : SoftConnection.NO_DEADLINE;
    if (budgetNanos >= 0 && outstanding) {
      long silence = lastProgressNanos + budgetNanos;
      if (d == SoftConnection.NO_DEADLINE || silence - d < 0) d = silence;
    }
    return d;
  }
}
