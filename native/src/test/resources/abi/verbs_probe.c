/*
 * ABI probe for the libibverbs bindings (org.mori4j.natives.verbs): compiled with gcc against the real
 * <infiniband/verbs.h> and run by VerbsAbiConformanceTest. One "name value" line each:
 *   sizeof.<type>          size of a struct or union
 *   <type>.<field>         offset of a field (nested designators allowed: wr.rdma.rkey)
 *   <type>.<field>#size    size of that field
 *   <CONSTANT>             value of an enum constant or macro
 * The test fails on any difference from the Java layouts, and on any Java field or constant this probe
 * does not print (so nothing the bindings use goes unchecked).
 */
#include <stddef.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <sys/eventfd.h>
#include <infiniband/verbs.h>

#define SIZE(type, name) printf("sizeof.%s %zu\n", name, sizeof(type))
#define F(type, name, field)                                                \
  printf("%s.%s %zu\n", name, #field, offsetof(type, field));               \
  printf("%s.%s#size %zu\n", name, #field, sizeof(((type *)0)->field))
#define C(constant) printf("%s %lld\n", #constant, (long long)(constant))

#define S(field) F(struct ibv_device_attr, "ibv_device_attr", field)
static void device_attr(void) {
  SIZE(struct ibv_device_attr, "ibv_device_attr");
  S(fw_ver); S(node_guid); S(sys_image_guid); S(max_mr_size); S(page_size_cap); S(vendor_id);
  S(vendor_part_id); S(hw_ver); S(max_qp); S(max_qp_wr); S(device_cap_flags); S(max_sge); S(max_sge_rd);
  S(max_cq); S(max_cqe); S(max_mr); S(max_pd); S(max_qp_rd_atom); S(max_ee_rd_atom); S(max_res_rd_atom);
  S(max_qp_init_rd_atom); S(max_ee_init_rd_atom); S(atomic_cap); S(max_ee); S(max_rdd); S(max_mw);
  S(max_raw_ipv6_qp); S(max_raw_ethy_qp); S(max_mcast_grp); S(max_mcast_qp_attach);
  S(max_total_mcast_qp_attach); S(max_ah); S(max_fmr); S(max_map_per_fmr); S(max_srq); S(max_srq_wr);
  S(max_srq_sge); S(max_pkeys); S(local_ca_ack_delay); S(phys_port_cnt);
}
#undef S

#define S(field) F(struct ibv_port_attr, "ibv_port_attr", field)
static void port_attr(void) {
  SIZE(struct ibv_port_attr, "ibv_port_attr");
  S(state); S(max_mtu); S(active_mtu); S(gid_tbl_len); S(port_cap_flags); S(max_msg_sz); S(bad_pkey_cntr);
  S(qkey_viol_cntr); S(pkey_tbl_len); S(lid); S(sm_lid); S(lmc); S(max_vl_num); S(sm_sl); S(subnet_timeout);
  S(init_type_reply); S(active_width); S(active_speed); S(phys_state); S(link_layer); S(flags);
  S(port_cap_flags2);
}
#undef S

#define S(field) F(struct ibv_context_ops, "ibv_context_ops", field)
static void context_ops(void) {
  SIZE(struct ibv_context_ops, "ibv_context_ops");
  S(_compat_query_device); S(_compat_query_port); S(_compat_alloc_pd); S(_compat_dealloc_pd);
  S(_compat_reg_mr); S(_compat_rereg_mr); S(_compat_dereg_mr); S(alloc_mw); S(bind_mw); S(dealloc_mw);
  S(_compat_create_cq); S(poll_cq); S(req_notify_cq); S(_compat_cq_event); S(_compat_resize_cq);
  S(_compat_destroy_cq); S(_compat_create_srq); S(_compat_modify_srq); S(_compat_query_srq);
  S(_compat_destroy_srq); S(post_srq_recv); S(_compat_create_qp); S(_compat_query_qp); S(_compat_modify_qp);
  S(_compat_destroy_qp); S(post_send); S(post_recv); S(_compat_create_ah); S(_compat_destroy_ah);
  S(_compat_attach_mcast); S(_compat_detach_mcast); S(_compat_async_event);
}
#undef S

#define S(field) F(struct verbs_context, "verbs_context", field)
static void verbs_context(void) {
  SIZE(struct verbs_context, "verbs_context");
  S(query_port); S(advise_mr); S(alloc_null_mr); S(read_counters); S(attach_counters_point_flow);
  S(create_counters); S(destroy_counters); S(reg_dm_mr); S(alloc_dm); S(free_dm); S(modify_flow_action_esp);
  S(destroy_flow_action); S(create_flow_action_esp); S(modify_qp_rate_limit); S(alloc_parent_domain);
  S(dealloc_td); S(alloc_td); S(modify_cq); S(post_srq_ops); S(destroy_rwq_ind_table);
  S(create_rwq_ind_table); S(destroy_wq); S(modify_wq); S(create_wq); S(query_rt_values); S(create_cq_ex);
  S(priv); S(query_device_ex); S(ibv_destroy_flow); S(ABI_placeholder2); S(ibv_create_flow);
  S(ABI_placeholder1); S(open_qp); S(create_qp_ex); S(get_srq_num); S(create_srq_ex); S(open_xrcd);
  S(close_xrcd); S(_ABI_placeholder3); S(sz); S(context);
}
#undef S

static void objects(void) {
  SIZE(union ibv_gid, "ibv_gid");
  F(union ibv_gid, "ibv_gid", raw); F(union ibv_gid, "ibv_gid", global);
  F(union ibv_gid, "ibv_gid", global.subnet_prefix); F(union ibv_gid, "ibv_gid", global.interface_id);

  SIZE(struct ibv_context, "ibv_context");
  F(struct ibv_context, "ibv_context", device); F(struct ibv_context, "ibv_context", ops);
  F(struct ibv_context, "ibv_context", cmd_fd); F(struct ibv_context, "ibv_context", async_fd);
  F(struct ibv_context, "ibv_context", num_comp_vectors); F(struct ibv_context, "ibv_context", mutex);
  F(struct ibv_context, "ibv_context", abi_compat);

  SIZE(struct ibv_pd, "ibv_pd");
  F(struct ibv_pd, "ibv_pd", context); F(struct ibv_pd, "ibv_pd", handle);

  SIZE(struct ibv_mr, "ibv_mr");
  F(struct ibv_mr, "ibv_mr", context); F(struct ibv_mr, "ibv_mr", pd); F(struct ibv_mr, "ibv_mr", addr);
  F(struct ibv_mr, "ibv_mr", length); F(struct ibv_mr, "ibv_mr", handle); F(struct ibv_mr, "ibv_mr", lkey);
  F(struct ibv_mr, "ibv_mr", rkey);

  SIZE(struct ibv_comp_channel, "ibv_comp_channel");
  F(struct ibv_comp_channel, "ibv_comp_channel", context); F(struct ibv_comp_channel, "ibv_comp_channel", fd);
  F(struct ibv_comp_channel, "ibv_comp_channel", refcnt);

  SIZE(struct ibv_cq, "ibv_cq");
  F(struct ibv_cq, "ibv_cq", context); F(struct ibv_cq, "ibv_cq", channel); F(struct ibv_cq, "ibv_cq", cq_context);
  F(struct ibv_cq, "ibv_cq", handle); F(struct ibv_cq, "ibv_cq", cqe); F(struct ibv_cq, "ibv_cq", mutex);
  F(struct ibv_cq, "ibv_cq", cond); F(struct ibv_cq, "ibv_cq", comp_events_completed);
  F(struct ibv_cq, "ibv_cq", async_events_completed);

  SIZE(struct ibv_qp, "ibv_qp");
  F(struct ibv_qp, "ibv_qp", context); F(struct ibv_qp, "ibv_qp", qp_context); F(struct ibv_qp, "ibv_qp", pd);
  F(struct ibv_qp, "ibv_qp", send_cq); F(struct ibv_qp, "ibv_qp", recv_cq); F(struct ibv_qp, "ibv_qp", srq);
  F(struct ibv_qp, "ibv_qp", handle); F(struct ibv_qp, "ibv_qp", qp_num); F(struct ibv_qp, "ibv_qp", state);
  F(struct ibv_qp, "ibv_qp", qp_type); F(struct ibv_qp, "ibv_qp", mutex); F(struct ibv_qp, "ibv_qp", cond);
  F(struct ibv_qp, "ibv_qp", events_completed);

  SIZE(struct ibv_async_event, "ibv_async_event");
  F(struct ibv_async_event, "ibv_async_event", element);
  F(struct ibv_async_event, "ibv_async_event", element.cq);
  F(struct ibv_async_event, "ibv_async_event", element.qp);
  F(struct ibv_async_event, "ibv_async_event", element.srq);
  F(struct ibv_async_event, "ibv_async_event", element.wq);
  F(struct ibv_async_event, "ibv_async_event", element.port_num);
  F(struct ibv_async_event, "ibv_async_event", event_type);
}

static void queue_pair_attrs(void) {
  SIZE(struct ibv_qp_cap, "ibv_qp_cap");
  F(struct ibv_qp_cap, "ibv_qp_cap", max_send_wr); F(struct ibv_qp_cap, "ibv_qp_cap", max_recv_wr);
  F(struct ibv_qp_cap, "ibv_qp_cap", max_send_sge); F(struct ibv_qp_cap, "ibv_qp_cap", max_recv_sge);
  F(struct ibv_qp_cap, "ibv_qp_cap", max_inline_data);

  SIZE(struct ibv_qp_init_attr, "ibv_qp_init_attr");
  F(struct ibv_qp_init_attr, "ibv_qp_init_attr", qp_context); F(struct ibv_qp_init_attr, "ibv_qp_init_attr", send_cq);
  F(struct ibv_qp_init_attr, "ibv_qp_init_attr", recv_cq); F(struct ibv_qp_init_attr, "ibv_qp_init_attr", srq);
  F(struct ibv_qp_init_attr, "ibv_qp_init_attr", cap); F(struct ibv_qp_init_attr, "ibv_qp_init_attr", qp_type);
  F(struct ibv_qp_init_attr, "ibv_qp_init_attr", sq_sig_all);

  SIZE(struct ibv_global_route, "ibv_global_route");
  F(struct ibv_global_route, "ibv_global_route", dgid); F(struct ibv_global_route, "ibv_global_route", flow_label);
  F(struct ibv_global_route, "ibv_global_route", sgid_index); F(struct ibv_global_route, "ibv_global_route", hop_limit);
  F(struct ibv_global_route, "ibv_global_route", traffic_class);

  SIZE(struct ibv_ah_attr, "ibv_ah_attr");
  F(struct ibv_ah_attr, "ibv_ah_attr", grh); F(struct ibv_ah_attr, "ibv_ah_attr", dlid);
  F(struct ibv_ah_attr, "ibv_ah_attr", sl); F(struct ibv_ah_attr, "ibv_ah_attr", src_path_bits);
  F(struct ibv_ah_attr, "ibv_ah_attr", static_rate); F(struct ibv_ah_attr, "ibv_ah_attr", is_global);
  F(struct ibv_ah_attr, "ibv_ah_attr", port_num);

#define S(field) F(struct ibv_qp_attr, "ibv_qp_attr", field)
  SIZE(struct ibv_qp_attr, "ibv_qp_attr");
  S(qp_state); S(cur_qp_state); S(path_mtu); S(path_mig_state); S(qkey); S(rq_psn); S(sq_psn); S(dest_qp_num);
  S(qp_access_flags); S(cap); S(ah_attr); S(alt_ah_attr); S(pkey_index); S(alt_pkey_index);
  S(en_sqd_async_notify); S(sq_draining); S(max_rd_atomic); S(max_dest_rd_atomic); S(min_rnr_timer);
  S(port_num); S(timeout); S(retry_cnt); S(rnr_retry); S(alt_port_num); S(alt_timeout); S(rate_limit);
#undef S
}

static void work_requests(void) {
  SIZE(struct ibv_sge, "ibv_sge");
  F(struct ibv_sge, "ibv_sge", addr); F(struct ibv_sge, "ibv_sge", length); F(struct ibv_sge, "ibv_sge", lkey);

#define S(field) F(struct ibv_send_wr, "ibv_send_wr", field)
  SIZE(struct ibv_send_wr, "ibv_send_wr");
  S(wr_id); S(next); S(sg_list); S(num_sge); S(opcode); S(send_flags); S(imm_data); S(invalidate_rkey); S(wr);
  S(wr.rdma); S(wr.rdma.remote_addr); S(wr.rdma.rkey);
  S(wr.atomic); S(wr.atomic.remote_addr); S(wr.atomic.compare_add); S(wr.atomic.swap); S(wr.atomic.rkey);
  S(wr.ud); S(wr.ud.ah); S(wr.ud.remote_qpn); S(wr.ud.remote_qkey);
  S(qp_type); S(qp_type.xrc); S(qp_type.xrc.remote_srqn);
  S(bind_mw); S(bind_mw.mw); S(bind_mw.rkey); S(bind_mw.bind_info); S(bind_mw.bind_info.mr);
  S(bind_mw.bind_info.addr); S(bind_mw.bind_info.length); S(bind_mw.bind_info.mw_access_flags);
  S(tso); S(tso.hdr); S(tso.hdr_sz); S(tso.mss);
#undef S

  SIZE(struct ibv_recv_wr, "ibv_recv_wr");
  F(struct ibv_recv_wr, "ibv_recv_wr", wr_id); F(struct ibv_recv_wr, "ibv_recv_wr", next);
  F(struct ibv_recv_wr, "ibv_recv_wr", sg_list); F(struct ibv_recv_wr, "ibv_recv_wr", num_sge);

#define S(field) F(struct ibv_wc, "ibv_wc", field)
  SIZE(struct ibv_wc, "ibv_wc");
  S(wr_id); S(status); S(opcode); S(vendor_err); S(byte_len); S(imm_data); S(invalidated_rkey); S(qp_num);
  S(src_qp); S(wc_flags); S(pkey_index); S(slid); S(sl); S(dlid_path_bits);
#undef S
}

static void constants(void) {
  C(IBV_QPT_RC); C(IBV_QPT_UC); C(IBV_QPT_UD);
  C(IBV_QPS_RESET); C(IBV_QPS_INIT); C(IBV_QPS_RTR); C(IBV_QPS_RTS); C(IBV_QPS_SQD); C(IBV_QPS_SQE);
  C(IBV_QPS_ERR); C(IBV_QPS_UNKNOWN);
  C(IBV_QP_STATE); C(IBV_QP_CUR_STATE); C(IBV_QP_EN_SQD_ASYNC_NOTIFY); C(IBV_QP_ACCESS_FLAGS);
  C(IBV_QP_PKEY_INDEX); C(IBV_QP_PORT); C(IBV_QP_QKEY); C(IBV_QP_AV); C(IBV_QP_PATH_MTU); C(IBV_QP_TIMEOUT);
  C(IBV_QP_RETRY_CNT); C(IBV_QP_RNR_RETRY); C(IBV_QP_RQ_PSN); C(IBV_QP_MAX_QP_RD_ATOMIC); C(IBV_QP_ALT_PATH);
  C(IBV_QP_MIN_RNR_TIMER); C(IBV_QP_SQ_PSN); C(IBV_QP_MAX_DEST_RD_ATOMIC); C(IBV_QP_PATH_MIG_STATE);
  C(IBV_QP_CAP); C(IBV_QP_DEST_QPN); C(IBV_QP_RATE_LIMIT);
  C(IBV_ACCESS_LOCAL_WRITE); C(IBV_ACCESS_REMOTE_WRITE); C(IBV_ACCESS_REMOTE_READ);
  C(IBV_ACCESS_REMOTE_ATOMIC); C(IBV_ACCESS_MW_BIND); C(IBV_ACCESS_ZERO_BASED); C(IBV_ACCESS_ON_DEMAND);
  C(IBV_ACCESS_HUGETLB); C(IBV_ACCESS_RELAXED_ORDERING); C(IBV_ACCESS_OPTIONAL_RANGE);
  C(IBV_WR_RDMA_WRITE); C(IBV_WR_RDMA_WRITE_WITH_IMM); C(IBV_WR_SEND); C(IBV_WR_SEND_WITH_IMM);
  C(IBV_WR_RDMA_READ); C(IBV_WR_ATOMIC_CMP_AND_SWP); C(IBV_WR_ATOMIC_FETCH_AND_ADD);
  C(IBV_SEND_FENCE); C(IBV_SEND_SIGNALED); C(IBV_SEND_SOLICITED); C(IBV_SEND_INLINE);
  C(IBV_WC_SUCCESS); C(IBV_WC_LOC_LEN_ERR); C(IBV_WC_LOC_QP_OP_ERR); C(IBV_WC_LOC_PROT_ERR);
  C(IBV_WC_WR_FLUSH_ERR); C(IBV_WC_REM_INV_REQ_ERR); C(IBV_WC_REM_ACCESS_ERR); C(IBV_WC_REM_OP_ERR); C(IBV_WC_RETRY_EXC_ERR);
  C(IBV_WC_RNR_RETRY_EXC_ERR); C(IBV_WC_GENERAL_ERR);
  C(IBV_WC_SEND); C(IBV_WC_RDMA_WRITE); C(IBV_WC_RDMA_READ); C(IBV_WC_COMP_SWAP); C(IBV_WC_FETCH_ADD);
  C(IBV_WC_RECV); C(IBV_WC_RECV_RDMA_WITH_IMM);
  C(IBV_WC_GRH); C(IBV_WC_WITH_IMM);
  C(IBV_MTU_256); C(IBV_MTU_512); C(IBV_MTU_1024); C(IBV_MTU_2048); C(IBV_MTU_4096);
  C(IBV_PORT_NOP); C(IBV_PORT_DOWN); C(IBV_PORT_INIT); C(IBV_PORT_ARMED); C(IBV_PORT_ACTIVE);
  C(IBV_LINK_LAYER_UNSPECIFIED); C(IBV_LINK_LAYER_INFINIBAND); C(IBV_LINK_LAYER_ETHERNET);
  C(IBV_EVENT_CQ_ERR); C(IBV_EVENT_QP_FATAL); C(IBV_EVENT_QP_REQ_ERR); C(IBV_EVENT_QP_ACCESS_ERR);
  C(IBV_EVENT_COMM_EST); C(IBV_EVENT_SQ_DRAINED); C(IBV_EVENT_PATH_MIG); C(IBV_EVENT_PATH_MIG_ERR);
  C(IBV_EVENT_DEVICE_FATAL); C(IBV_EVENT_PORT_ACTIVE); C(IBV_EVENT_PORT_ERR); C(IBV_EVENT_LID_CHANGE);
  C(IBV_EVENT_PKEY_CHANGE); C(IBV_EVENT_SM_CHANGE); C(IBV_EVENT_SRQ_ERR); C(IBV_EVENT_SRQ_LIMIT_REACHED);
  C(IBV_EVENT_QP_LAST_WQE_REACHED); C(IBV_EVENT_CLIENT_REREGISTER); C(IBV_EVENT_GID_CHANGE);
  C(IBV_EVENT_WQ_FATAL);
  /* verbs_get_ctx(): an extended context marks abi_compat with this value. */
  printf("VERBS_ABI_IS_EXTENDED %lld\n", (long long)(uintptr_t)__VERBS_ABI_IS_EXTENDED);
  /* errno values the bindings name (Errno). */
  C(EPERM); C(ENOENT); C(EINTR); C(EIO); C(ENXIO); C(EAGAIN); C(ENOMEM); C(EACCES); C(EFAULT); C(EBUSY);
  C(EEXIST); C(ENODEV); C(EINVAL); C(ENOSPC); C(ENOSYS); C(EPROTONOSUPPORT); C(EOPNOTSUPP);
  C(EADDRINUSE); C(EADDRNOTAVAIL); C(ENETUNREACH); C(ECONNABORTED); C(ECONNRESET); C(ETIMEDOUT);
  C(ECONNREFUSED); C(EHOSTUNREACH); C(EALREADY); C(EINPROGRESS);
}

/* The libc side of waiting on a completion channel (LibcFds): ppoll over the channel fd and an eventfd. */
static void libc_fds(void) {
  SIZE(struct pollfd, "pollfd");
  F(struct pollfd, "pollfd", fd); F(struct pollfd, "pollfd", events); F(struct pollfd, "pollfd", revents);
  SIZE(struct timespec, "timespec");
  F(struct timespec, "timespec", tv_sec); F(struct timespec, "timespec", tv_nsec);
  C(POLLIN); C(POLLERR); C(POLLHUP); C(POLLNVAL);
  C(EFD_SEMAPHORE); C(EFD_NONBLOCK); C(EFD_CLOEXEC);
  C(F_GETFL); C(F_SETFL); C(O_NONBLOCK);
}

int main(void) {
  device_attr();
  port_attr();
  context_ops();
  verbs_context();
  objects();
  queue_pair_attrs();
  work_requests();
  constants();
  libc_fds();
  return 0;
}
