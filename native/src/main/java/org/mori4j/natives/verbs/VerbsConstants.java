package org.mori4j.natives.verbs;

/**
 * The libibverbs enum and macro values the bindings use, named exactly as in {@code <infiniband/verbs.h>}
 * (rdma-core 44) so they read like the C API. {@code VerbsAbiConformanceTest} compares every field here
 * with the value the real header gives, so a constant that drifts fails the build.
 */
public final class VerbsConstants {
  private VerbsConstants() {}

  /** Queue pair types ({@code enum ibv_qp_type}). */
  public static final int IBV_QPT_RC = 2;
  public static final int IBV_QPT_UC = 3;
  public static final int IBV_QPT_UD = 4;

  /** Queue pair states ({@code enum ibv_qp_state}). */
  public static final int IBV_QPS_RESET = 0;
  public static final int IBV_QPS_INIT = 1;
  public static final int IBV_QPS_RTR = 2;
  public static final int IBV_QPS_RTS = 3;
  public static final int IBV_QPS_SQD = 4;
  public static final int IBV_QPS_SQE = 5;
  public static final int IBV_QPS_ERR = 6;
  public static final int IBV_QPS_UNKNOWN = 7;

  /** {@code ibv_modify_qp} attribute masks ({@code enum ibv_qp_attr_mask}): which fields a transition sets. */
  public static final int IBV_QP_STATE = 1 << 0;
  public static final int IBV_QP_CUR_STATE = 1 << 1;
  public static final int IBV_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2;
  public static final int IBV_QP_ACCESS_FLAGS = 1 << 3;
  public static final int IBV_QP_PKEY_INDEX = 1 << 4;
  public static final int IBV_QP_PORT = 1 << 5;
  public static final int IBV_QP_QKEY = 1 << 6;
  public static final int IBV_QP_AV = 1 << 7;
  public static final int IBV_QP_PATH_MTU = 1 << 8;
  public static final int IBV_QP_TIMEOUT = 1 << 9;
  public static final int IBV_QP_RETRY_CNT = 1 << 10;
  public static final int IBV_QP_RNR_RETRY = 1 << 11;
  public static final int IBV_QP_RQ_PSN = 1 << 12;
  public static final int IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13;
  public static final int IBV_QP_ALT_PATH = 1 << 14;
  public static final int IBV_QP_MIN_RNR_TIMER = 1 << 15;
  public static final int IBV_QP_SQ_PSN = 1 << 16;
  public static final int IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17;
  public static final int IBV_QP_PATH_MIG_STATE = 1 << 18;
  public static final int IBV_QP_CAP = 1 << 19;
  public static final int IBV_QP_DEST_QPN = 1 << 20;
  public static final int IBV_QP_RATE_LIMIT = 1 << 25;

  /**
   * Memory access flags ({@code enum ibv_access_flags}). A flag inside {@code IBV_ACCESS_OPTIONAL_RANGE} is
   * why the header's {@code ibv_reg_mr} macro may call {@code ibv_reg_mr_iova2} instead (see {@link IbVerbs#regMr}).
   */
  public static final int IBV_ACCESS_LOCAL_WRITE = 1 << 0;
  public static final int IBV_ACCESS_REMOTE_WRITE = 1 << 1;
  public static final int IBV_ACCESS_REMOTE_READ = 1 << 2;
  public static final int IBV_ACCESS_REMOTE_ATOMIC = 1 << 3;
  public static final int IBV_ACCESS_MW_BIND = 1 << 4;
  public static final int IBV_ACCESS_ZERO_BASED = 1 << 5;
  public static final int IBV_ACCESS_ON_DEMAND = 1 << 6;
  public static final int IBV_ACCESS_HUGETLB = 1 << 7;
  public static final int IBV_ACCESS_RELAXED_ORDERING = 1 << 20;
  public static final int IBV_ACCESS_OPTIONAL_RANGE = 0x3ff00000;

  /** Send work request opcodes ({@code enum ibv_wr_opcode}). */
  public static final int IBV_WR_RDMA_WRITE = 0;
  public static final int IBV_WR_RDMA_WRITE_WITH_IMM = 1;
  public static final int IBV_WR_SEND = 2;
  public static final int IBV_WR_SEND_WITH_IMM = 3;
  public static final int IBV_WR_RDMA_READ = 4;
  public static final int IBV_WR_ATOMIC_CMP_AND_SWP = 5;
  public static final int IBV_WR_ATOMIC_FETCH_AND_ADD = 6;

  /** Send flags ({@code enum ibv_send_flags}). */
  public static final int IBV_SEND_FENCE = 1 << 0;
  public static final int IBV_SEND_SIGNALED = 1 << 1;
  public static final int IBV_SEND_SOLICITED = 1 << 2;
  public static final int IBV_SEND_INLINE = 1 << 3;

  /**
   * Work completion status ({@code enum ibv_wc_status}, named by {@code ibv_wc_status_str}), opcodes
   * ({@code enum ibv_wc_opcode}; receive completions have {@code IBV_WC_RECV} set) and flags.
   */
  public static final int IBV_WC_SUCCESS = 0;
  public static final int IBV_WC_LOC_LEN_ERR = 1;
  public static final int IBV_WC_LOC_QP_OP_ERR = 2;
  public static final int IBV_WC_LOC_PROT_ERR = 4;
  public static final int IBV_WC_WR_FLUSH_ERR = 5;
  public static final int IBV_WC_REM_INV_REQ_ERR = 9;
  public static final int IBV_WC_REM_ACCESS_ERR = 10;
  public static final int IBV_WC_REM_OP_ERR = 11;
  public static final int IBV_WC_RETRY_EXC_ERR = 12;
  public static final int IBV_WC_RNR_RETRY_EXC_ERR = 13;
  public static final int IBV_WC_GENERAL_ERR = 21;
  public static final int IBV_WC_SEND = 0;
  public static final int IBV_WC_RDMA_WRITE = 1;
  public static final int IBV_WC_RDMA_READ = 2;
  public static final int IBV_WC_COMP_SWAP = 3;
  public static final int IBV_WC_FETCH_ADD = 4;
  public static final int IBV_WC_RECV = 1 << 7;
  public static final int IBV_WC_RECV_RDMA_WITH_IMM = IBV_WC_RECV + 1;
  public static final int IBV_WC_GRH = 1 << 0;
  public static final int IBV_WC_WITH_IMM = 1 << 1;

  /** Path MTUs ({@code enum ibv_mtu}). */
  public static final int IBV_MTU_256 = 1;
  public static final int IBV_MTU_512 = 2;
  public static final int IBV_MTU_1024 = 3;
  public static final int IBV_MTU_2048 = 4;
  public static final int IBV_MTU_4096 = 5;

  /** Port states ({@code enum ibv_port_state}) and link layers. */
  public static final int IBV_PORT_NOP = 0;
  public static final int IBV_PORT_DOWN = 1;
  public static final int IBV_PORT_INIT = 2;
  public static final int IBV_PORT_ARMED = 3;
  public static final int IBV_PORT_ACTIVE = 4;
  public static final int IBV_LINK_LAYER_UNSPECIFIED = 0;
  public static final int IBV_LINK_LAYER_INFINIBAND = 1;
  public static final int IBV_LINK_LAYER_ETHERNET = 2;

  /** Asynchronous event types ({@code enum ibv_event_type}). */
  public static final int IBV_EVENT_CQ_ERR = 0;
  public static final int IBV_EVENT_QP_FATAL = 1;
  public static final int IBV_EVENT_QP_REQ_ERR = 2;
  public static final int IBV_EVENT_QP_ACCESS_ERR = 3;
  public static final int IBV_EVENT_COMM_EST = 4;
  public static final int IBV_EVENT_SQ_DRAINED = 5;
  public static final int IBV_EVENT_PATH_MIG = 6;
  public static final int IBV_EVENT_PATH_MIG_ERR = 7;
  public static final int IBV_EVENT_DEVICE_FATAL = 8;
  public static final int IBV_EVENT_PORT_ACTIVE = 9;
  public static final int IBV_EVENT_PORT_ERR = 10;
  public static final int IBV_EVENT_LID_CHANGE = 11;
  public static final int IBV_EVENT_PKEY_CHANGE = 12;
  public static final int IBV_EVENT_SM_CHANGE = 13;
  public static final int IBV_EVENT_SRQ_ERR = 14;
  public static final int IBV_EVENT_SRQ_LIMIT_REACHED = 15;
  public static final int IBV_EVENT_QP_LAST_WQE_REACHED = 16;
  public static final int IBV_EVENT_CLIENT_REREGISTER = 17;
  public static final int IBV_EVENT_GID_CHANGE = 18;
  public static final int IBV_EVENT_WQ_FATAL = 19;

  /** {@code __VERBS_ABI_IS_EXTENDED}: {@code ibv_context.abi_compat} holds this in an extended context. */
  public static final long VERBS_ABI_IS_EXTENDED = -1L;
}
