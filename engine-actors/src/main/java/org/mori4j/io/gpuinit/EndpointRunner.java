package org.mori4j.io.gpuinit;

import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.lang.foreign.ValueLayout;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;

/**
 * The proxy's side of one endpoint, touched only by the proxy thread: reads published WQEs in index order,
 * checks them as a NIC would, issues them through the engine (plain WRITE and READ pipelined; FENCE, SEND,
 * WRITE_WITH_IMM and atomics after every earlier WQE completed), retires them in order with a CQE for each signaled
 * WQE and each error, never into a full CQ, and flushes after the first error. Receives are {@link ReceiveQueue}'s.
 */
final class EndpointRunner {
  private static final ValueLayout.OfLong L = ValueLayout.JAVA_LONG;
  private static final ValueLayout.OfInt I = ValueLayout.JAVA_INT;
  private static final ValueLayout.OfByte B = ValueLayout.JAVA_BYTE;
  private static final byte[] NO_PAYLOAD = new byte[0];

  final RdmaEndpoint ep;
  final EndpointBlock b;
  final RdmaDeviceContext ctx;
  final Proxy proxy;
  final ReceiveQueue receives;
  private final WqeRecord[] recs;
  private final int mask;
  Peer peer;
  long processed, retired, cqProducer;
  private long hooked = -1;
  private boolean errorSeen, errorState;
  private long firstErrorIndex = -1;
  private int errorCount;

  EndpointRunner(RdmaEndpoint ep, Proxy proxy) {
    this.ep = ep;
    this.b = ep.block;
    this.ctx = ep.ctx;
    this.proxy = proxy;
    this.recs = new WqeRecord[b.sqDepth];
    for (int i = 0; i < recs.length; i++) recs[i] = new WqeRecord();
    this.mask = b.sqDepth - 1;
    this.receives = new ReceiveQueue(this);
  }

  void connect(Peer p) {
    peer = p;
    b.setIntRelease(CTRL_STATE, errorState ? STATE_ERROR : STATE_RTS);
  }

  boolean connected() {
    return peer != null;
  }

  boolean inError() {
    return errorSeen;
  }

  /** One round: issue what the device published, retire what completed; returns how much happened. */
  int poll(long now) {
    // an endpoint that is not connected has no send queue to poll, but may be the target of a connected peer's SENDs
    if (peer == null) return receives.pending() ? receives.poll(now) : 0;
    int work = receives.poll(now);
    for (int pass = 0; pass < 2; pass++) {
      int n = issue(now) + retire(now);
      work += n;
      if (n == 0) break;
    }
    return work;
  }

  /**
   * Before the proxy parks: the oldest unretired work request, if it waits on the engine, wakes the proxy when it
   * completes. Retirement is in order, so only that one matters; hooking it here rather than at issue keeps a busy
   * proxy from allocating a completion stage per work request.
   */
  void hookHead() {
    if (retired == processed || retired == hooked) return;
    WqeRecord r = recs[(int) (retired & mask)];
    if (r.phase != WqeRecord.ENGINE || !r.status.inProgress()) return;
    hooked = retired;
    r.status.completion().whenComplete(proxy.wake);
  }

  /** In flight: issued and not retired (the proxy keeps spinning while there is any). */
  boolean busy() {
    return processed != retired || receives.pending();
  }

  private int issue(long now) {
    long limit = Math.min(b.getAcquire(CTRL_SQ_DOORBELL), b.getAcquire(CTRL_SQ_DBR_RECORD));
    int n = 0;
    while (processed < limit) {
      WqeRecord r = recs[(int) (processed & mask)];
      if (r.index != processed) decode(r, processed);
      if (!start(r, now)) break;
      processed++;
      n++;
    }
    return n;
  }

  private void decode(WqeRecord r, long index) {
    long o = b.wqe(index);
    var s = b.seg;
    r.index = index;
    r.op = s.get(B, o + WQE_OPCODE) & 0xFF;
    r.flags = s.get(B, o + WQE_FLAGS) & 0xFF;
    r.imm = s.get(I, o + WQE_IMMEDIATE);
    r.wrId = s.get(L, o + WQE_WR_ID);
    r.laddr = s.get(L, o + WQE_LOCAL_ADDR);
    r.lkey = s.get(I, o + WQE_LKEY);
    r.length = s.get(I, o + WQE_LENGTH);
    r.raddr = s.get(L, o + WQE_REMOTE_ADDR);
    r.rkey = s.get(I, o + WQE_RKEY);
    r.compareAdd = s.get(L, o + WQE_COMPARE_ADD);
    r.swap = s.get(L, o + WQE_SWAP);
    r.phase = WqeRecord.NEW;
    r.status = null;
    r.local = null;
    r.wc = WC_SUCCESS;
    r.message = null;
    r.byteLen = 0;
  }

  /** Starts {@code r}; false when it must wait (ordering, an rkey lookup) and nothing after it may start. */
  private boolean start(WqeRecord r, long now) {
    if (errorSeen) {
      r.done(WC_WR_FLUSH_ERR, "flushed: the endpoint is in error since WQE " + firstErrorIndex, 0);
      return true;
    }
    int op = r.op;
    boolean ordered = (r.flags & FLAG_FENCE) != 0 || op == OP_SEND || op == OP_RDMA_WRITE_WITH_IMM || op == OP_ATOMIC_CMP_AND_SWP
        || op == OP_ATOMIC_FETCH_AND_ADD;
    if (ordered && retired != r.index) return false;
    if (peer.dead) {
      fail(r, WC_RETRY_EXC_ERR, "peer " + peer + " lost: " + peer.deadReason);
      return true;
    }
    long delay = ctx.testIssueDelayNanos;
    if (delay > 0) LockSupport.parkNanos(delay);
    r.startedAt = now;
    try {
      return execute(r, op, now);
    } catch (RuntimeException e) {
      // a failing native call (a GPU copy, say) completes this work request in error instead of stalling the endpoint
      return fail(r, WC_GENERAL_ERR, "host proxy: " + e);
    }
  }

  private boolean execute(WqeRecord r, int op, long now) {
    long len = r.length & 0xFFFF_FFFFL;
    switch (op) {
      case OP_RDMA_WRITE, OP_RDMA_WRITE_WITH_IMM, OP_RDMA_READ -> {
        boolean read = op == OP_RDMA_READ;
        Region local = checkLocal(r, len, read ? ACCESS_LOCAL_WRITE : 0);
        if (local == null) return true;
        Region remote = proxy.remoteRegion(this, r.rkey);
        if (remote == Peer.PENDING) {
          if (!proxy.lookupOverdue(this, r.rkey, now)) return false;
          return fail(r, WC_RETRY_EXC_ERR, "peer " + peer + " did not answer the lookup of rkey " + r.rkey + " within "
              + ctx.settings.peerTimeoutNanos() / 1_000_000 + " ms");
        }
        int need = read ? ACCESS_REMOTE_READ : ACCESS_REMOTE_WRITE;
        if (remote == Peer.NOT_FOUND) return fail(r, WC_REM_ACCESS_ERR, "rkey " + r.rkey + " is not a region of peer " + peer);
        if (!remote.allows(need)) return fail(r, WC_REM_ACCESS_ERR, "rkey " + r.rkey + " lacks " + (read ? "REMOTE_READ" : "REMOTE_WRITE"));
        if (!remote.covers(r.raddr, len))
          return fail(r, WC_REM_ACCESS_ERR, "remote [0x" + Long.toHexString(r.raddr) + ", +" + len + ") outside rkey " + r.rkey + "'s region");
        if (len == 0) {
          if (op == OP_RDMA_WRITE_WITH_IMM) sendPeerOp(r, now, null);
          else r.done(WC_SUCCESS, null, 0);
          return true;
        }
        long uid = ctx.engine.allocateTransferUid();
        TransferStatus s = read
            ? ctx.engine.read(local.desc(), local.descOffset(r.laddr), remote.desc(), remote.descOffset(r.raddr), len, uid)
            : ctx.engine.write(local.desc(), local.descOffset(r.laddr), remote.desc(), remote.descOffset(r.raddr), len, uid);
        r.status = s;
        r.phase = WqeRecord.ENGINE;
      }
      case OP_SEND -> {
        if (len > MAX_SEND_BYTES) return fail(r, WC_LOC_LEN_ERR, "SEND of " + len + " bytes exceeds " + MAX_SEND_BYTES);
        Region local = checkLocal(r, len, 0);
        if (local == null) return true;
        sendPeerOp(r, now, ctx.memory.read(local, r.laddr, (int) len));
      }
      case OP_ATOMIC_CMP_AND_SWP, OP_ATOMIC_FETCH_AND_ADD -> {
        if (len != 8) return fail(r, WC_LOC_LEN_ERR, "atomic length " + len + ", must be 8");
        if ((r.raddr & 7) != 0) return fail(r, WC_REM_INV_REQ_ERR, "atomic remote address 0x" + Long.toHexString(r.raddr) + " not 8-byte aligned");
        Region local = checkLocal(r, 8, ACCESS_LOCAL_WRITE);
        if (local == null) return true;
        r.local = local;
        sendPeerOp(r, now, null);
      }
      default -> fail(r, WC_REM_INV_REQ_ERR, "unknown opcode " + op);
    }
    return true;
  }

  private Region checkLocal(WqeRecord r, long len, int access) {
    Region local = ctx.lkeys.get(r.lkey);
    if (local == null) {
      fail(r, WC_LOC_PROT_ERR, "lkey " + r.lkey + " is not a region of this context");
      return null;
    }
    if (!local.covers(r.laddr, len)) {
      fail(r, WC_LOC_PROT_ERR, "local [0x" + Long.toHexString(r.laddr) + ", +" + len + ") outside lkey " + r.lkey + "'s region");
      return null;
    }
    if (!local.allows(access)) {
      fail(r, WC_LOC_PROT_ERR, "lkey " + r.lkey + " lacks LOCAL_WRITE");
      return null;
    }
    return local;
  }

  private boolean fail(WqeRecord r, int wc, String why) {
    r.done(wc, why, 0);
    errorSeen = true;
    if (firstErrorIndex < 0) firstErrorIndex = r.index;
    return true;
  }

  private void sendPeerOp(WqeRecord r, long now, byte[] payload) {
    r.phase = WqeRecord.PEER;
    boolean recv = r.op == OP_SEND || r.op == OP_RDMA_WRITE_WITH_IMM;
    r.deadline = now + ctx.settings.peerTimeoutNanos() + (recv ? ctx.settings.rnrRetryNanos() : 0);
    peer.ref.tell(new GpuInitProtocol.PeerOp(r.op, ep.qpn(), peer.qpn, r.index, r.raddr, r.rkey, r.compareAdd, r.swap, r.imm,
        r.length, payload == null ? NO_PAYLOAD : payload, ctx.self));
  }

  /** The peer's answer to the PeerOp of WQE {@code index}; stale answers (timed out, flushed) are dropped. */
  void onResult(GpuInitProtocol.PeerOpResult m) {
    WqeRecord r = recs[(int) (m.wqeIndex() & mask)];
    if (r.index != m.wqeIndex() || r.phase != WqeRecord.PEER) return;
    if (m.status() != WC_SUCCESS) {
      fail(r, m.status(), "peer " + peer + ": " + m.message());
      return;
    }
    if (r.op == OP_ATOMIC_CMP_AND_SWP || r.op == OP_ATOMIC_FETCH_AND_ADD) {
      try {
        ctx.memory.writeLong(r.local, r.laddr, m.value());
      } catch (RuntimeException e) {
        fail(r, WC_GENERAL_ERR, "host proxy: writing the atomic's old value to 0x" + Long.toHexString(r.laddr) + ": " + e);
        return;
      }
      r.done(WC_SUCCESS, null, 8);
    } else {
      r.done(WC_SUCCESS, null, r.length & 0xFFFF_FFFFL);
    }
  }

  /** The peer is gone: what waits on it ends with RETRY_EXC_ERR now, engine transfers are cancelled. */
  void peerLost(String reason) {
    if (peer == null || peer.dead) return;
    peer.dead = true;
    peer.deadReason = reason;
    for (long i = retired; i < processed; i++) {
      WqeRecord r = recs[(int) (i & mask)];
      if (r.phase == WqeRecord.ENGINE) r.status.cancel();
      else if (r.phase == WqeRecord.PEER) fail(r, WC_RETRY_EXC_ERR, "peer " + peer + " lost: " + reason);
    }
    receives.peerLost(reason);
  }

  private int retire(long now) {
    int n = 0;
    while (retired < processed) {
      WqeRecord r = recs[(int) (retired & mask)];
      if ((r.phase == WqeRecord.ENGINE || r.phase == WqeRecord.PEER) && !peer.dead) proxy.checkLiveness(this, r, now);
      if (r.phase == WqeRecord.ENGINE) {
        TransferStatus s = r.status;
        if (s.inProgress()) break;
        r.status = null;
        if (s.succeeded()) {
          if (r.op == OP_RDMA_WRITE_WITH_IMM && !peer.dead) sendPeerOp(r, now, null);
          else r.done(WC_SUCCESS, null, r.length & 0xFFFF_FFFFL);
        } else if (peer.dead) {
          fail(r, WC_RETRY_EXC_ERR, "peer " + peer + " lost: " + peer.deadReason);
        } else {
          StatusCode c = s.code();
          boolean lost = c == StatusCode.ERR_PEER_LOST || c == StatusCode.ERR_TRANSPORT || c == StatusCode.ERR_TIMEOUT;
          fail(r, lost ? WC_RETRY_EXC_ERR : c == StatusCode.ERR_NOT_FOUND || c == StatusCode.ERR_INVALID_ARGS ? WC_REM_ACCESS_ERR : WC_GENERAL_ERR,
              "engine " + c + ": " + s.message());
          if (lost) proxy.peerLost(peer.ref, "engine transfer failed with " + c + ": " + s.message());
        }
      }
      if (r.phase == WqeRecord.PEER && now - r.deadline > 0)
        fail(r, WC_RETRY_EXC_ERR, "no answer from peer " + peer + " within " + (ctx.settings.peerTimeoutNanos() / 1_000_000) + " ms");
      if (r.phase != WqeRecord.DONE) break;
      // RC semantics: after the first error completion in WQE order, everything later completes flushed
      int wc = errorState ? WC_WR_FLUSH_ERR : r.wc;
      boolean cqe = wc != WC_SUCCESS || r.signaled();
      if (cqe && cqFull()) break;
      // the host's view (errors(), counters, state) is updated before the device can see the CQE
      if (wc != WC_SUCCESS) recordError(r.index, r.wrId, wc, wc == r.wc ? r.message : "flushed: the endpoint is in error since WQE " + firstErrorIndex);
      if (cqe) writeCqe(r.wrId, wc, wcOpcode(r.op), 0, wc == WC_SUCCESS ? r.byteLen : 0, 0, r.index);
      retired++;
      n++;
    }
    if (n > 0) b.setRelease(CTRL_SQ_RETIRED, retired);
    return n;
  }

  /** Writes one CQE, owner last; false when the CQ is full (the device has not consumed enough). */
  /** No free CQE slot: the device has not consumed enough (the proxy waits, never overwrites). */
  boolean cqFull() {
    return cqProducer - b.getAcquire(CTRL_CQ_DBR_RECORD) >= b.cqDepth;
  }

  boolean writeCqe(long wrId, int status, int wcOp, int flags, long byteLen, int imm, long wqeIndex) {
    if (cqFull()) return false;
    long o = b.cqe(cqProducer);
    var s = b.seg;
    s.set(L, o + CQE_WR_ID, wrId);
    s.set(I, o + CQE_STATUS, status);
    s.set(B, o + CQE_OPCODE, (byte) wcOp);
    s.set(B, o + CQE_FLAGS, (byte) flags);
    s.set(ValueLayout.JAVA_SHORT, o + CQE_RESERVED0, (short) 0);
    s.set(I, o + CQE_BYTE_LEN, (int) byteLen);
    s.set(I, o + CQE_IMMEDIATE, imm);
    s.set(I, o + CQE_WQE_INDEX, (int) wqeIndex);
    b.setIntRelease(o + CQE_OWNER, (int) (cqProducer + 1));
    cqProducer++;
    b.setRelease(CTRL_CQ_PRODUCER_IDX, cqProducer);
    return true;
  }

  /** An error completion (send or receive side): counted, the first one puts the endpoint in ERROR. */
  void recordError(long index, long wrId, int wc, String message) {
    errorCount++;
    b.setIntRelease(CTRL_ERROR_COUNT, errorCount);
    if (!errorState) {
      errorState = true;
      errorSeen = true;
      firstErrorIndex = index;
      b.seg.set(I, CTRL_FIRST_ERROR_STATUS, wc);
      b.seg.set(L, CTRL_FIRST_ERROR_WR_ID, wrId);
      b.setIntRelease(CTRL_STATE, STATE_ERROR);
    }
    ep.addError(wrId, wc, message);
  }

  /** Cancels what is in flight (the endpoint closes). */
  void abandon() {
    for (long i = retired; i < processed; i++) {
      WqeRecord r = recs[(int) (i & mask)];
      if (r.phase == WqeRecord.ENGINE && r.status != null) r.status.cancel();
    }
  }

  static int wcOpcode(int op) {
    return switch (op) {
      case OP_RDMA_WRITE, OP_RDMA_WRITE_WITH_IMM -> WC_OP_RDMA_WRITE;
      case OP_SEND -> WC_OP_SEND;
      case OP_RDMA_READ -> WC_OP_RDMA_READ;
      case OP_ATOMIC_CMP_AND_SWP -> WC_OP_COMP_SWAP;
      case OP_ATOMIC_FETCH_AND_ADD -> WC_OP_FETCH_ADD;
      default -> 0xFF;
    };
  }
}
