package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * The responder half of a software queue pair (emulation): a connection a peer's requester opened toward one of
 * this device's QPs. It executes requests in PSN order with a NIC responder's checks: a QP that is not in
 * RTR/RTS drops them (one DROPPED notice, then silence until the requester retransmits); a request of the wrong
 * PSN or from a QP other than the connected one is dropped silently; a SEND or WRITE_WITH_IMM without a posted
 * receive gets an RNR NAK; an operation the QP's access flags do not enable, a SEND longer than its receive,
 * an rkey that does not name a live region of the QP's PD with the needed access over the whole range, or a bad
 * receive buffer get a NAK and move the responder QP to ERR (IB class C errors). Payloads land in (and READ data
 * leaves from) registered memory directly. ACKs are coalesced: one per batch of requests read together.
 * Runs on the device's I/O thread only.
 */
final class ResponderConnection extends SoftConnection {
  private static final int SILENT = 0, ACCEPT = 1;

  private boolean helloDone;
  private int srcQpn;
  private int dstQpn;
  private SoftQueuePair qp;
  private final ReceiveQueue.ReceiveSlot receive = new ReceiveQueue.ReceiveSlot();
  // the request being executed
  private int op;
  private int flags;
  private int psn;
  private long remoteAddress;
  private int rkey;
  private int length;
  private int immediate;
  private long receiveSeq;
  private SoftMemoryRegion target;
  private long targetAddress;
  /** The payload being read belongs to an accepted request (false: it is drained). */
  private boolean executing;
  private boolean inPayload;
  private boolean readDataPending;
  private boolean ackPending;
  private int ackPsn;
  /** After a DROPPED notice for this PSN, everything else is dropped silently until it comes again (-1: none). */
  private int dropPsn = -1;
  private SoftMemoryRegion lastRemote;
  private SoftMemoryRegion lastReceive;

  ResponderConnection(SoftIoLoop loop, SocketChannel channel) {
    super(loop);
    this.channel = channel;
  }

  void register() throws IOException {
    key = channel.register(loop.selector(), SelectionKey.OP_READ, this);
    loop.add(this);
  }

  @Override
  void onConnectable() {}

  @Override
  void onWritable() {
    process();
  }

  @Override
  void onReadable() {
    if (closed) return;
    try {
      int n = fillIn();
      process();
      if (n < 0 && !closed) close();
    } catch (IOException e) {
      log.debug("software RDMA (emulation) {}: responder connection closed: {}", device.label, e.toString());
      close();
    }
  }

  private void process() {
    if (closed) return;
    try {
      while (!closed) {
        if (readDataPending) {
          if (!writeOut()) {
            interest(false, true);
            return;
          }
          readDataPending = false;
        }
        if (inPayload) {
          if (!readPayload()) break;
          inPayload = false;
          if (executing) finishRequest();
          continue;
        }
        if (out.remaining() < 2 * SoftWire.RESPONSE_BYTES + INLINE_MAX && !writeOut()) {
          interest(false, true);
          return;
        }
        if (!helloDone) {
          if (in.remaining() < SoftWire.HELLO_BYTES) break;
          readHello();
          continue;
        }
        if (in.remaining() < SoftWire.REQUEST_BYTES) break;
        op = in.get();
        flags = in.get() & 0xff;
        in.getShort();
        psn = in.getInt();
        remoteAddress = in.getLong();
        rkey = in.getInt();
        length = in.getInt();
        immediate = in.getInt();
        in.getInt();
        if (op < SoftWire.OP_WRITE || op > SoftWire.OP_SEND || length < 0) throw new IOException("protocol error: request op " + op + ", length " + length);
        execute();
      }
      if (ackPending) {
        SoftWire.putResponse(out, SoftWire.ACK, 0, ackPsn, 0);
        ackPending = false;
      }
      interest(true, !writeOut());
    } catch (IOException e) {
      log.debug("software RDMA (emulation) {}: responder connection closed: {}", device.label, e.toString());
      close();
    }
  }

  private void readHello() throws IOException {
    int magic = in.getInt();
    short version = in.getShort();
    in.getShort();
    srcQpn = in.getInt();
    dstQpn = in.getInt();
    in.getLong();
    if (magic != SoftWire.MAGIC || version != SoftWire.VERSION) {
      throw new IOException("not a software RDMA peer (magic " + Integer.toHexString(magic) + ", version " + version + ")");
    }
    helloDone = true;
    qp = device.queuePair(dstQpn);
    // one live connection per responder QP, so that its receives are taken and completed in order
    if (qp != null) {
      ResponderConnection previous = qp.responder;
      qp.responder = this;
      if (previous != null && previous != this) previous.close();
    }
  }

  private void execute() {
    int verdict = admit();
    executing = verdict == ACCEPT;
    if (verdict == ACCEPT) {
      if (op == SoftWire.OP_READ) {
        respond(SoftWire.READ_DATA, 0, length);
        if (length > 0 && !readDataInline()) {
          startTx(target, targetAddress, length);
          readDataPending = true;
        }
        return;
      }
      if (length == 0) {
        rxFailure = 0;
        finishRequest();
        return;
      }
      startRx(target, targetAddress, length);
      inPayload = true;
      return;
    }
    if (verdict != SILENT) respond(verdict, verdict == SoftWire.NAK_RNR ? qp.minRnrTimer : 0, 0);
    if (SoftWire.hasRequestPayload(op) && length > 0) {
      startDrain(length, 0);
      inPayload = true;
    }
  }

  /** Small READ data from host memory rides in the output buffer behind its header; false when it cannot. */
  private boolean readDataInline() {
    if (target.gpu || length > INLINE_MAX || out.remaining() < length || !target.pin()) return false;
    try {
      MemorySegment.copy(target.segment, targetAddress - target.address(), outSegment, out.position(), length);
    } finally {
      target.unpin();
    }
    out.position(out.position() + length);
    return true;
  }

  /** The responder's checks, in a NIC's order; ACCEPT, SILENT or the response type that refuses the request. */
  private int admit() {
    if (qp == null || qp.isClosed()) qp = device.queuePair(dstQpn);
    SoftQueuePair q = qp;
    if (dropPsn >= 0 && psn != dropPsn) return SILENT;
    if (q == null) {
      dropPsn = psn;
      return SoftWire.DROPPED;
    }
    synchronized (q.lock) {
      if (q.closed || (q.state != IBV_QPS_RTR && q.state != IBV_QPS_RTS)) {
        dropPsn = psn;
        return SoftWire.DROPPED;
      }
      dropPsn = -1;
      if (srcQpn != q.destQpn || psn != q.expectedPsn) return SILENT;
      int need = op == SoftWire.OP_READ ? IBV_ACCESS_REMOTE_READ : op == SoftWire.OP_SEND ? 0 : IBV_ACCESS_REMOTE_WRITE;
      if ((q.accessFlags & need) != need) {
        q.moveToErrorLocked();
        return SoftWire.NAK_INVALID;
      }
      receiveSeq = -1;
      if (op == SoftWire.OP_SEND || op == SoftWire.OP_WRITE_IMM) {
        receiveSeq = q.rq.take(receive);
        if (receiveSeq < 0) return SoftWire.NAK_RNR;
      }
      target = null;
      if (op == SoftWire.OP_SEND) {
        if (length > receive.length) {
          q.rq.complete(receiveSeq, q.receiveCq, q.qpNumber(), IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, 0, 0, 0, false);
          q.moveToErrorLocked();
          return SoftWire.NAK_INVALID;
        }
        if (length > 0) {
          SoftMemoryRegion mr = lastReceive;
          if (mr == null || mr.lkey() != receive.lkey || !mr.live()) mr = lastReceive = device.regionByLkey(receive.lkey);
          if (mr == null || mr.pd != q.pd || (mr.access() & IBV_ACCESS_LOCAL_WRITE) == 0 || !mr.contains(receive.address, length)) {
            q.rq.complete(receiveSeq, q.receiveCq, q.qpNumber(), IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, 0, 0, false);
            q.moveToErrorLocked();
            return SoftWire.NAK_REMOTE_OP;
          }
          target = mr;
          targetAddress = receive.address;
        }
      } else if (length > 0) {
        SoftMemoryRegion mr = lastRemote;
        if (mr == null || mr.rkey() != rkey || !mr.live()) mr = lastRemote = device.regionByRkey(rkey);
        int flag = op == SoftWire.OP_READ ? IBV_ACCESS_REMOTE_READ : IBV_ACCESS_REMOTE_WRITE;
        if (mr == null || mr.pd != q.pd || (mr.access() & flag) == 0 || !mr.contains(remoteAddress, length)) {
          if (receiveSeq >= 0) {
            q.rq.complete(receiveSeq, q.receiveCq, q.qpNumber(), IBV_WC_REM_ACCESS_ERR, IBV_WC_RECV_RDMA_WITH_IMM, 0, 0, 0, false);
          }
          q.moveToErrorLocked();
          return SoftWire.NAK_ACCESS;
        }
        target = mr;
        targetAddress = remoteAddress;
      }
      q.expectedPsn = (q.expectedPsn + 1) & SoftWire.PSN_MASK;
      return ACCEPT;
    }
  }

  /** The payload of an accepted request has landed (or failed to): complete its receive and answer. */
  private void finishRequest() {
    executing = false;
    SoftQueuePair q = qp;
    boolean solicited = (flags & SoftWire.FLAG_SOLICITED) != 0;
    if (rxFailure != 0) {
      synchronized (q.lock) {
        if (receiveSeq >= 0) {
          q.rq.complete(receiveSeq, q.receiveCq, q.qpNumber(), rxFailure,
              op == SoftWire.OP_SEND ? IBV_WC_RECV : IBV_WC_RECV_RDMA_WITH_IMM, 0, 0, 0, false);
        }
        q.moveToErrorLocked();
      }
      respond(rxFailure == IBV_WC_LOC_PROT_ERR && op != SoftWire.OP_SEND ? SoftWire.NAK_ACCESS : SoftWire.NAK_REMOTE_OP, 0, 0);
      return;
    }
    if (op == SoftWire.OP_WRITE_IMM) {
      synchronized (q.lock) {
        q.rq.complete(receiveSeq, q.receiveCq, q.qpNumber(), IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, length, immediate,
            IBV_WC_WITH_IMM, solicited);
      }
    } else if (op == SoftWire.OP_SEND) {
      synchronized (q.lock) {
        q.rq.complete(receiveSeq, q.receiveCq, q.qpNumber(), IBV_WC_SUCCESS, IBV_WC_RECV, length, 0, 0, solicited);
      }
    }
    ackPending = true;
    ackPsn = psn;
  }

  /** Queues a response for the current request behind any pending ACK (responses stay in PSN order). */
  private void respond(int type, int aux, int dataLength) {
    if (ackPending) {
      SoftWire.putResponse(out, SoftWire.ACK, 0, ackPsn, 0);
      ackPending = false;
    }
    SoftWire.putResponse(out, type, aux, psn, dataLength);
  }

  @Override
  long deadline() {
    return NO_DEADLINE;
  }

  @Override
  void onTimer(long now) {}

  @Override
  void fail(String reason) {
    log.error("software RDMA (emulation) {}: responder connection for QP {} broke: {}", device.label, SoftErrors.hex(dstQpn), reason);
    close();
  }

  @Override
  void close() {
    super.close();
    if (qp != null && qp.responder == this) qp.responder = null;
  }
}
