package org.mori4j.natives.rdmacm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.mori4j.natives.rdmacm.RdmaCmConstants.*;
import static org.mori4j.natives.rdmacm.RdmaCmLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.mori4j.natives.verbs.NativeResource;
import org.mori4j.natives.verbs.VerbsContext;
import org.mori4j.natives.verbs.VerbsProtectionDomain;
import org.mori4j.natives.verbs.VerbsQueuePair;

/**
 * A connection-manager id ({@code struct rdma_cm_id}), the CM's socket: an active side binds or resolves
 * an address, resolves a route, creates its QP and connects; a passive side binds, listens, and gets a new
 * id per connect request to accept or reject. Each step that talks to the network completes with an event
 * on the {@link RdmaEventChannel} the id was created on. Once an address is bound or resolved, the id knows
 * its device ({@link #device()}); a QP made with {@link #createQueuePair} belongs to the id, is moved
 * through INIT/RTR/RTS by the CM on connect and accept, and is destroyed with it.
 */
public final class RdmaCmId extends NativeResource {
  private final RdmaEventChannel channel;
  private final long address;
  private VerbsQueuePair queuePair;

  RdmaCmId(RdmaEventChannel channel, MemorySegment id) {
    super("rdma cm id", id, RDMA_CM_ID.byteSize());
    this.channel = channel;
    this.address = id.address();
  }

  public RdmaEventChannel channel() {
    return channel;
  }

  /** {@code rdma_bind_addr}: port 0 picks a free port; the wildcard address listens on every RDMA device. */
  public void bind(InetSocketAddress local) {
    try (Arena a = Arena.ofConfined()) {
      RdmaCm.bindAddr(handle(), SocketAddresses.encode(local, a));
    }
  }

  /**
   * {@code rdma_resolve_addr}: maps {@code destination} (and {@code source}, null for any) to an RDMA
   * device and port; {@code RDMA_CM_EVENT_ADDR_RESOLVED} or {@code RDMA_CM_EVENT_ADDR_ERROR} follows.
   */
  public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, Duration timeout) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment src = source == null ? MemorySegment.NULL : SocketAddresses.encode(source, a);
      RdmaCm.resolveAddr(handle(), src, SocketAddresses.encode(destination, a), millis(timeout));
    }
  }

  /** {@code rdma_resolve_route}; {@code RDMA_CM_EVENT_ROUTE_RESOLVED} or {@code _ROUTE_ERROR} follows. */
  public void resolveRoute(Duration timeout) {
    RdmaCm.resolveRoute(handle(), millis(timeout));
  }

  /** {@code rdma_listen}: connect requests arrive as events with a new id each. */
  public void listen(int backlog) {
    RdmaCm.listen(handle(), backlog);
  }

  /** {@code rdma_connect}, after the route is resolved; {@code ESTABLISHED}, {@code REJECTED} or an error follows. */
  public void connect(ConnectionParameters parameters) {
    try (Arena a = Arena.ofConfined()) {
      RdmaCm.connect(handle(), parameters.write(a));
    }
  }

  /** {@code rdma_accept} on the id of a connect request. */
  public void accept(ConnectionParameters parameters) {
    try (Arena a = Arena.ofConfined()) {
      RdmaCm.accept(handle(), parameters.write(a));
    }
  }

  /** {@code rdma_reject} on the id of a connect request, with up to 255 bytes of private data for the peer. */
  public void reject(byte[] privateData) {
    byte[] data = privateData == null ? new byte[0] : privateData;
    if (data.length > 255) throw new IllegalArgumentException("CM private data is at most 255 bytes, not " + data.length);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment p = data.length == 0 ? MemorySegment.NULL : a.allocateFrom(JAVA_BYTE, data);
      RdmaCm.reject(handle(), p, data.length);
    }
  }

  /** {@code rdma_disconnect}: moves the QP to ERR (flushing its work) and tells the peer. */
  public void disconnect() {
    RdmaCm.disconnect(handle());
  }

  /** {@code RDMA_OPTION_ID_REUSEADDR}: a listener can bind a port that connections in TIME_WAIT still hold. */
  public void setReuseAddress(boolean reuse) {
    try (Arena a = Arena.ofConfined()) {
      RdmaCm.setOption(handle(), RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, a.allocateFrom(JAVA_INT, reuse ? 1 : 0));
    }
  }

  /** {@code RDMA_OPTION_ID_TOS}: the IP type of service (RoCE traffic class) of the connection. */
  public void setTypeOfService(int tos) {
    try (Arena a = Arena.ofConfined()) {
      RdmaCm.setOption(handle(), RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, a.allocateFrom(JAVA_BYTE, (byte) tos));
    }
  }

  /** {@code RDMA_OPTION_ID_ACK_TIMEOUT}: the QP's local ACK timeout exponent (4.096 us * 2^value). */
  public void setAckTimeout(int exponent) {
    try (Arena a = Arena.ofConfined()) {
      RdmaCm.setOption(handle(), RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, a.allocateFrom(JAVA_BYTE, (byte) exponent));
    }
  }

  /** The local address ({@code rdma_get_local_addr}); null before the id is bound or resolved. */
  public InetSocketAddress localAddress() {
    return SocketAddresses.decode(handle().asSlice(ID_SRC_ADDR, SOCKADDR_STORAGE.byteSize()));
  }

  /** The peer's address ({@code rdma_get_peer_addr}); null before one is resolved or connected. */
  public InetSocketAddress peerAddress() {
    return SocketAddresses.decode(handle().asSlice(ID_DST_ADDR, SOCKADDR_STORAGE.byteSize()));
  }

  /** The port space the id was created in ({@code RDMA_PS_*}). */
  public int portSpace() {
    return handle().get(JAVA_INT, ID_PS);
  }

  /** The device port the id is bound to ({@code id->port_num}); 0 until an address is bound or resolved. */
  public int port() {
    return Byte.toUnsignedInt(handle().get(JAVA_BYTE, ID_PORT_NUM));
  }

  /**
   * The device the id is bound to ({@code id->verbs}), borrowed: librdmacm owns the context and closing
   * the returned object only ends our use. Allocate the PD, CQs and MRs of the connection on it.
   */
  public VerbsContext device() {
    MemorySegment verbs = handle().get(ADDRESS, ID_VERBS);
    if (verbs.equals(MemorySegment.NULL)) {
      throw new IllegalStateException(this + " has no device yet: bind or resolve an address first");
    }
    return VerbsContext.borrow(verbs);
  }

  /**
   * {@code rdma_create_qp}: a QP in {@code pd} (which must belong to {@link #device()}) tied to this id.
   * One per id; it is closed with the id, or earlier by closing it ({@code rdma_destroy_qp}).
   */
  public synchronized VerbsQueuePair createQueuePair(VerbsProtectionDomain pd, VerbsQueuePair.Spec spec) {
    if (queuePair != null && queuePair.isOpen()) throw new IllegalStateException(this + " already has a queue pair");
    MemorySegment id = handle();
    MemorySegment idRaw = MemorySegment.ofAddress(address).reinterpret(RDMA_CM_ID.byteSize());
    queuePair = VerbsQueuePair.create(spec, init -> {
      RdmaCm.createQp(id, pd.handle(), init);
      return id.get(ADDRESS, ID_QP);
    }, qp -> RdmaCm.destroyQp(idRaw));
    return queuePair;
  }

  /** The QP made by {@link #createQueuePair}, or null. */
  public synchronized VerbsQueuePair queuePair() {
    return queuePair;
  }

  /** Whether events of this id carry {@code param.conn} (connected port spaces) rather than {@code param.ud}. */
  boolean carriesConnectionParameters() {
    int ps = portSpace();
    return ps == RDMA_PS_TCP || ps == RDMA_PS_IB;
  }

  @Override
  protected void release(MemorySegment handle) {
    VerbsQueuePair qp;
    synchronized (this) {
      qp = queuePair;
    }
    if (qp != null) qp.close();
    channel.forget(address);
    RdmaCm.destroyId(handle);
  }

  private static int millis(Duration timeout) {
    long ms = timeout.toMillis();
    if (ms <= 0 || ms > Integer.MAX_VALUE) throw new IllegalArgumentException("timeout must be 1 ms..24 days: " + timeout);
    return (int) ms;
  }
}
