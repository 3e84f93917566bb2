package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.Errno.*;
import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import org.mori4j.natives.verbs.VerbsQueuePair.InitAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtrAttributes;
import org.mori4j.natives.verbs.VerbsQueuePair.RtsAttributes;
import org.mori4j.transport.rdma.verbs.PostException;
import org.mori4j.transport.rdma.verbs.QueuePair;
import org.mori4j.transport.rdma.verbs.ReceiveRequests;
import org.mori4j.transport.rdma.verbs.SendRequests;

/**
 * A reliable-connected queue pair of the software RDMA device (emulation). Its state machine is the verbs one
 * (RESET -> INIT -> RTR -> RTS, INIT -> INIT, any -> ERR and, through {@link #toReset()}, any -> RESET), its
 * posts are checked as {@code ibv_post_send}/{@code ibv_post_recv} check them, and it executes its requests
 * through a {@link RequesterConnection} toward the destination the RTR attributes name (the GID carries the
 * peer device's address, see {@link SoftGid}), while a {@link ResponderConnection} executes the peer's requests
 * against it. Posting only fills the send queue under a short lock and wakes the device's I/O thread; nothing on
 * the posting thread waits for the network. Every field below is guarded by {@link #lock} unless noted.
 */
final class SoftQueuePair implements QueuePair {
  final SoftDevice device;
  final SoftProtectionDomain pd;
  final SoftCompletionQueue sendCq;
  final SoftCompletionQueue receiveCq;
  private final int qpn;
  final Object lock = new Object();
  final SendQueue sq;
  final ReceiveQueue rq;
  volatile int state = IBV_QPS_RESET;
  /** Bumped whenever the connection this QP sends on must be abandoned (ERR, RESET, close). */
  volatile int epoch;
  boolean closed;
  int accessFlags;
  int destQpn;
  InetSocketAddress destination;
  /** The PSN the responder side accepts next (from RTR's receive PSN). */
  int expectedPsn;
  int minRnrTimer;
  /** Sequence number of the send request that carries {@link #sendPsn}. */
  long psnBaseSeq;
  int sendPsn;
  int timeout;
  int retryCount;
  int rnrRetry;
  /** The CQ overran: the QP goes to ERR (checked by the I/O thread and by {@link #state()}). */
  private volatile boolean fatal;
  final AtomicBoolean kicked = new AtomicBoolean();
  /** I/O thread only: the connection that carries this QP's requests, and the one that brings its peer's. */
  RequesterConnection requester;
  ResponderConnection responder;

  SoftQueuePair(SoftDevice device, SoftProtectionDomain pd, SoftCompletionQueue sendCq, SoftCompletionQueue receiveCq,
                int qpn, int maxSendWr, int maxReceiveWr) {
    this.device = device;
    this.pd = pd;
    this.sendCq = sendCq;
    this.receiveCq = receiveCq;
    this.qpn = qpn;
    this.sq = new SendQueue(maxSendWr);
    this.rq = new ReceiveQueue(maxReceiveWr);
  }

  @Override
  public int qpNumber() {
    return qpn;
  }

  @Override
  public int state() {
    if (fatal) applyFatal();
    return state;
  }

  @Override
  public int maxSendWr() {
    return sq.capacity;
  }

  @Override
  public void toInit(InitAttributes init) {
    synchronized (lock) {
      checkModifiable(IBV_QPS_INIT, IBV_QPS_RESET, IBV_QPS_INIT);
      if (init.port() != 1) throw invalid("port " + init.port() + " does not exist; the software device has port 1");
      if (init.pkeyIndex() != 0) throw invalid("P_Key index " + init.pkeyIndex() + " is outside the P_Key table of 1 entry");
      accessFlags = init.accessFlags();
      state = IBV_QPS_INIT;
    }
  }

  @Override
  public void toReadyToReceive(RtrAttributes rtr) {
    synchronized (lock) {
      checkModifiable(IBV_QPS_RTR, IBV_QPS_INIT, IBV_QPS_INIT);
      if (rtr.port() != 1) throw invalid("address vector port " + rtr.port() + " does not exist; the software device has port 1");
      if (rtr.pathMtu() < IBV_MTU_256 || rtr.pathMtu() > IBV_MTU_4096) {
        throw invalid("path MTU " + rtr.pathMtu() + " is not an IBV_MTU_* value the port supports (1..5, active IBV_MTU_4096)");
      }
      if ((rtr.destinationQpNumber() & ~SoftWire.PSN_MASK) != 0) throw invalid("destination QP number " + rtr.destinationQpNumber() + " exceeds 24 bits");
      if ((rtr.receivePsn() & ~SoftWire.PSN_MASK) != 0) throw invalid("receive PSN " + rtr.receivePsn() + " exceeds 24 bits");
      if (rtr.minRnrTimer() < 0 || rtr.minRnrTimer() > 31) throw invalid("min RNR timer " + rtr.minRnrTimer() + " is outside 0..31");
      if (rtr.destinationGid() == null) {
        throw invalid("no destination GID: the software device's link layer is Ethernet (RoCE), which is addressed by GID, not LID");
      }
      if (rtr.sourceGidIndex() != 0) throw invalid("source GID index " + rtr.sourceGidIndex() + " is outside the GID table of 1 entry");
      InetSocketAddress to = SoftGid.decode(rtr.destinationGid());
      if (to == null) {
        throw invalid("destination GID " + SoftGid.format(rtr.destinationGid()) + " is not a software RDMA device's GID"
            + " (::ffff:a.b.c.d with the TCP port in bytes 8-9)");
      }
      destination = to;
      destQpn = rtr.destinationQpNumber();
      expectedPsn = rtr.receivePsn();
      minRnrTimer = rtr.minRnrTimer();
      state = IBV_QPS_RTR;
    }
  }

  @Override
  public void toReadyToSend(RtsAttributes rts) {
    synchronized (lock) {
      checkModifiable(IBV_QPS_RTS, IBV_QPS_RTR, IBV_QPS_RTR);
      if (rts.timeout() < 0 || rts.timeout() > 31) throw invalid("timeout " + rts.timeout() + " is outside 0..31");
      if (rts.retryCount() < 0 || rts.retryCount() > 7) throw invalid("retry count " + rts.retryCount() + " is outside 0..7");
      if (rts.rnrRetry() < 0 || rts.rnrRetry() > 7) throw invalid("RNR retry " + rts.rnrRetry() + " is outside 0..7");
      if ((rts.sendPsn() & ~SoftWire.PSN_MASK) != 0) throw invalid("send PSN " + rts.sendPsn() + " exceeds 24 bits");
      sendPsn = rts.sendPsn();
      psnBaseSeq = sq.posted;
      timeout = rts.timeout();
      retryCount = rts.retryCount();
      rnrRetry = rts.rnrRetry();
      state = IBV_QPS_RTS;
    }
  }

  @Override
  public void toError() {
    synchronized (lock) {
      if (closed) throw SoftErrors.error("ibv_modify_qp", EINVAL, "QP " + SoftErrors.hex(qpn) + " is destroyed");
      moveToErrorLocked();
    }
  }

  /**
   * Any state -> RESET: every posted request and receive is dropped without a completion, as in verbs. The
   * {@link QueuePair} interface has no such method; the software provider offers it for completeness and tests.
   */
  public void toReset() {
    synchronized (lock) {
      if (closed) throw SoftErrors.error("ibv_modify_qp", EINVAL, "QP " + SoftErrors.hex(qpn) + " is destroyed");
      state = IBV_QPS_RESET;
      epoch++;
      sq.clear();
      rq.clear();
    }
    device.dropConnections(this);
  }

  private void checkModifiable(int target, int from1, int from2) {
    if (closed) throw SoftErrors.error("ibv_modify_qp", EINVAL, "QP " + SoftErrors.hex(qpn) + " is destroyed");
    if (fatal && state != IBV_QPS_ERR) moveToErrorLocked();
    if (state != from1 && state != from2) {
      throw SoftErrors.error("ibv_modify_qp", EINVAL, "QP " + SoftErrors.hex(qpn) + " cannot go from " + SoftErrors.stateName(state)
          + " to " + SoftErrors.stateName(target) + " (allowed: RESET->INIT, INIT->INIT, INIT->RTR, RTR->RTS, any->ERR, any->RESET)");
    }
  }

  private RuntimeException invalid(String message) {
    return SoftErrors.error("ibv_modify_qp", EINVAL, "QP " + SoftErrors.hex(qpn) + ": " + message);
  }

  /** ERR: every outstanding send request and posted receive completes with {@code IBV_WC_WR_FLUSH_ERR}. */
  void moveToErrorLocked() {
    if (state != IBV_QPS_ERR) {
      state = IBV_QPS_ERR;
      epoch++;
      device.dropConnections(this);
    }
    sq.flush(sendCq, qpn);
    rq.flush(receiveCq, qpn);
  }

  /** A completion queue of this QP overran: ERR as soon as a thread looks at the QP. */
  void markFatal() {
    fatal = true;
    kick();
  }

  void applyFatal() {
    synchronized (lock) {
      if (fatal && !closed && state != IBV_QPS_ERR) moveToErrorLocked();
    }
  }

  boolean fatal() {
    return fatal;
  }

  void kick() {
    if (kicked.compareAndSet(false, true)) device.loop.kick(this);
  }

  @Override
  public void postSend(SendRequests requests, int from, int count) {
    if (requests == null) throw SoftErrors.postError("ibv_post_send", EINVAL, 0, "requests is null");
    if (from < 0 || count < 0 || from > requests.capacity() - count) {
      throw SoftErrors.postError("ibv_post_send", EINVAL, 0, "range [" + from + ", +" + count + ") is outside the "
          + requests.capacity() + " requests");
    }
    if (fatal) applyFatal();
    int posted = 0;
    PostException failure = null;
    synchronized (lock) {
      if (closed) throw SoftErrors.postError("ibv_post_send", EINVAL, 0, "QP " + SoftErrors.hex(qpn) + " is destroyed");
      // in ERR a NIC takes the requests and completes them as flushed (the IB spec's Error state); before RTS it refuses them
      if (state != IBV_QPS_RTS && state != IBV_QPS_ERR) {
        throw SoftErrors.postError("ibv_post_send", EINVAL, 0, "QP " + SoftErrors.hex(qpn) + " is in " + SoftErrors.stateName(state)
            + "; posting sends needs RTS");
      }
      for (; posted < count; posted++) {
        int i = from + posted;
        int op = requests.opcode(i);
        if (op != IBV_WR_RDMA_WRITE && op != IBV_WR_RDMA_WRITE_WITH_IMM && op != IBV_WR_RDMA_READ && op != IBV_WR_SEND) {
          failure = SoftErrors.postError("ibv_post_send", EINVAL, posted, "request " + i + ": opcode " + op
              + " is not supported (RDMA WRITE, WRITE_WITH_IMM, READ and SEND are)");
          break;
        }
        if ((requests.flags(i) & IBV_SEND_INLINE) != 0) {
          failure = SoftErrors.postError("ibv_post_send", EINVAL, posted, "request " + i
              + ": IBV_SEND_INLINE is not supported (max_inline_data is 0)");
          break;
        }
        if (sq.free() == 0) {
          failure = SoftErrors.postError("ibv_post_send", ENOMEM, posted, "request " + i + ": the send queue of QP "
              + SoftErrors.hex(qpn) + " is full (" + sq.capacity + " slots; unsignaled requests hold theirs until a later"
              + " signaled one completes)");
          break;
        }
        sq.put(requests, i);
      }
      if (state == IBV_QPS_ERR) sq.flush(sendCq, qpn);
    }
    if (posted > 0) kick();
    if (failure != null) throw failure;
  }

  @Override
  public void postReceive(ReceiveRequests requests, int from, int count) {
    if (requests == null) throw SoftErrors.postError("ibv_post_recv", EINVAL, 0, "requests is null");
    if (from < 0 || count < 0 || from > requests.capacity() - count) {
      throw SoftErrors.postError("ibv_post_recv", EINVAL, 0, "range [" + from + ", +" + count + ") is outside the "
          + requests.capacity() + " receives");
    }
    if (fatal) applyFatal();
    synchronized (lock) {
      if (closed) throw SoftErrors.postError("ibv_post_recv", EINVAL, 0, "QP " + SoftErrors.hex(qpn) + " is destroyed");
      if (state != IBV_QPS_INIT && state != IBV_QPS_RTR && state != IBV_QPS_RTS && state != IBV_QPS_ERR) {
        throw SoftErrors.postError("ibv_post_recv", EINVAL, 0, "QP " + SoftErrors.hex(qpn) + " is in " + SoftErrors.stateName(state)
            + "; posting receives needs INIT, RTR, RTS or ERR");
      }
      for (int k = 0; k < count; k++) {
        if (rq.free() == 0) {
          throw SoftErrors.postError("ibv_post_recv", ENOMEM, k, "receive " + (from + k) + ": the receive queue of QP "
              + SoftErrors.hex(qpn) + " is full (" + rq.capacity + " slots)");
        }
        rq.put(requests, from + k);
      }
      if (state == IBV_QPS_ERR) rq.flush(receiveCq, qpn);
    }
  }

  // ---- called by the requester connection (device I/O thread) ----

  /** Copies send request {@code seq} into {@code into}: 1 done, 0 not posted yet, -1 the connection's epoch is over. */
  int fetchSend(long seq, int connectionEpoch, WorkRequest into) {
    synchronized (lock) {
      if (connectionEpoch != epoch || state != IBV_QPS_RTS) return -1;
      if (seq >= sq.posted) return 0;
      sq.copy(seq, into);
      return 1;
    }
  }

  /** Send requests up to and including {@code seq} succeeded. */
  void acknowledge(long seq, int connectionEpoch) {
    synchronized (lock) {
      if (connectionEpoch != epoch) return;
      while (sq.completed <= seq && sq.completed < sq.posted) sq.completeNext(sendCq, qpn);
    }
  }

  /** Requests before {@code seq} succeeded, {@code seq} failed with {@code status}: ERR, flushing the rest. */
  void failSend(long seq, int status, int connectionEpoch) {
    synchronized (lock) {
      if (connectionEpoch != epoch) return;
      while (sq.completed < seq && sq.completed < sq.posted) sq.completeNext(sendCq, qpn);
      if (sq.completed == seq && seq < sq.posted) sq.failNext(sendCq, qpn, status);
      moveToErrorLocked();
    }
  }

  /** The peer is gone: the oldest outstanding request fails with {@code status}, the rest flush. False when none was outstanding. */
  boolean failOutstanding(int status, int connectionEpoch) {
    synchronized (lock) {
      if (connectionEpoch != epoch || sq.completed == sq.posted) return false;
      sq.failNext(sendCq, qpn, status);
      moveToErrorLocked();
      return true;
    }
  }

  /** I/O thread: a kick (new posts, a fatal CQ, a finished state change) reached this QP. */
  void service() {
    if (fatal) applyFatal();
    RequesterConnection c = requester;
    if (c != null && c.epoch != epoch) {
      c.close();
      c = null;
    }
    if (c != null) {
      c.pump();
      return;
    }
    boolean work;
    synchronized (lock) {
      work = !closed && state == IBV_QPS_RTS && sq.completed < sq.posted;
    }
    if (work) {
      requester = new RequesterConnection(device.loop, this);
      requester.start();
    }
  }

  /** I/O thread: closes the connections this QP no longer uses (all of them once it is destroyed). */
  void dropStaleConnections() {
    RequesterConnection c = requester;
    if (c != null && (closed || c.epoch != epoch)) c.close();
    ResponderConnection r = responder;
    if (r != null && closed) r.close();
  }

  /** The device closes under this QP: outstanding requests and receives flush so that nobody waits for them. */
  void deviceClosing() {
    synchronized (lock) {
      if (!closed) moveToErrorLocked();
    }
  }

  boolean isClosed() {
    synchronized (lock) {
      return closed;
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) return;
      closed = true;
      state = IBV_QPS_RESET;
      epoch++;
      sq.clear();
      rq.clear();
    }
    sendCq.detach(this);
    receiveCq.detach(this);
    pd.forget(this);
    device.forget(this);
  }

  @Override
  public String toString() {
    return "QP " + SoftErrors.hex(qpn) + " (" + SoftErrors.stateName(state) + ") of " + device.label;
  }
}
