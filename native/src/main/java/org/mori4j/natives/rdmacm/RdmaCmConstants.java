package org.mori4j.natives.rdmacm;

/**
 * The librdmacm enum and macro values the bindings use, named exactly as in {@code <rdma/rdma_cma.h>}
 * (rdma-core 44), plus the two address families of {@code <sys/socket.h>} that a {@code sockaddr} carries.
 * {@code RdmaCmAbiConformanceTest} compares every field here with the value the real header gives.
 */
public final class RdmaCmConstants {
  private RdmaCmConstants() {}

  /** Connection manager events ({@code enum rdma_cm_event_type}); {@link RdmaCm#eventStr} names them. */
  public static final int RDMA_CM_EVENT_ADDR_RESOLVED = 0;
  public static final int RDMA_CM_EVENT_ADDR_ERROR = 1;
  public static final int RDMA_CM_EVENT_ROUTE_RESOLVED = 2;
  public static final int RDMA_CM_EVENT_ROUTE_ERROR = 3;
  public static final int RDMA_CM_EVENT_CONNECT_REQUEST = 4;
  public static final int RDMA_CM_EVENT_CONNECT_RESPONSE = 5;
  public static final int RDMA_CM_EVENT_CONNECT_ERROR = 6;
  public static final int RDMA_CM_EVENT_UNREACHABLE = 7;
  public static final int RDMA_CM_EVENT_REJECTED = 8;
  public static final int RDMA_CM_EVENT_ESTABLISHED = 9;
  public static final int RDMA_CM_EVENT_DISCONNECTED = 10;
  public static final int RDMA_CM_EVENT_DEVICE_REMOVAL = 11;
  public static final int RDMA_CM_EVENT_MULTICAST_JOIN = 12;
  public static final int RDMA_CM_EVENT_MULTICAST_ERROR = 13;
  public static final int RDMA_CM_EVENT_ADDR_CHANGE = 14;
  public static final int RDMA_CM_EVENT_TIMEWAIT_EXIT = 15;

  /**
   * Port spaces ({@code enum rdma_port_space}). {@code RDMA_PS_TCP} is the one for reliable-connected QPs,
   * which is what the RDMA backend uses; UDP and IPoIB are for datagram QPs.
   */
  public static final int RDMA_PS_IPOIB = 0x0002;
  public static final int RDMA_PS_TCP = 0x0106;
  public static final int RDMA_PS_UDP = 0x0111;
  public static final int RDMA_PS_IB = 0x013F;

  /** The largest {@code responder_resources} / {@code initiator_depth} a connection may ask for. */
  public static final int RDMA_MAX_RESP_RES = 0xFF;
  public static final int RDMA_MAX_INIT_DEPTH = 0xFF;

  /** The Q_Key librdmacm gives datagram QPs of the UDP port space. */
  public static final int RDMA_UDP_QKEY = 0x01234567;

  /** {@code rdma_set_option} levels and the id-level options we set. */
  public static final int RDMA_OPTION_ID = 0;
  public static final int RDMA_OPTION_ID_TOS = 0;
  public static final int RDMA_OPTION_ID_REUSEADDR = 1;
  public static final int RDMA_OPTION_ID_AFONLY = 2;
  public static final int RDMA_OPTION_ID_ACK_TIMEOUT = 3;

  /** {@code sa_family} values of the socket addresses the CM takes and reports. */
  public static final int AF_INET = 2;
  public static final int AF_INET6 = 10;
}
