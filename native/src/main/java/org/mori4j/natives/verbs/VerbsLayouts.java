package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.mori4j.natives.verbs.CLayout.PTHREAD_COND;
import static org.mori4j.natives.verbs.CLayout.PTHREAD_MUTEX;
import static org.mori4j.natives.verbs.CLayout.SIZE_T;
import static org.mori4j.natives.verbs.CLayout.array;
import static org.mori4j.natives.verbs.CLayout.bytes;
import static org.mori4j.natives.verbs.CLayout.concat;
import static org.mori4j.natives.verbs.CLayout.ints;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.CLayout.pointers;
import static org.mori4j.natives.verbs.CLayout.shorts;
import static org.mori4j.natives.verbs.CLayout.struct;
import static org.mori4j.natives.verbs.CLayout.union;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.List;

/**
 * The rdma-core (libibverbs, {@code <infiniband/verbs.h>}) structs the verbs bindings read or write, as FFM
 * layouts named after their C types and fields, with the field offsets the bindings use derived from them.
 * Work requests and completions are in {@link WorkRequestLayouts}. Every struct here is compared field by
 * field with the real header by {@code VerbsAbiConformanceTest}. Structs the library allocates and owns
 * (context, PD, MR, CQ, QP) are declared whole, private tails included, only so their sizes can be checked;
 * the bindings read their public leading fields and never allocate them.
 */
public final class VerbsLayouts {
  private VerbsLayouts() {}

  public static final MemoryLayout IBV_GID = union("ibv_gid",
      array("raw", 16, JAVA_BYTE),
      struct("global", JAVA_LONG.withName("subnet_prefix"), JAVA_LONG.withName("interface_id")));

  public static final StructLayout IBV_DEVICE_ATTR = struct("ibv_device_attr", concat(
      new MemoryLayout[] {array("fw_ver", 64, JAVA_BYTE), JAVA_LONG.withName("node_guid"),
          JAVA_LONG.withName("sys_image_guid"), JAVA_LONG.withName("max_mr_size"),
          JAVA_LONG.withName("page_size_cap")},
      ints("vendor_id", "vendor_part_id", "hw_ver", "max_qp", "max_qp_wr", "device_cap_flags", "max_sge",
          "max_sge_rd", "max_cq", "max_cqe", "max_mr", "max_pd", "max_qp_rd_atom", "max_ee_rd_atom",
          "max_res_rd_atom", "max_qp_init_rd_atom", "max_ee_init_rd_atom", "atomic_cap", "max_ee", "max_rdd",
          "max_mw", "max_raw_ipv6_qp", "max_raw_ethy_qp", "max_mcast_grp", "max_mcast_qp_attach",
          "max_total_mcast_qp_attach", "max_ah", "max_fmr", "max_map_per_fmr", "max_srq", "max_srq_wr",
          "max_srq_sge"),
      new MemoryLayout[] {JAVA_SHORT.withName("max_pkeys"), JAVA_BYTE.withName("local_ca_ack_delay"),
          JAVA_BYTE.withName("phys_port_cnt")}));

  /**
   * The full (current) {@code ibv_port_attr}. The exported {@code ibv_query_port} symbol fills only its
   * older "compat" prefix (up to {@code link_layer}); the header's inline wrapper, which
   * {@link IbVerbs#queryPort} follows, fills all of it through the extended context when the provider has one.
   */
  public static final StructLayout IBV_PORT_ATTR = struct("ibv_port_attr", concat(
      ints("state", "max_mtu", "active_mtu", "gid_tbl_len", "port_cap_flags", "max_msg_sz", "bad_pkey_cntr",
          "qkey_viol_cntr"),
      shorts("pkey_tbl_len", "lid", "sm_lid"),
      bytes("lmc", "max_vl_num", "sm_sl", "subnet_timeout", "init_type_reply", "active_width", "active_speed",
          "phys_state", "link_layer", "flags"),
      shorts("port_cap_flags2")));

  /** The provider's function table inside {@code ibv_context}; the inline verbs of the header call through it. */
  public static final StructLayout IBV_CONTEXT_OPS = struct("ibv_context_ops", pointers(
      "_compat_query_device", "_compat_query_port", "_compat_alloc_pd", "_compat_dealloc_pd", "_compat_reg_mr",
      "_compat_rereg_mr", "_compat_dereg_mr", "alloc_mw", "bind_mw", "dealloc_mw", "_compat_create_cq",
      "poll_cq", "req_notify_cq", "_compat_cq_event", "_compat_resize_cq", "_compat_destroy_cq",
      "_compat_create_srq", "_compat_modify_srq", "_compat_query_srq", "_compat_destroy_srq", "post_srq_recv",
      "_compat_create_qp", "_compat_query_qp", "_compat_modify_qp", "_compat_destroy_qp", "post_send",
      "post_recv", "_compat_create_ah", "_compat_destroy_ah", "_compat_attach_mcast", "_compat_detach_mcast",
      "_compat_async_event"));

  public static final StructLayout IBV_CONTEXT = struct("ibv_context",
      ADDRESS.withName("device"), IBV_CONTEXT_OPS.withName("ops"), JAVA_INT.withName("cmd_fd"),
      JAVA_INT.withName("async_fd"), JAVA_INT.withName("num_comp_vectors"), PTHREAD_MUTEX.withName("mutex"),
      ADDRESS.withName("abi_compat"));

  /**
   * The extended context that embeds {@code ibv_context} as its last member; new verbs "grow up" in front
   * of it. The header's {@code verbs_get_ctx} steps back from the {@code ibv_context} to here, as
   * {@link IbVerbs#queryPort} does.
   */
  public static final StructLayout VERBS_CONTEXT = struct("verbs_context", concat(
      pointers("query_port", "advise_mr", "alloc_null_mr", "read_counters", "attach_counters_point_flow",
          "create_counters", "destroy_counters", "reg_dm_mr", "alloc_dm", "free_dm", "modify_flow_action_esp",
          "destroy_flow_action", "create_flow_action_esp", "modify_qp_rate_limit", "alloc_parent_domain",
          "dealloc_td", "alloc_td", "modify_cq", "post_srq_ops", "destroy_rwq_ind_table",
          "create_rwq_ind_table", "destroy_wq", "modify_wq", "create_wq", "query_rt_values", "create_cq_ex",
          "priv", "query_device_ex", "ibv_destroy_flow", "ABI_placeholder2", "ibv_create_flow",
          "ABI_placeholder1", "open_qp", "create_qp_ex", "get_srq_num", "create_srq_ex", "open_xrcd",
          "close_xrcd"),
      new MemoryLayout[] {JAVA_LONG.withName("_ABI_placeholder3"), SIZE_T.withName("sz"),
          IBV_CONTEXT.withName("context")}));

  public static final StructLayout IBV_PD = struct("ibv_pd", ADDRESS.withName("context"), JAVA_INT.withName("handle"));

  public static final StructLayout IBV_MR = struct("ibv_mr", ADDRESS.withName("context"), ADDRESS.withName("pd"),
      ADDRESS.withName("addr"), SIZE_T.withName("length"), JAVA_INT.withName("handle"), JAVA_INT.withName("lkey"),
      JAVA_INT.withName("rkey"));

  public static final StructLayout IBV_COMP_CHANNEL = struct("ibv_comp_channel", ADDRESS.withName("context"),
      JAVA_INT.withName("fd"), JAVA_INT.withName("refcnt"));

  public static final StructLayout IBV_CQ = struct("ibv_cq", ADDRESS.withName("context"),
      ADDRESS.withName("channel"), ADDRESS.withName("cq_context"), JAVA_INT.withName("handle"),
      JAVA_INT.withName("cqe"), PTHREAD_MUTEX.withName("mutex"), PTHREAD_COND.withName("cond"),
      JAVA_INT.withName("comp_events_completed"), JAVA_INT.withName("async_events_completed"));

  public static final StructLayout IBV_QP = struct("ibv_qp", concat(
      pointers("context", "qp_context", "pd", "send_cq", "recv_cq", "srq"),
      ints("handle", "qp_num", "state", "qp_type"),
      new MemoryLayout[] {PTHREAD_MUTEX.withName("mutex"), PTHREAD_COND.withName("cond"),
          JAVA_INT.withName("events_completed")}));

  public static final StructLayout IBV_ASYNC_EVENT = struct("ibv_async_event",
      union("element", ADDRESS.withName("cq"), ADDRESS.withName("qp"), ADDRESS.withName("srq"),
          ADDRESS.withName("wq"), JAVA_INT.withName("port_num")),
      JAVA_INT.withName("event_type"));

  public static final StructLayout IBV_QP_CAP = struct("ibv_qp_cap",
      ints("max_send_wr", "max_recv_wr", "max_send_sge", "max_recv_sge", "max_inline_data"));

  public static final StructLayout IBV_QP_INIT_ATTR = struct("ibv_qp_init_attr", concat(
      pointers("qp_context", "send_cq", "recv_cq", "srq"),
      new MemoryLayout[] {IBV_QP_CAP.withName("cap")},
      ints("qp_type", "sq_sig_all")));

  public static final StructLayout IBV_GLOBAL_ROUTE = struct("ibv_global_route", IBV_GID.withName("dgid"),
      JAVA_INT.withName("flow_label"), JAVA_BYTE.withName("sgid_index"), JAVA_BYTE.withName("hop_limit"),
      JAVA_BYTE.withName("traffic_class"));

  public static final StructLayout IBV_AH_ATTR = struct("ibv_ah_attr", concat(
      new MemoryLayout[] {IBV_GLOBAL_ROUTE.withName("grh"), JAVA_SHORT.withName("dlid")},
      bytes("sl", "src_path_bits", "static_rate", "is_global", "port_num")));

  public static final StructLayout IBV_QP_ATTR = struct("ibv_qp_attr", concat(
      ints("qp_state", "cur_qp_state", "path_mtu", "path_mig_state", "qkey", "rq_psn", "sq_psn", "dest_qp_num",
          "qp_access_flags"),
      new MemoryLayout[] {IBV_QP_CAP.withName("cap"), IBV_AH_ATTR.withName("ah_attr"),
          IBV_AH_ATTR.withName("alt_ah_attr")},
      shorts("pkey_index", "alt_pkey_index"),
      bytes("en_sqd_async_notify", "sq_draining", "max_rd_atomic", "max_dest_rd_atomic", "min_rnr_timer",
          "port_num", "timeout", "retry_cnt", "rnr_retry", "alt_port_num", "alt_timeout"),
      ints("rate_limit")));

  /** Every layout above, for the conformance test. */
  public static final List<MemoryLayout> ALL = List.of(IBV_GID, IBV_DEVICE_ATTR, IBV_PORT_ATTR, IBV_CONTEXT_OPS,
      IBV_CONTEXT, VERBS_CONTEXT, IBV_PD, IBV_MR, IBV_COMP_CHANNEL, IBV_CQ, IBV_QP, IBV_ASYNC_EVENT, IBV_QP_CAP,
      IBV_QP_INIT_ATTR, IBV_GLOBAL_ROUTE, IBV_AH_ATTR, IBV_QP_ATTR);

  // Offsets the bindings use, all derived from the layouts above.
  static final long CONTEXT_DEVICE = offset(IBV_CONTEXT, "device");
  static final long CONTEXT_ASYNC_FD = offset(IBV_CONTEXT, "async_fd");
  static final long CONTEXT_NUM_COMP_VECTORS = offset(IBV_CONTEXT, "num_comp_vectors");
  static final long CONTEXT_ABI_COMPAT = offset(IBV_CONTEXT, "abi_compat");
  public static final long CONTEXT_OPS_POST_SEND = offset(IBV_CONTEXT, "ops.post_send");
  public static final long CONTEXT_OPS_POST_RECV = offset(IBV_CONTEXT, "ops.post_recv");
  public static final long CONTEXT_OPS_POLL_CQ = offset(IBV_CONTEXT, "ops.poll_cq");
  public static final long CONTEXT_OPS_REQ_NOTIFY_CQ = offset(IBV_CONTEXT, "ops.req_notify_cq");
  /** {@code offsetof(struct verbs_context, context)}: how far the extended context starts before ours. */
  static final long VCTX_CONTEXT = offset(VERBS_CONTEXT, "context");
  static final long VCTX_QUERY_PORT = offset(VERBS_CONTEXT, "query_port");
  static final long VCTX_SZ = offset(VERBS_CONTEXT, "sz");
  static final long PD_CONTEXT = offset(IBV_PD, "context");
  static final long MR_ADDR = offset(IBV_MR, "addr");
  static final long MR_LENGTH = offset(IBV_MR, "length");
  static final long MR_LKEY = offset(IBV_MR, "lkey");
  static final long MR_RKEY = offset(IBV_MR, "rkey");
  static final long COMP_CHANNEL_FD = offset(IBV_COMP_CHANNEL, "fd");
  static final long CQ_CONTEXT = offset(IBV_CQ, "context");
  static final long CQ_CQE = offset(IBV_CQ, "cqe");
  static final long QP_CONTEXT = offset(IBV_QP, "context");
  static final long QP_NUM = offset(IBV_QP, "qp_num");
  static final long QP_STATE = offset(IBV_QP, "state");
  static final long ASYNC_EVENT_ELEMENT = offset(IBV_ASYNC_EVENT, "element");
  static final long ASYNC_EVENT_TYPE = offset(IBV_ASYNC_EVENT, "event_type");
}
