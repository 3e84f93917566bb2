package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * The requester half of a software queue pair (emulation): one TCP connection to the peer device, opened when
 * the QP first has work in RTS. It transmits the send queue in order (checking each request's lkey first, as a
 * NIC does when it fetches the WQE), reads the responder's answers and turns them into completions in posting
 * order. Transport behaviour follows RC: an RNR NAK makes it wait the responder's RNR timer and retransmit from
 * that request (rnr_retry times; 7 is forever), a DROPPED notice (responder QP not ready) waits the ACK timeout
 * and retransmits (retry_cnt times), and silence for the retry budget, a refused connection or a closed one fail
 * the oldest outstanding request with {@code IBV_WC_RETRY_EXC_ERR} and move the QP to ERR, flushing the rest.
 * Runs on the device's I/O thread only.
 */
final class RequesterConnection extends SoftConnection {
  final SoftQueuePair qp;
  final int epoch;
  private final InetSocketAddress destination;
  private final int destQpn;
  private final long psnBaseSeq;
  private final int sendPsn;
  /** The ACK timeout, the retry and RNR retry counts, the scheduled retransmission and the retry budget. */
  private final RetryTimers retry;
  private boolean connected;
  /** Next request to transmit; requests below {@link #acked} have completed; below {@link #sentMax} have been sent. */
  private long txSeq;
  private long acked;
  private long sentMax;
  private final WorkRequest wr = new WorkRequest();
  private boolean payloadPending;
  /** A request that failed its local checks and was not sent: it fails when everything before it completed. */
  private long blockedSeq = -1;
  private int blockedStatus;
  /** A request whose payload went out padded: it fails when its answer comes. */
  private long poisonSeq = -1;
  private int poisonStatus;
  /** The READ whose data is being read (-1: none). */
  private long readSeq = -1;
  private SoftMemoryRegion lastLocal;

  RequesterConnection(SoftIoLoop loop, SoftQueuePair qp) {
    super(loop);
    this.qp = qp;
    long ackTimeoutNanos;
    int retryCount, rnrRetry;
    synchronized (qp.lock) {
      epoch = qp.epoch;
      destination = qp.destination;
      destQpn = qp.destQpn;
      psnBaseSeq = qp.psnBaseSeq;
      sendPsn = qp.sendPsn;
      retryCount = qp.retryCount;
      rnrRetry = qp.rnrRetry;
      ackTimeoutNanos = SoftWire.ackTimeoutNanos(qp.timeout);
      txSeq = acked = sentMax = qp.sq.completed;
    }
    retry = new RetryTimers(ackTimeoutNanos, retryCount, rnrRetry, device.settings.minimumRetryBudget().toNanos());
  }

  private int psnOf(long seq) {
    return (int) (sendPsn + (seq - psnBaseSeq)) & SoftWire.PSN_MASK;
  }

  void start() {
    try {
      channel = SocketChannel.open();
      channel.configureBlocking(false);
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      boolean done = channel.connect(destination);
      key = channel.register(loop.selector(), done ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, this);
      loop.add(this);
      if (done) onConnected();
    } catch (IOException e) {
      peerGone("cannot connect to " + destination + ": " + e);
    }
  }

  @Override
  void onConnectable() {
    try {
      if (channel.finishConnect()) onConnected();
    } catch (IOException e) {
      peerGone("cannot connect to " + destination + ": " + e);
    }
  }

  private void onConnected() {
    connected = true;
    lastProgressNanos = System.nanoTime();
    SoftWire.putHello(out, qp.qpNumber(), destQpn);
    interest(true, false);
    pump();
  }

  @Override
  void onWritable() {
    pump();
  }

  /** Transmits what the send queue holds, from {@link #txSeq} on, until the socket is full or nothing is left. */
  void pump() {
    if (closed || !connected) return;
    try {
      while (true) {
        if (payloadPending) {
          if (!writeOut()) {
            interest(true, true);
            return;
          }
          payloadPending = false;
          if (txFailure != 0 && poisonSeq < 0) {
            poisonSeq = txSeq - 1;
            poisonStatus = txFailure;
          }
        }
        if (retry.rewinding()) {
          if (!retry.resumeDue(System.nanoTime())) break;
          txSeq = retry.takeRewind();
          lastProgressNanos = System.nanoTime();
          if (blockedSeq >= txSeq) blockedSeq = -1;
          if (poisonSeq >= txSeq) poisonSeq = -1;
        }
        if (blockedSeq >= 0 || poisonSeq >= 0) break;
        int f = qp.fetchSend(txSeq, epoch, wr);
        if (f < 0) {
          close();
          return;
        }
        if (f == 0) break;
        if (!transmit()) break;
      }
      interest(true, !writeOut());
    } catch (IOException e) {
      peerGone(e.toString());
    }
  }

  /** Packs request {@link #wr} (sequence {@link #txSeq}); false when it failed its local checks and was not sent. */
  private boolean transmit() throws IOException {
    if (txSeq == acked) lastProgressNanos = System.nanoTime(); // the silence clock starts with the first outstanding request
    SoftMemoryRegion mr = null;
    if (wr.length > 0) {
      mr = localRegion();
      if (mr == null) {
        blockedSeq = txSeq;
        blockedStatus = IBV_WC_LOC_PROT_ERR;
        failBlockedIfDue();
        return false;
      }
    }
    int op = switch (wr.opcode) {
      case IBV_WR_RDMA_WRITE -> SoftWire.OP_WRITE;
      case IBV_WR_RDMA_WRITE_WITH_IMM -> SoftWire.OP_WRITE_IMM;
      case IBV_WR_RDMA_READ -> SoftWire.OP_READ;
      default -> SoftWire.OP_SEND;
    };
    boolean payload = SoftWire.hasRequestPayload(op) && wr.length > 0;
    boolean inline = payload && !mr.gpu && wr.length <= INLINE_MAX;
    if (out.remaining() < SoftWire.REQUEST_BYTES + (inline ? wr.length : 0) && !writeOut()) {
      interest(true, true);
      return false;
    }
    if (inline && !mr.pin()) {
      blockedSeq = txSeq;
      blockedStatus = IBV_WC_LOC_PROT_ERR;
      failBlockedIfDue();
      return false;
    }
    int flags = (wr.flags & IBV_SEND_SOLICITED) != 0 ? SoftWire.FLAG_SOLICITED : 0;
    SoftWire.putRequest(out, op, flags, psnOf(txSeq), wr.remoteAddress, wr.rkey, wr.length, wr.immediate);
    if (inline) {
      try {
        MemorySegment.copy(mr.segment, wr.localAddress - mr.address(), outSegment, out.position(), wr.length);
      } finally {
        mr.unpin();
      }
      out.position(out.position() + wr.length);
    } else if (payload) {
      startTx(mr, wr.localAddress, wr.length);
      payloadPending = true;
    }
    txSeq++;
    if (txSeq > sentMax) sentMax = txSeq;
    return true;
  }

  /** The region {@link #wr}'s lkey names, if it may serve the request: live, of the QP's PD, in bounds, writable for a READ. */
  private SoftMemoryRegion localRegion() {
    SoftMemoryRegion mr = lastLocal;
    if (mr == null || mr.lkey() != wr.lkey || !mr.live()) {
      mr = device.regionByLkey(wr.lkey);
      if (mr == null) return null;
      lastLocal = mr;
    }
    if (mr.pd != qp.pd || !mr.contains(wr.localAddress, wr.length)) return null;
    if (wr.opcode == IBV_WR_RDMA_READ && (mr.access() & IBV_ACCESS_LOCAL_WRITE) == 0) return null;
    return mr;
  }

  private void failBlockedIfDue() {
    if (blockedSeq >= 0 && acked == blockedSeq) {
      qp.failSend(blockedSeq, blockedStatus, epoch);
      close();
    }
  }

  @Override
  void onReadable() {
    if (closed) return;
    try {
      int n = fillIn();
      while (!closed) {
        if (readSeq >= 0) {
          if (!readPayload()) break;
          finishRead();
          continue;
        }
        if (in.remaining() < SoftWire.RESPONSE_BYTES) break;
        onResponse();
      }
      if (n < 0 && !closed) peerGone("the peer device closed the connection");
    } catch (IOException e) {
      peerGone(e.toString());
    }
  }

  private void onResponse() throws IOException {
    int type = in.get();
    int aux = in.get() & 0xff;
    in.getShort();
    int psn = in.getInt();
    int length = in.getInt();
    in.getInt();
    long seq = SoftWire.seqOf(psn, acked, psnOf(acked));
    if (seq < acked - 1 || seq >= sentMax) throw new IOException("protocol error: response type " + type + " for PSN " + psn + " which is not outstanding");
    switch (type) {
      case SoftWire.ACK -> ackThrough(seq);
      case SoftWire.READ_DATA -> beginRead(seq, length);
      case SoftWire.NAK_ACCESS -> nak(seq, IBV_WC_REM_ACCESS_ERR);
      case SoftWire.NAK_INVALID -> nak(seq, IBV_WC_REM_INV_REQ_ERR);
      case SoftWire.NAK_REMOTE_OP -> nak(seq, IBV_WC_REM_OP_ERR);
      case SoftWire.NAK_RNR -> onRnr(seq, aux);
      case SoftWire.DROPPED -> onDropped(seq);
      default -> throw new IOException("protocol error: unknown response type " + type);
    }
  }

  private void ackThrough(long seq) {
    if (seq < acked) return;
    if (poisonSeq >= 0 && poisonSeq <= seq) {
      qp.failSend(poisonSeq, poisonStatus, epoch);
      close();
      return;
    }
    qp.acknowledge(seq, epoch);
    acked = seq + 1;
    retry.acknowledged();
    failBlockedIfDue();
  }

  private void beginRead(long seq, int length) throws IOException {
    ackThrough(seq - 1);
    if (closed) return;
    if (seq != acked) throw new IOException("protocol error: READ data for " + seq + " while " + acked + " is the oldest outstanding");
    int f = qp.fetchSend(seq, epoch, wr);
    if (f <= 0) {
      close();
      return;
    }
    if (wr.opcode != IBV_WR_RDMA_READ || wr.length != length) {
      throw new IOException("protocol error: " + length + " bytes of READ data for a request of opcode " + wr.opcode + ", length " + wr.length);
    }
    SoftMemoryRegion mr = length > 0 ? localRegion() : null;
    if (length > 0 && mr == null) startDrain(length, IBV_WC_LOC_PROT_ERR);
    else startRx(mr, wr.localAddress, length);
    readSeq = seq;
  }

  private void finishRead() {
    long seq = readSeq;
    readSeq = -1;
    if (rxFailure != 0) {
      qp.failSend(seq, rxFailure, epoch);
      close();
    } else {
      ackThrough(seq);
    }
  }

  private void nak(long seq, int status) {
    ackThrough(seq - 1);
    if (closed) return;
    log.debug("software RDMA (emulation) {}: {} request {} answered {}", device.label, qp, seq, org.mori4j.transport.rdma.verbs.WcStatus.name(status));
    qp.failSend(seq, status, epoch);
    close();
  }

  private void onRnr(long seq, int timerCode) {
    ackThrough(seq - 1);
    if (closed || retry.covers(seq)) return;
    if (!retry.rnr(seq, timerCode)) {
      qp.failSend(seq, IBV_WC_RNR_RETRY_EXC_ERR, epoch);
      close();
    }
  }

  private void onDropped(long seq) {
    ackThrough(seq - 1);
    if (closed || retry.covers(seq)) return;
    if (!retry.dropped(seq)) {
      qp.failSend(seq, IBV_WC_RETRY_EXC_ERR, epoch);
      close();
    }
  }

  private boolean outstanding() {
    return !retry.rewinding() && (acked < txSeq || payloadPending);
  }

  @Override
  long deadline() {
    if (closed) return NO_DEADLINE;
    return retry.deadline(connected, outstanding(), lastProgressNanos);
  }

  @Override
  void onTimer(long now) {
    if (closed) return;
    if (!connected) {
      if (retry.connectTimedOut(now)) peerGone("connecting to " + destination + " timed out");
      return;
    }
    if (retry.resumeDue(now)) pump();
    if (!closed && outstanding() && retry.silentTooLong(now, lastProgressNanos)) {
      peerGone("no answer from " + destination + " for " + retry.budgetNanos / 1_000_000 + " ms (the QP's retry budget)");
    }
  }

  /** The peer cannot be reached: outstanding requests end with {@code IBV_WC_RETRY_EXC_ERR} (the oldest) and flushes. */
  void peerGone(String reason) {
    if (closed) return;
    if (qp.failOutstanding(IBV_WC_RETRY_EXC_ERR, epoch)) {
      log.info("software RDMA (emulation) {}: {} lost its peer QP {} at {}: {}; outstanding requests complete with"
          + " IBV_WC_RETRY_EXC_ERR and flush", device.label, qp, SoftErrors.hex(destQpn), destination, reason);
    } else {
      log.debug("software RDMA (emulation) {}: {} closed its idle connection to {}: {}", device.label, qp, destination, reason);
    }
    close();
  }

  @Override
  void fail(String reason) {
    if (closed) return;
    log.error("software RDMA (emulation) {}: {} connection to {} broke: {}", device.label, qp, destination, reason);
    if (qp.failOutstanding(IBV_WC_GENERAL_ERR, epoch)) log.error("outstanding requests of {} fail with IBV_WC_GENERAL_ERR", qp);
    close();
  }

  @Override
  void close() {
    super.close();
    if (qp.requester == this) qp.requester = null;
  }
}
