/*
 * ABI probe for the librdmacm bindings (org.mori4j.natives.rdmacm): compiled with gcc against the real
 * <rdma/rdma_cma.h> (which brings <infiniband/verbs.h> and glibc's socket headers) and run by
 * RdmaCmAbiConformanceTest. Same line format as verbs_probe.c:
 *   sizeof.<type>          size of a struct or union
 *   <type>.<field>         offset of a field (nested designators allowed: route.addr.src_sin)
 *   <type>.<field>#size    size of that field
 *   <CONSTANT>             value of an enum constant or macro
 * The verbs structs that CM structs embed (ibv_gid, ibv_global_route, ibv_ah_attr) are printed again here
 * so this probe checks the CM structs down to their last byte on its own.
 */
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#define SIZE(type, name) printf("sizeof.%s %zu\n", name, sizeof(type))
#define F(type, name, field)                                                \
  printf("%s.%s %zu\n", name, #field, offsetof(type, field));               \
  printf("%s.%s#size %zu\n", name, #field, sizeof(((type *)0)->field))
#define C(constant) printf("%s %lld\n", #constant, (long long)(constant))

static void embedded_verbs(void) {
  SIZE(union ibv_gid, "ibv_gid");
  F(union ibv_gid, "ibv_gid", raw); F(union ibv_gid, "ibv_gid", global);
  F(union ibv_gid, "ibv_gid", global.subnet_prefix); F(union ibv_gid, "ibv_gid", global.interface_id);

#define S(field) F(struct ibv_global_route, "ibv_global_route", field)
  SIZE(struct ibv_global_route, "ibv_global_route");
  S(dgid); S(flow_label); S(sgid_index); S(hop_limit); S(traffic_class);
#undef S

#define S(field) F(struct ibv_ah_attr, "ibv_ah_attr", field)
  SIZE(struct ibv_ah_attr, "ibv_ah_attr");
  S(grh); S(dlid); S(sl); S(src_path_bits); S(static_rate); S(is_global); S(port_num);
#undef S
}

static void socket_addresses(void) {
  SIZE(struct sockaddr, "sockaddr");
  F(struct sockaddr, "sockaddr", sa_family); F(struct sockaddr, "sockaddr", sa_data);

  SIZE(struct in_addr, "in_addr");
  F(struct in_addr, "in_addr", s_addr);

#define S(field) F(struct sockaddr_in, "sockaddr_in", field)
  SIZE(struct sockaddr_in, "sockaddr_in");
  S(sin_family); S(sin_port); S(sin_addr); S(sin_zero);
#undef S

#define S(field) F(struct in6_addr, "in6_addr", field)
  SIZE(struct in6_addr, "in6_addr");
  S(__in6_u); S(__in6_u.__u6_addr8); S(__in6_u.__u6_addr16); S(__in6_u.__u6_addr32);
#undef S

#define S(field) F(struct sockaddr_in6, "sockaddr_in6", field)
  SIZE(struct sockaddr_in6, "sockaddr_in6");
  S(sin6_family); S(sin6_port); S(sin6_flowinfo); S(sin6_addr); S(sin6_scope_id);
#undef S

#define S(field) F(struct sockaddr_storage, "sockaddr_storage", field)
  SIZE(struct sockaddr_storage, "sockaddr_storage");
  S(ss_family); S(__ss_padding); S(__ss_align);
#undef S
}

static void cm_structs(void) {
#define S(field) F(struct rdma_ib_addr, "rdma_ib_addr", field)
  SIZE(struct rdma_ib_addr, "rdma_ib_addr");
  S(sgid); S(dgid); S(pkey);
#undef S

#define S(field) F(struct rdma_addr, "rdma_addr", field)
  SIZE(struct rdma_addr, "rdma_addr");
  S(src_addr); S(src_sin); S(src_sin6); S(src_storage);
  S(dst_addr); S(dst_sin); S(dst_sin6); S(dst_storage);
  S(addr); S(addr.ibaddr);
#undef S

#define S(field) F(struct rdma_route, "rdma_route", field)
  SIZE(struct rdma_route, "rdma_route");
  S(addr); S(path_rec); S(num_paths);
#undef S

  SIZE(struct rdma_event_channel, "rdma_event_channel");
  F(struct rdma_event_channel, "rdma_event_channel", fd);

#define S(field) F(struct rdma_cm_id, "rdma_cm_id", field)
  SIZE(struct rdma_cm_id, "rdma_cm_id");
  S(verbs); S(channel); S(context); S(qp); S(route); S(ps); S(port_num); S(event); S(send_cq_channel);
  S(send_cq); S(recv_cq_channel); S(recv_cq); S(srq); S(pd); S(qp_type);
  /* the inline rdma_get_local_addr/rdma_get_peer_addr read these two */
  S(route.addr.src_storage); S(route.addr.dst_storage);
#undef S

#define S(field) F(struct rdma_conn_param, "rdma_conn_param", field)
  SIZE(struct rdma_conn_param, "rdma_conn_param");
  S(private_data); S(private_data_len); S(responder_resources); S(initiator_depth); S(flow_control);
  S(retry_count); S(rnr_retry_count); S(srq); S(qp_num);
#undef S

#define S(field) F(struct rdma_ud_param, "rdma_ud_param", field)
  SIZE(struct rdma_ud_param, "rdma_ud_param");
  S(private_data); S(private_data_len); S(ah_attr); S(qp_num); S(qkey);
#undef S

#define S(field) F(struct rdma_cm_event, "rdma_cm_event", field)
  SIZE(struct rdma_cm_event, "rdma_cm_event");
  S(id); S(listen_id); S(event); S(status); S(param); S(param.conn); S(param.ud);
#undef S
}

static void constants(void) {
  C(RDMA_CM_EVENT_ADDR_RESOLVED); C(RDMA_CM_EVENT_ADDR_ERROR); C(RDMA_CM_EVENT_ROUTE_RESOLVED);
  C(RDMA_CM_EVENT_ROUTE_ERROR); C(RDMA_CM_EVENT_CONNECT_REQUEST); C(RDMA_CM_EVENT_CONNECT_RESPONSE);
  C(RDMA_CM_EVENT_CONNECT_ERROR); C(RDMA_CM_EVENT_UNREACHABLE); C(RDMA_CM_EVENT_REJECTED);
  C(RDMA_CM_EVENT_ESTABLISHED); C(RDMA_CM_EVENT_DISCONNECTED); C(RDMA_CM_EVENT_DEVICE_REMOVAL);
  C(RDMA_CM_EVENT_MULTICAST_JOIN); C(RDMA_CM_EVENT_MULTICAST_ERROR); C(RDMA_CM_EVENT_ADDR_CHANGE);
  C(RDMA_CM_EVENT_TIMEWAIT_EXIT);
  C(RDMA_PS_IPOIB); C(RDMA_PS_TCP); C(RDMA_PS_UDP); C(RDMA_PS_IB);
  C(RDMA_MAX_RESP_RES); C(RDMA_MAX_INIT_DEPTH); C(RDMA_UDP_QKEY);
  C(RDMA_OPTION_ID); C(RDMA_OPTION_ID_TOS); C(RDMA_OPTION_ID_REUSEADDR); C(RDMA_OPTION_ID_AFONLY);
  C(RDMA_OPTION_ID_ACK_TIMEOUT);
  C(AF_INET); C(AF_INET6);
}

int main(void) {
  embedded_verbs();
  socket_addresses();
  cm_structs();
  constants();
  return 0;
}
