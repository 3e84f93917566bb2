package org.mori4j.natives.rdmacm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.mori4j.natives.rdmacm.RdmaCmLayouts.RDMA_CM_EVENT;
import static org.mori4j.natives.rdmacm.RdmaCmLayouts.RDMA_CM_ID;
import static org.mori4j.natives.rdmacm.RdmaCmLayouts.RDMA_EVENT_CHANNEL;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.natives.verbs.ErrnoLibrary;
import org.mori4j.natives.verbs.RdmaDevices;

/**
 * The librdmacm binding ({@code librdmacm.so.1}, rdma-core): a downcall handle per exported function and a
 * static method per call that checks the result and throws a {@link NativeException} naming the function,
 * the errno and its text. librdmacm fails the POSIX way (-1 with {@code errno} set), and with
 * {@code ENODEV} whenever the machine has no RDMA device (it cannot open {@code /dev/infiniband/rdma_cm}),
 * so that failure also says what {@link RdmaDevices} found. The owners {@link RdmaEventChannel} and
 * {@link RdmaCmId} are what applications use; this class is their floor.
 */
public final class RdmaCm {
  /** The library name exceptions carry. */
  public static final String LIBRARY = "librdmacm";

  private static final ErrnoLibrary LIB =
      new ErrnoLibrary(LIBRARY, RdmaCm::hint, "librdmacm.so.1", "librdmacm.so");

  private static final FunctionDescriptor INT_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS);
  private static final FunctionDescriptor INT_PTR_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
  private static final FunctionDescriptor INT_PTR_INT = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);

  private static final MethodHandle CREATE_EVENT_CHANNEL =
      LIB.bind("rdma_create_event_channel", FunctionDescriptor.of(ADDRESS));
  private static final MethodHandle DESTROY_EVENT_CHANNEL =
      LIB.bindPlain("rdma_destroy_event_channel", FunctionDescriptor.ofVoid(ADDRESS));
  private static final MethodHandle CREATE_ID =
      LIB.bind("rdma_create_id", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
  private static final MethodHandle DESTROY_ID = LIB.bind("rdma_destroy_id", INT_PTR);
  private static final MethodHandle BIND_ADDR = LIB.bind("rdma_bind_addr", INT_PTR_PTR);
  private static final MethodHandle RESOLVE_ADDR =
      LIB.bind("rdma_resolve_addr", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
  private static final MethodHandle RESOLVE_ROUTE = LIB.bind("rdma_resolve_route", INT_PTR_INT);
  private static final MethodHandle CREATE_QP =
      LIB.bind("rdma_create_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
  private static final MethodHandle DESTROY_QP = LIB.bindPlain("rdma_destroy_qp", FunctionDescriptor.ofVoid(ADDRESS));
  private static final MethodHandle CONNECT = LIB.bind("rdma_connect", INT_PTR_PTR);
  private static final MethodHandle LISTEN = LIB.bind("rdma_listen", INT_PTR_INT);
  private static final MethodHandle ACCEPT = LIB.bind("rdma_accept", INT_PTR_PTR);
  private static final MethodHandle REJECT =
      LIB.bind("rdma_reject", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE));
  private static final MethodHandle DISCONNECT = LIB.bind("rdma_disconnect", INT_PTR);
  private static final MethodHandle GET_CM_EVENT = LIB.bind("rdma_get_cm_event", INT_PTR_PTR);
  private static final MethodHandle ACK_CM_EVENT = LIB.bind("rdma_ack_cm_event", INT_PTR);
  private static final MethodHandle SET_OPTION = LIB.bind("rdma_set_option",
      FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG));
  private static final MethodHandle EVENT_STR =
      LIB.bindPlain("rdma_event_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));

  private RdmaCm() {}

  /** Whether {@code librdmacm.so.1} could be loaded. */
  public static boolean available() {
    return LIB.available();
  }

  /** Why the library could not be loaded (empty when it was). */
  public static String absence() {
    return LIB.absence();
  }

  /** Every exported symbol this class binds (the symbol-resolution test checks each). */
  public static List<String> boundSymbols() {
    return LIB.boundSymbols();
  }

  // ---- event channels and ids

  /** {@code rdma_create_event_channel}: fails with {@code ENODEV} on a machine without an RDMA device. */
  public static MemorySegment createEventChannel() {
    return LIB.pointerCall("rdma_create_event_channel", CREATE_EVENT_CHANNEL)
        .reinterpret(RDMA_EVENT_CHANNEL.byteSize());
  }

  public static void destroyEventChannel(MemorySegment channel) {
    try {
      LIB.handle(DESTROY_EVENT_CHANNEL, "rdma_destroy_event_channel").invokeExact(channel);
    } catch (Throwable t) {
      throw ErrnoLibrary.rethrow(t);
    }
  }

  /**
   * {@code rdma_create_id} on {@code channel} in port space {@code ps} ({@code RDMA_PS_*}); the new
   * {@code struct rdma_cm_id *}. A NULL channel makes a synchronous id (calls block until done).
   */
  public static MemorySegment createId(MemorySegment channel, MemorySegment context, int ps) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment id = a.allocate(ADDRESS);
      LIB.intCall("rdma_create_id", CREATE_ID, channel, id, context, ps);
      return id.get(ADDRESS, 0).reinterpret(RDMA_CM_ID.byteSize());
    }
  }

  /** {@code rdma_destroy_id}: blocks until every event reported for the id has been acknowledged. */
  public static void destroyId(MemorySegment id) {
    LIB.intCall("rdma_destroy_id", DESTROY_ID, id);
  }

  // ---- addresses and routes

  public static void bindAddr(MemorySegment id, MemorySegment sockaddr) {
    LIB.intCall("rdma_bind_addr", BIND_ADDR, id, sockaddr);
  }

  /** Starts address resolution; {@code RDMA_CM_EVENT_ADDR_RESOLVED} or {@code _ADDR_ERROR} follows. */
  public static void resolveAddr(MemorySegment id, MemorySegment src, MemorySegment dst, int timeoutMs) {
    LIB.intCall("rdma_resolve_addr", RESOLVE_ADDR, id, src, dst, timeoutMs);
  }

  /** Starts route resolution; {@code RDMA_CM_EVENT_ROUTE_RESOLVED} or {@code _ROUTE_ERROR} follows. */
  public static void resolveRoute(MemorySegment id, int timeoutMs) {
    LIB.intCall("rdma_resolve_route", RESOLVE_ROUTE, id, timeoutMs);
  }

  // ---- queue pairs

  /** {@code rdma_create_qp}: the QP is stored in {@code id->qp}; the CM then drives its state transitions. */
  public static void createQp(MemorySegment id, MemorySegment pd, MemorySegment initAttr) {
    LIB.intCall("rdma_create_qp", CREATE_QP, id, pd, initAttr);
  }

  public static void destroyQp(MemorySegment id) {
    try {
      LIB.handle(DESTROY_QP, "rdma_destroy_qp").invokeExact(id);
    } catch (Throwable t) {
      throw ErrnoLibrary.rethrow(t);
    }
  }

  // ---- connections

  public static void connect(MemorySegment id, MemorySegment connParam) {
    LIB.intCall("rdma_connect", CONNECT, id, connParam);
  }

  public static void listen(MemorySegment id, int backlog) {
    LIB.intCall("rdma_listen", LISTEN, id, backlog);
  }

  public static void accept(MemorySegment id, MemorySegment connParam) {
    LIB.intCall("rdma_accept", ACCEPT, id, connParam);
  }

  public static void reject(MemorySegment id, MemorySegment privateData, int length) {
    LIB.intCall("rdma_reject", REJECT, id, privateData, (byte) length);
  }

  public static void disconnect(MemorySegment id) {
    LIB.intCall("rdma_disconnect", DISCONNECT, id);
  }

  /** {@code rdma_set_option}: {@code value} holds the option's C value ({@code optlen} is its size). */
  public static void setOption(MemorySegment id, int level, int name, MemorySegment value) {
    LIB.intCall("rdma_set_option", SET_OPTION, id, level, name, value, value.byteSize());
  }

  // ---- events

  /** {@code rdma_get_cm_event}: blocks on the channel's fd; the event stays valid until it is acked. */
  public static MemorySegment getCmEvent(MemorySegment channel) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment event = a.allocate(ADDRESS);
      LIB.intCall("rdma_get_cm_event", GET_CM_EVENT, channel, event);
      return event.get(ADDRESS, 0).reinterpret(RDMA_CM_EVENT.byteSize());
    }
  }

  /** {@code rdma_ack_cm_event}: frees the event and whatever it points to (private data included). */
  public static void ackCmEvent(MemorySegment event) {
    LIB.intCall("rdma_ack_cm_event", ACK_CM_EVENT, event);
  }

  /** {@code rdma_event_str}: {@code "RDMA_CM_EVENT_ESTABLISHED"}, ... */
  public static String eventStr(int event) {
    try {
      MemorySegment s = (MemorySegment) LIB.handle(EVENT_STR, "rdma_event_str").invokeExact(event);
      return s.equals(MemorySegment.NULL) ? "event " + event : s.reinterpret(Long.MAX_VALUE).getString(0);
    } catch (Throwable t) {
      throw ErrnoLibrary.rethrow(t);
    }
  }

  /** The exception for a failed CM call: function, errno value, its name and text. */
  public static NativeException failure(String function, int errno) {
    return LIB.failure(function, errno);
  }

  // ENODEV from librdmacm means it found no RDMA device (or no rdma_cm kernel module); say what the verbs
  // layer sees, because "No such device" alone does not tell a user which device is meant.
  private static String hint(int errno) {
    if (errno != Errno.ENODEV) return "";
    RdmaDevices.Inventory found = RdmaDevices.inventory();
    return found.isEmpty() ? "no RDMA device on this machine: " + found.whyNone()
        : "librdmacm cannot reach the RDMA devices " + found.devices()
            + " (is the rdma_ucm kernel module loaded and /dev/infiniband/rdma_cm accessible?)";
  }
}
