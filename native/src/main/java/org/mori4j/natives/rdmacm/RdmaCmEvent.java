package org.mori4j.natives.rdmacm;

/**
 * A copy of one connection-manager event ({@code struct rdma_cm_event}), taken before the event was
 * acknowledged. {@code id} is the id the event is about: for {@code RDMA_CM_EVENT_CONNECT_REQUEST} a new id
 * for the incoming connection, which the receiver owns and must {@link RdmaCmId#accept accept} or
 * {@link RdmaCmId#reject reject} and eventually close; {@code listenId} is the listener it arrived on.
 * {@code status} is 0 or a negative errno for error events, and the reject reason for
 * {@code RDMA_CM_EVENT_REJECTED}. {@code connection} holds the peer's connection parameters and private data
 * for connection events (request, response, established, rejected), and is null otherwise.
 */
public record RdmaCmEvent(int type, int status, RdmaCmId id, RdmaCmId listenId, ConnectionParameters connection) {

  /** The library's name for the event type ({@code rdma_event_str}). */
  public String name() {
    return RdmaCm.eventStr(type);
  }

  public boolean is(int eventType) {
    return type == eventType;
  }

  /** Whether the event carries {@code param.conn} (as opposed to {@code param.ud} or nothing). */
  static boolean hasConnectionParameters(int type) {
    return type == RdmaCmConstants.RDMA_CM_EVENT_CONNECT_REQUEST
        || type == RdmaCmConstants.RDMA_CM_EVENT_CONNECT_RESPONSE
        || type == RdmaCmConstants.RDMA_CM_EVENT_ESTABLISHED
        || type == RdmaCmConstants.RDMA_CM_EVENT_REJECTED;
  }

  @Override
  public String toString() {
    return name() + (status != 0 ? " (status " + status + ")" : "") + (id != null ? " on " + id : "");
  }
}
