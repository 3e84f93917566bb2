package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.VerbsConstants.*;
import static org.mori4j.natives.verbs.VerbsLayouts.IBV_QP;
import static org.mori4j.natives.verbs.VerbsLayouts.IBV_QP_ATTR;
import static org.mori4j.natives.verbs.VerbsLayouts.IBV_QP_INIT_ATTR;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.mori4j.natives.NativeException;

/**
 * A queue pair ({@code struct ibv_qp}): created in RESET, moved RESET -> INIT -> RTR -> RTS with
 * {@code ibv_modify_qp} and the attribute masks the IB spec requires for each step (the masks are the
 * {@code *_MASK} constants here), then fed chains of work requests. Posting goes through the provider's
 * {@code post_send}/{@code post_recv}, read once from the context's ops table as the header's inline verbs
 * read it. Post from one thread (the owning backend's dispatcher): the {@code bad_wr} slot is per QP.
 */
public final class VerbsQueuePair extends NativeResource {
  /** What a QP is created with; the provider may round the capacities up ({@link #capabilities}). */
  public record Spec(VerbsCompletionQueue sendCq, VerbsCompletionQueue receiveCq, int type, int maxSendWr,
      int maxReceiveWr, int maxSendSge, int maxReceiveSge, int maxInlineData, boolean signalAll) {
    /** A reliable-connected QP with one SGE per request, both queues completing on {@code cq}. */
    public static Spec reliableConnected(VerbsCompletionQueue cq, int maxSendWr, int maxReceiveWr) {
      return new Spec(cq, cq, IBV_QPT_RC, maxSendWr, maxReceiveWr, 1, 1, 0, false);
    }
  }

  /** The capacities the provider granted ({@code ibv_qp_init_attr.cap} after {@code ibv_create_qp}). */
  public record Capabilities(int maxSendWr, int maxReceiveWr, int maxSendSge, int maxReceiveSge,
      int maxInlineData) {}

  /** RESET -> INIT: the port, P_Key index and what remote peers may do ({@code IBV_ACCESS_*}). */
  public record InitAttributes(int port, int pkeyIndex, int accessFlags) {}

  /**
   * INIT -> RTR: the remote QP and the path to it. {@code destinationGid} null means no global route
   * (InfiniBand within a subnet, addressed by {@code destinationLid}); RoCE always needs the GID.
   */
  public record RtrAttributes(int pathMtu, int destinationQpNumber, int receivePsn, int maxDestRdAtomic,
      int minRnrTimer, int port, int destinationLid, int serviceLevel, byte[] destinationGid, int sourceGidIndex,
      int hopLimit, int trafficClass, int flowLabel) {}

  /** RTR -> RTS: the send PSN and the retry policy. */
  public record RtsAttributes(int sendPsn, int timeout, int retryCount, int rnrRetry, int maxRdAtomic) {
    /** The values MORI and perftest use: 14 (~67 ms) ACK timeout, 7 retries, infinite RNR retry. */
    public static RtsAttributes defaults(int sendPsn) {
      return new RtsAttributes(sendPsn, 14, 7, 7, 1);
    }
  }

  public static final int INIT_MASK = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  public static final int RTR_MASK = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN
      | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  public static final int RTS_MASK = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY
      | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;

  private static final long A_STATE = offset(IBV_QP_ATTR, "qp_state");
  private static final long A_PATH_MTU = offset(IBV_QP_ATTR, "path_mtu");
  private static final long A_RQ_PSN = offset(IBV_QP_ATTR, "rq_psn");
  private static final long A_SQ_PSN = offset(IBV_QP_ATTR, "sq_psn");
  private static final long A_DEST_QP_NUM = offset(IBV_QP_ATTR, "dest_qp_num");
  private static final long A_ACCESS = offset(IBV_QP_ATTR, "qp_access_flags");
  private static final long A_PKEY_INDEX = offset(IBV_QP_ATTR, "pkey_index");
  private static final long A_MAX_RD_ATOMIC = offset(IBV_QP_ATTR, "max_rd_atomic");
  private static final long A_MAX_DEST_RD_ATOMIC = offset(IBV_QP_ATTR, "max_dest_rd_atomic");
  private static final long A_MIN_RNR_TIMER = offset(IBV_QP_ATTR, "min_rnr_timer");
  private static final long A_PORT = offset(IBV_QP_ATTR, "port_num");
  private static final long A_TIMEOUT = offset(IBV_QP_ATTR, "timeout");
  private static final long A_RETRY_CNT = offset(IBV_QP_ATTR, "retry_cnt");
  private static final long A_RNR_RETRY = offset(IBV_QP_ATTR, "rnr_retry");
  private static final long AH_DLID = offset(IBV_QP_ATTR, "ah_attr.dlid");
  private static final long AH_SL = offset(IBV_QP_ATTR, "ah_attr.sl");
  private static final long AH_IS_GLOBAL = offset(IBV_QP_ATTR, "ah_attr.is_global");
  private static final long AH_PORT = offset(IBV_QP_ATTR, "ah_attr.port_num");
  private static final long GRH_DGID = offset(IBV_QP_ATTR, "ah_attr.grh.dgid");
  private static final long GRH_FLOW_LABEL = offset(IBV_QP_ATTR, "ah_attr.grh.flow_label");
  private static final long GRH_SGID_INDEX = offset(IBV_QP_ATTR, "ah_attr.grh.sgid_index");
  private static final long GRH_HOP_LIMIT = offset(IBV_QP_ATTR, "ah_attr.grh.hop_limit");
  private static final long GRH_TRAFFIC_CLASS = offset(IBV_QP_ATTR, "ah_attr.grh.traffic_class");

  private final MemorySegment postSendFn;
  private final MemorySegment postRecvFn;
  private final MemorySegment badWr;
  private final int qpNumber;
  private final Capabilities capabilities;
  private final Consumer<MemorySegment> destroy;

  private VerbsQueuePair(MemorySegment qp, Capabilities capabilities, Consumer<MemorySegment> destroy) {
    super("ibv queue pair", qp, IBV_QP.byteSize());
    this.destroy = destroy;
    MemorySegment context = qp.get(ADDRESS, VerbsLayouts.QP_CONTEXT);
    this.postSendFn = VerbsInline.opsEntry(context, VerbsLayouts.CONTEXT_OPS_POST_SEND);
    this.postRecvFn = VerbsInline.opsEntry(context, VerbsLayouts.CONTEXT_OPS_POST_RECV);
    this.badWr = arena().allocate(ADDRESS);
    this.qpNumber = qp.get(JAVA_INT, VerbsLayouts.QP_NUM);
    this.capabilities = capabilities;
  }

  static VerbsQueuePair create(VerbsProtectionDomain pd, Spec spec) {
    return create(spec, init -> IbVerbs.createQp(pd.handle(), init), IbVerbs::destroyQp);
  }

  /**
   * A QP made from {@code spec}'s {@code ibv_qp_init_attr} by another creator than {@code ibv_create_qp}
   * and freed by {@code destroy}: librdmacm's {@code rdma_create_qp} ties the QP to a CM id (which then
   * drives its state transitions on connect and accept) and must be undone by {@code rdma_destroy_qp}, or
   * the id keeps a dangling {@code qp} pointer. {@code create} gets the filled init attributes (it may
   * write the granted capacities back, as both creators do) and returns the {@code struct ibv_qp *}.
   */
  public static VerbsQueuePair create(Spec spec, UnaryOperator<MemorySegment> create, Consumer<MemorySegment> destroy) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment init = a.allocate(IBV_QP_INIT_ATTR);
      init.set(ADDRESS, offset(IBV_QP_INIT_ATTR, "send_cq"), spec.sendCq().handle());
      init.set(ADDRESS, offset(IBV_QP_INIT_ATTR, "recv_cq"), spec.receiveCq().handle());
      setCap(init, "max_send_wr", spec.maxSendWr());
      setCap(init, "max_recv_wr", spec.maxReceiveWr());
      setCap(init, "max_send_sge", spec.maxSendSge());
      setCap(init, "max_recv_sge", spec.maxReceiveSge());
      setCap(init, "max_inline_data", spec.maxInlineData());
      init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "qp_type"), spec.type());
      init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "sq_sig_all"), spec.signalAll() ? 1 : 0);
      MemorySegment qp = create.apply(init).reinterpret(IBV_QP.byteSize());
      Capabilities caps = new Capabilities(cap(init, "max_send_wr"), cap(init, "max_recv_wr"),
          cap(init, "max_send_sge"), cap(init, "max_recv_sge"), cap(init, "max_inline_data"));
      try {
        return new VerbsQueuePair(qp, caps, destroy);
      } catch (RuntimeException e) {
        destroy.accept(qp);
        throw e;
      }
    }
  }

  /** The QP number the peer addresses ({@code qp->qp_num}). */
  public int qpNumber() {
    ensureOpen();
    return qpNumber;
  }

  public Capabilities capabilities() {
    return capabilities;
  }

  /** The current state ({@code IBV_QPS_*}) from {@code ibv_query_qp}. */
  public int state() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(IBV_QP_ATTR);
      IbVerbs.queryQp(handle(), attr, IBV_QP_STATE, a.allocate(IBV_QP_INIT_ATTR));
      return attr.get(JAVA_INT, A_STATE);
    }
  }

  public void toInit(InitAttributes init) {
    modify(INIT_MASK, IBV_QPS_INIT, attr -> {
      attr.set(JAVA_SHORT, A_PKEY_INDEX, (short) init.pkeyIndex());
      attr.set(JAVA_BYTE, A_PORT, (byte) init.port());
      attr.set(JAVA_INT, A_ACCESS, init.accessFlags());
    });
  }

  public void toReadyToReceive(RtrAttributes rtr) {
    modify(RTR_MASK, IBV_QPS_RTR, attr -> {
      attr.set(JAVA_INT, A_PATH_MTU, rtr.pathMtu());
      attr.set(JAVA_INT, A_DEST_QP_NUM, rtr.destinationQpNumber());
      attr.set(JAVA_INT, A_RQ_PSN, rtr.receivePsn());
      attr.set(JAVA_BYTE, A_MAX_DEST_RD_ATOMIC, (byte) rtr.maxDestRdAtomic());
      attr.set(JAVA_BYTE, A_MIN_RNR_TIMER, (byte) rtr.minRnrTimer());
      attr.set(JAVA_SHORT, AH_DLID, (short) rtr.destinationLid());
      attr.set(JAVA_BYTE, AH_SL, (byte) rtr.serviceLevel());
      attr.set(JAVA_BYTE, AH_PORT, (byte) rtr.port());
      byte[] gid = rtr.destinationGid();
      if (gid != null) {
        if (gid.length != 16) throw new IllegalArgumentException("a GID is 16 bytes, not " + gid.length);
        attr.set(JAVA_BYTE, AH_IS_GLOBAL, (byte) 1);
        MemorySegment.copy(gid, 0, attr, JAVA_BYTE, GRH_DGID, 16);
        attr.set(JAVA_INT, GRH_FLOW_LABEL, rtr.flowLabel());
        attr.set(JAVA_BYTE, GRH_SGID_INDEX, (byte) rtr.sourceGidIndex());
        attr.set(JAVA_BYTE, GRH_HOP_LIMIT, (byte) rtr.hopLimit());
        attr.set(JAVA_BYTE, GRH_TRAFFIC_CLASS, (byte) rtr.trafficClass());
      }
    });
  }

  public void toReadyToSend(RtsAttributes rts) {
    modify(RTS_MASK, IBV_QPS_RTS, attr -> {
      attr.set(JAVA_INT, A_SQ_PSN, rts.sendPsn());
      attr.set(JAVA_BYTE, A_TIMEOUT, (byte) rts.timeout());
      attr.set(JAVA_BYTE, A_RETRY_CNT, (byte) rts.retryCount());
      attr.set(JAVA_BYTE, A_RNR_RETRY, (byte) rts.rnrRetry());
      attr.set(JAVA_BYTE, A_MAX_RD_ATOMIC, (byte) rts.maxRdAtomic());
    });
  }

  /** Any state -> ERR: outstanding work requests complete with {@code IBV_WC_WR_FLUSH_ERR}. */
  public void toError() {
    modify(IBV_QP_STATE, IBV_QPS_ERR, attr -> {});
  }

  /** {@code ibv_modify_qp} with {@code qp_state = state}, {@code mask} and whatever {@code fill} sets. */
  public void modify(int mask, int state, Consumer<MemorySegment> fill) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment attr = a.allocate(IBV_QP_ATTR);
      attr.set(JAVA_INT, A_STATE, state);
      fill.accept(attr);
      IbVerbs.modifyQp(handle(), attr, mask);
    }
  }

  /** Posts requests {@code 0..count-1} of {@code requests} as one chain ({@code ibv_post_send}). */
  public void postSend(SendWorkRequests requests, int count) {
    int rc = VerbsInline.postSend(postSendFn, handle(), requests.chain(count), badWr);
    if (rc != 0) throw postFailure("ibv_post_send", rc, requests.indexOf(badWr.get(ADDRESS, 0).address()), count);
  }

  /** Posts receives {@code 0..count-1} of {@code requests} as one chain ({@code ibv_post_recv}). */
  public void postReceive(ReceiveWorkRequests requests, int count) {
    int rc = VerbsInline.postRecv(postRecvFn, handle(), requests.chain(count), badWr);
    if (rc != 0) throw postFailure("ibv_post_recv", rc, requests.indexOf(badWr.get(ADDRESS, 0).address()), count);
  }

  /** A {@link VerbsPostException}: callers read {@code failedIndex()} to know how much of the chain went out. */
  private static NativeException postFailure(String function, int rc, int badIndex, int count) {
    NativeException e = IbVerbs.failure(function, rc);
    // Requests before bad_wr were posted and will complete; the caller must not repost them.
    return new VerbsPostException(function, e.code(), e.codeName(), badIndex, count, e.getMessage()
        + " at work request " + badIndex + " of " + count + " (those before it were posted)");
  }

  private static void setCap(MemorySegment init, String field, int value) {
    init.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap." + field), value);
  }

  private static int cap(MemorySegment init, String field) {
    return init.get(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap." + field));
  }

  @Override
  protected void release(MemorySegment handle) {
    destroy.accept(handle);
  }
}
