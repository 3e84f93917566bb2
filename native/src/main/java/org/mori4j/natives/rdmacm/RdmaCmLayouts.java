package org.mori4j.natives.rdmacm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;
import static org.mori4j.natives.verbs.CLayout.array;
import static org.mori4j.natives.verbs.CLayout.bytes;
import static org.mori4j.natives.verbs.CLayout.concat;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.CLayout.pointers;
import static org.mori4j.natives.verbs.CLayout.struct;
import static org.mori4j.natives.verbs.CLayout.union;
import static org.mori4j.natives.verbs.VerbsLayouts.IBV_AH_ATTR;
import static org.mori4j.natives.verbs.VerbsLayouts.IBV_GID;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.util.List;

/**
 * The librdmacm ({@code <rdma/rdma_cma.h>}) structs the CM bindings read or write, and the glibc socket
 * address structs they embed, as FFM layouts named after their C types and fields. {@code rdma_cm_id} and
 * {@code rdma_cm_event} are allocated by the library; they are declared whole only so the conformance test
 * can check their sizes, and the bindings read their public fields at the offsets derived here. The
 * {@code rdma_addr} source and destination unions are anonymous in C and named {@code $anon_src}/
 * {@code $anon_dst} here; {@code RdmaCmAbiConformanceTest} checks every size, offset and field size.
 */
public final class RdmaCmLayouts {
  private RdmaCmLayouts() {}

  public static final StructLayout SOCKADDR = struct("sockaddr",
      JAVA_SHORT.withName("sa_family"), array("sa_data", 14, JAVA_BYTE));

  public static final StructLayout IN_ADDR = struct("in_addr", JAVA_INT.withName("s_addr"));

  /** {@code sin_port} and {@code sin_addr} are in network byte order. */
  public static final StructLayout SOCKADDR_IN = struct("sockaddr_in",
      JAVA_SHORT.withName("sin_family"), JAVA_SHORT.withName("sin_port"), IN_ADDR.withName("sin_addr"),
      array("sin_zero", 8, JAVA_BYTE));

  /** glibc names the union inside {@code in6_addr} {@code __in6_u}; its 32-bit view makes it 4-aligned. */
  public static final StructLayout IN6_ADDR = struct("in6_addr", union("__in6_u",
      array("__u6_addr8", 16, JAVA_BYTE), array("__u6_addr16", 8, JAVA_SHORT), array("__u6_addr32", 4, JAVA_INT)));

  public static final StructLayout SOCKADDR_IN6 = struct("sockaddr_in6",
      JAVA_SHORT.withName("sin6_family"), JAVA_SHORT.withName("sin6_port"), JAVA_INT.withName("sin6_flowinfo"),
      IN6_ADDR.withName("sin6_addr"), JAVA_INT.withName("sin6_scope_id"));

  /** 128 bytes, 8-aligned: large enough for any family, which is why {@code rdma_addr} embeds it. */
  public static final StructLayout SOCKADDR_STORAGE = struct("sockaddr_storage",
      JAVA_SHORT.withName("ss_family"), array("__ss_padding", 118, JAVA_BYTE), JAVA_LONG.withName("__ss_align"));

  public static final StructLayout RDMA_IB_ADDR = struct("rdma_ib_addr",
      IBV_GID.withName("sgid"), IBV_GID.withName("dgid"), JAVA_SHORT.withName("pkey"));

  public static final StructLayout RDMA_ADDR = struct("rdma_addr",
      union("$anon_src", SOCKADDR.withName("src_addr"), SOCKADDR_IN.withName("src_sin"),
          SOCKADDR_IN6.withName("src_sin6"), SOCKADDR_STORAGE.withName("src_storage")),
      union("$anon_dst", SOCKADDR.withName("dst_addr"), SOCKADDR_IN.withName("dst_sin"),
          SOCKADDR_IN6.withName("dst_sin6"), SOCKADDR_STORAGE.withName("dst_storage")),
      union("addr", RDMA_IB_ADDR.withName("ibaddr")));

  public static final StructLayout RDMA_ROUTE = struct("rdma_route",
      RDMA_ADDR.withName("addr"), ADDRESS.withName("path_rec"), JAVA_INT.withName("num_paths"));

  public static final StructLayout RDMA_EVENT_CHANNEL = struct("rdma_event_channel", JAVA_INT.withName("fd"));

  public static final StructLayout RDMA_CM_ID = struct("rdma_cm_id", concat(
      pointers("verbs", "channel", "context", "qp"),
      new MemoryLayout[] {RDMA_ROUTE.withName("route"), JAVA_INT.withName("ps"), JAVA_BYTE.withName("port_num")},
      pointers("event", "send_cq_channel", "send_cq", "recv_cq_channel", "recv_cq", "srq", "pd"),
      new MemoryLayout[] {JAVA_INT.withName("qp_type")}));

  public static final StructLayout RDMA_CONN_PARAM = struct("rdma_conn_param", concat(
      new MemoryLayout[] {ADDRESS.withName("private_data")},
      bytes("private_data_len", "responder_resources", "initiator_depth", "flow_control", "retry_count",
          "rnr_retry_count", "srq"),
      new MemoryLayout[] {JAVA_INT.withName("qp_num")}));

  public static final StructLayout RDMA_UD_PARAM = struct("rdma_ud_param",
      ADDRESS.withName("private_data"), JAVA_BYTE.withName("private_data_len"), IBV_AH_ATTR.withName("ah_attr"),
      JAVA_INT.withName("qp_num"), JAVA_INT.withName("qkey"));

  public static final StructLayout RDMA_CM_EVENT = struct("rdma_cm_event",
      ADDRESS.withName("id"), ADDRESS.withName("listen_id"), JAVA_INT.withName("event"), JAVA_INT.withName("status"),
      union("param", RDMA_CONN_PARAM.withName("conn"), RDMA_UD_PARAM.withName("ud")));

  /** Every layout above, for the conformance test. */
  public static final List<MemoryLayout> ALL = List.of(SOCKADDR, IN_ADDR, SOCKADDR_IN, IN6_ADDR, SOCKADDR_IN6,
      SOCKADDR_STORAGE, RDMA_IB_ADDR, RDMA_ADDR, RDMA_ROUTE, RDMA_EVENT_CHANNEL, RDMA_CM_ID, RDMA_CONN_PARAM,
      RDMA_UD_PARAM, RDMA_CM_EVENT);

  // Offsets the bindings use, all derived from the layouts above.
  static final long CHANNEL_FD = offset(RDMA_EVENT_CHANNEL, "fd");
  static final long ID_VERBS = offset(RDMA_CM_ID, "verbs");
  static final long ID_QP = offset(RDMA_CM_ID, "qp");
  static final long ID_PS = offset(RDMA_CM_ID, "ps");
  static final long ID_PORT_NUM = offset(RDMA_CM_ID, "port_num");
  static final long ID_SRC_ADDR = offset(RDMA_CM_ID, "route.addr.$anon_src.src_storage");
  static final long ID_DST_ADDR = offset(RDMA_CM_ID, "route.addr.$anon_dst.dst_storage");
  static final long EVENT_ID = offset(RDMA_CM_EVENT, "id");
  static final long EVENT_LISTEN_ID = offset(RDMA_CM_EVENT, "listen_id");
  static final long EVENT_TYPE = offset(RDMA_CM_EVENT, "event");
  static final long EVENT_STATUS = offset(RDMA_CM_EVENT, "status");
  static final long EVENT_CONN = offset(RDMA_CM_EVENT, "param.conn");
  static final long CONN_PRIVATE_DATA = offset(RDMA_CONN_PARAM, "private_data");
  static final long CONN_PRIVATE_DATA_LEN = offset(RDMA_CONN_PARAM, "private_data_len");
  static final long CONN_RESPONDER_RESOURCES = offset(RDMA_CONN_PARAM, "responder_resources");
  static final long CONN_INITIATOR_DEPTH = offset(RDMA_CONN_PARAM, "initiator_depth");
  static final long CONN_FLOW_CONTROL = offset(RDMA_CONN_PARAM, "flow_control");
  static final long CONN_RETRY_COUNT = offset(RDMA_CONN_PARAM, "retry_count");
  static final long CONN_RNR_RETRY_COUNT = offset(RDMA_CONN_PARAM, "rnr_retry_count");
  static final long CONN_SRQ = offset(RDMA_CONN_PARAM, "srq");
  static final long CONN_QP_NUM = offset(RDMA_CONN_PARAM, "qp_num");
  static final long SS_FAMILY = offset(SOCKADDR_STORAGE, "ss_family");
  static final long SIN_FAMILY = offset(SOCKADDR_IN, "sin_family");
  static final long SIN_PORT = offset(SOCKADDR_IN, "sin_port");
  static final long SIN_ADDR = offset(SOCKADDR_IN, "sin_addr");
  static final long SIN6_FAMILY = offset(SOCKADDR_IN6, "sin6_family");
  static final long SIN6_PORT = offset(SOCKADDR_IN6, "sin6_port");
  static final long SIN6_ADDR = offset(SOCKADDR_IN6, "sin6_addr");
  static final long SIN6_SCOPE_ID = offset(SOCKADDR_IN6, "sin6_scope_id");
}
