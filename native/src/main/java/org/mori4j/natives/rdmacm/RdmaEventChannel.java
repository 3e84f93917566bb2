package org.mori4j.natives.rdmacm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.mori4j.natives.rdmacm.RdmaCmLayouts.*;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.mori4j.natives.verbs.NativeResource;

/**
 * A connection-manager event channel ({@code struct rdma_event_channel}) and the ids created on it. Every
 * asynchronous CM step (address and route resolution, connect requests, establishment, disconnects)
 * reports an event here; {@link #nextEvent} copies each one and acknowledges it at once, so no native
 * event outlives the call and {@code rdma_destroy_id}, which waits for acks, never hangs on us. librdmacm
 * forbids destroying a channel that still has ids, so {@link #close()} closes the ids still open first.
 * Creating one fails with {@code ENODEV} on a machine without an RDMA device, with a message that says so.
 */
public final class RdmaEventChannel extends NativeResource {
  private final Map<Long, RdmaCmId> ids = new ConcurrentHashMap<>();

  private RdmaEventChannel(MemorySegment channel) {
    super("rdma event channel", channel, RDMA_EVENT_CHANNEL.byteSize());
  }

  /** {@code rdma_create_event_channel}. */
  public static RdmaEventChannel create() {
    return new RdmaEventChannel(RdmaCm.createEventChannel());
  }

  /** The channel's file descriptor: readable when an event is waiting, for poll/epoll. */
  public int fd() {
    return handle().get(JAVA_INT, CHANNEL_FD);
  }

  /** A new id reporting to this channel, in port space {@code ps} ({@code RDMA_PS_TCP} for RC connections). */
  public RdmaCmId createId(int ps) {
    return track(new RdmaCmId(this, RdmaCm.createId(handle(), MemorySegment.NULL, ps)));
  }

  /**
   * Blocks in {@code rdma_get_cm_event} until the next event, copies it and acknowledges it. A connect
   * request brings a new id, owned by the caller from here on.
   */
  public RdmaCmEvent nextEvent() {
    MemorySegment event = RdmaCm.getCmEvent(handle());
    RdmaCmEvent copy;
    try {
      copy = copy(event);
    } finally {
      RdmaCm.ackCmEvent(event);
    }
    return copy;
  }

  private RdmaCmEvent copy(MemorySegment event) {
    int type = event.get(JAVA_INT, EVENT_TYPE);
    long idAddress = event.get(ADDRESS, EVENT_ID).address();
    RdmaCmId listenId = ids.get(event.get(ADDRESS, EVENT_LISTEN_ID).address());
    RdmaCmId id = type == RdmaCmConstants.RDMA_CM_EVENT_CONNECT_REQUEST
        ? track(new RdmaCmId(this, MemorySegment.ofAddress(idAddress).reinterpret(RDMA_CM_ID.byteSize())))
        : ids.get(idAddress);
    ConnectionParameters conn = null;
    if (RdmaCmEvent.hasConnectionParameters(type) && id != null && id.carriesConnectionParameters()) {
      conn = ConnectionParameters.read(event.asSlice(EVENT_CONN, RDMA_CONN_PARAM.byteSize()));
    }
    return new RdmaCmEvent(type, event.get(JAVA_INT, EVENT_STATUS), id, listenId, conn);
  }

  private RdmaCmId track(RdmaCmId id) {
    ids.put(id.handle().address(), id);
    return id;
  }

  void forget(long idAddress) {
    ids.remove(idAddress);
  }

  @Override
  protected void release(MemorySegment handle) {
    for (RdmaCmId id : new ArrayList<>(ids.values())) id.close();
    RdmaCm.destroyEventChannel(handle);
  }
}
