package org.mori4j.io.gpuinit;

import static org.mori4j.io.gpuinit.GpuQueueLayout.*;

import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;

/**
 * The target side of SEND and WRITE_WITH_IMM for one endpoint: incoming operations consume the next receive WQE the
 * device posted, in arrival order (one sender's messages arrive in order), land a SEND's payload at the receive's
 * address and put RECV / RECV_RDMA_WITH_IMM on the endpoint's CQ. With no receive posted an operation waits up to
 * {@code rnr-retry-time} and then fails with RNR_RETRY_EXC_ERR at the initiator, as a NIC's receiver-not-ready
 * retries would. Proxy thread only.
 */
final class ReceiveQueue {
  private record Waiting(GpuInitProtocol.PeerOp op, long deadline) {}

  private final EndpointRunner ep;
  private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
  private long rqRetired;

  ReceiveQueue(EndpointRunner ep) {
    this.ep = ep;
  }

  boolean pending() {
    return !waiting.isEmpty();
  }

  void arrive(GpuInitProtocol.PeerOp m, long now) {
    if (ep.inError()) {
      reply(m, WC_REM_OP_ERR, "target endpoint qpn " + ep.ep.qpn() + " is in error");
      return;
    }
    if (ep.b.rqDepth == 0) {
      reply(m, WC_RNR_RETRY_EXC_ERR, "target endpoint qpn " + ep.ep.qpn() + " has no receive queue");
      return;
    }
    waiting.add(new Waiting(m, now + ep.ctx.settings.rnrRetryNanos()));
  }

  int poll(long now) {
    int n = 0;
    EndpointBlock b = ep.b;
    while (!waiting.isEmpty()) {
      Waiting w = waiting.peek();
      GpuInitProtocol.PeerOp m = w.op();
      if (ep.inError()) {
        waiting.poll();
        reply(m, WC_REM_OP_ERR, "target endpoint qpn " + ep.ep.qpn() + " is in error");
        n++;
        continue;
      }
      if (b.getAcquire(CTRL_RQ_DBR_RECORD) - rqRetired <= 0) {
        if (now - w.deadline() < 0) break;
        waiting.poll();
        reply(m, WC_RNR_RETRY_EXC_ERR, "no receive posted at qpn " + ep.ep.qpn() + " within " + ep.ctx.settings.rnrRetryNanos() / 1_000_000 + " ms");
        n++;
        continue;
      }
      long o = b.recv(rqRetired);
      long wrId = b.seg.get(ValueLayout.JAVA_LONG, o + RECV_WR_ID);
      long addr = b.seg.get(ValueLayout.JAVA_LONG, o + RECV_ADDR);
      int lkey = b.seg.get(ValueLayout.JAVA_INT, o + RECV_LKEY);
      long cap = b.seg.get(ValueLayout.JAVA_INT, o + RECV_LENGTH) & 0xFFFF_FFFFL;
      boolean send = m.op() == OP_SEND;
      int wc = WC_SUCCESS;
      String why = null;
      Region r = null;
      if (send) {
        r = ep.ctx.lkeys.get(lkey);
        if (m.payload().length > cap) {
          wc = WC_LOC_LEN_ERR;
          why = "SEND of " + m.payload().length + " bytes into a receive of " + cap;
        } else if (r == null || !r.covers(addr, m.payload().length) || !r.allows(ACCESS_LOCAL_WRITE)) {
          wc = WC_LOC_PROT_ERR;
          why = "receive buffer [0x" + Long.toHexString(addr) + ", +" + m.payload().length + ") not inside lkey " + lkey + " with LOCAL_WRITE";
        }
      }
      if (ep.cqFull()) break;
      if (wc == WC_SUCCESS && send && m.payload().length > 0) {
        try {
          ep.ctx.memory.write(r, addr, m.payload());
        } catch (RuntimeException e) {
          wc = WC_GENERAL_ERR;
          why = "host proxy: landing the SEND at 0x" + Long.toHexString(addr) + ": " + e;
        }
      }
      int wcOp = send ? WC_OP_RECV : WC_OP_RECV_RDMA_WITH_IMM;
      long bytes = send ? m.payload().length : m.length() & 0xFFFF_FFFFL;
      waiting.poll();
      if (wc != WC_SUCCESS) ep.recordError(rqRetired, wrId, wc, "receive " + rqRetired + ": " + why);
      ep.writeCqe(wrId, wc, wcOp, send ? 0 : CQE_FLAG_HAS_IMM, wc == WC_SUCCESS ? bytes : 0, send ? 0 : m.imm(), rqRetired);
      rqRetired++;
      b.setRelease(CTRL_RQ_RETIRED, rqRetired);
      if (wc != WC_SUCCESS) reply(m, WC_REM_OP_ERR, "at the target: " + statusName(wc) + ": " + why);
      else reply(m, WC_SUCCESS, "");
      n++;
    }
    return n;
  }

  void peerLost(String reason) {
    waiting.clear();
  }

  private void reply(GpuInitProtocol.PeerOp m, int wc, String why) {
    m.replyTo().tell(new GpuInitProtocol.PeerOpResult(m.srcQpn(), m.wqeIndex(), wc, 0, Proxy.clip(why)));
  }
}
