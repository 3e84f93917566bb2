package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.mori4j.natives.verbs.VerbsLayouts.*;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;
import org.mori4j.natives.NativeException;

/**
 * The libibverbs binding ({@code libibverbs.so.1}, rdma-core): a downcall handle per exported function and a
 * static method per verb that checks the result and throws a {@link NativeException} naming the function,
 * the errno and its text. Where {@code <infiniband/verbs.h>} implements a verb inline instead of exporting it
 * ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_poll_cq}, {@code ibv_req_notify_cq}, and the
 * {@code ibv_query_port} and {@code ibv_reg_mr} wrappers), {@link VerbsInline} and this class do what the
 * inline code does: read the provider's function pointer from the context's ops table and call it. The small owner classes
 * ({@link VerbsContext}, {@link VerbsQueuePair}, ...) are what applications use; this class is their floor.
 */
public final class IbVerbs {
  /** The library name exceptions carry. */
  public static final String LIBRARY = "libibverbs";

  private static final ErrnoLibrary LIB = new ErrnoLibrary(LIBRARY, errno -> "", "libibverbs.so.1", "libibverbs.so");

  private static final FunctionDescriptor PTR_PTR = FunctionDescriptor.of(ADDRESS, ADDRESS);
  private static final FunctionDescriptor INT_PTR = FunctionDescriptor.of(JAVA_INT, ADDRESS);

  private static final MethodHandle GET_DEVICE_LIST = bind("ibv_get_device_list", PTR_PTR);
  private static final MethodHandle FREE_DEVICE_LIST =
      bindPlain("ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
  private static final MethodHandle GET_DEVICE_NAME = bindPlain("ibv_get_device_name", PTR_PTR);
  private static final MethodHandle OPEN_DEVICE = bind("ibv_open_device", PTR_PTR);
  private static final MethodHandle CLOSE_DEVICE = bind("ibv_close_device", INT_PTR);
  private static final MethodHandle QUERY_DEVICE =
      bind("ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  /** The exported symbol; fills the compat prefix of {@code ibv_port_attr} only (see {@link #queryPort}). */
  private static final MethodHandle QUERY_PORT =
      bind("ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS));
  private static final MethodHandle QUERY_GID =
      bind("ibv_query_gid", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS));
  private static final MethodHandle ALLOC_PD = bind("ibv_alloc_pd", PTR_PTR);
  private static final MethodHandle DEALLOC_PD = bind("ibv_dealloc_pd", INT_PTR);
  private static final MethodHandle REG_MR =
      bind("ibv_reg_mr", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
  private static final MethodHandle REG_MR_IOVA2 =
      bind("ibv_reg_mr_iova2", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT));
  /** Exported since rdma-core 34 (IBVERBS_1.12); null on older libraries. */
  private static final MethodHandle REG_DMABUF_MR = bindOptional("ibv_reg_dmabuf_mr",
      FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT));
  private static final MethodHandle DEREG_MR = bind("ibv_dereg_mr", INT_PTR);
  private static final MethodHandle CREATE_COMP_CHANNEL = bind("ibv_create_comp_channel", PTR_PTR);
  private static final MethodHandle DESTROY_COMP_CHANNEL = bind("ibv_destroy_comp_channel", INT_PTR);
  private static final MethodHandle CREATE_CQ = bind("ibv_create_cq",
      FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
  private static final MethodHandle DESTROY_CQ = bind("ibv_destroy_cq", INT_PTR);
  private static final MethodHandle GET_CQ_EVENT =
      bind("ibv_get_cq_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
  private static final MethodHandle ACK_CQ_EVENTS =
      bindPlain("ibv_ack_cq_events", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
  private static final MethodHandle CREATE_QP = bind("ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
  private static final MethodHandle DESTROY_QP = bind("ibv_destroy_qp", INT_PTR);
  private static final MethodHandle MODIFY_QP =
      bind("ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
  private static final MethodHandle QUERY_QP =
      bind("ibv_query_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
  private static final MethodHandle GET_ASYNC_EVENT =
      bind("ibv_get_async_event", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  private static final MethodHandle ACK_ASYNC_EVENT =
      bindPlain("ibv_ack_async_event", FunctionDescriptor.ofVoid(ADDRESS));
  private static final MethodHandle WC_STATUS_STR = bindPlain("ibv_wc_status_str", FunctionDescriptor.of(ADDRESS, JAVA_INT));

  private IbVerbs() {}

  /** Whether {@code libibverbs.so.1} could be loaded. */
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

  /** The bound symbols older libraries may lack; their absence is reported when they are called. */
  public static List<String> optionalSymbols() {
    return LIB.optionalSymbols();
  }

  // ---- devices and contexts

  /** {@code ibv_get_device_list}: the NULL-terminated array, its length in {@code count[0]}. */
  public static MemorySegment getDeviceList(int[] count) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment errno = Errno.captureState(a);
      MemorySegment num = a.allocate(JAVA_INT);
      MemorySegment list = (MemorySegment) handle(GET_DEVICE_LIST, "ibv_get_device_list").invokeExact(errno, num);
      if (list.equals(MemorySegment.NULL)) throw failure("ibv_get_device_list", Errno.read(errno));
      count[0] = num.get(JAVA_INT, 0);
      return list.reinterpret(ADDRESS.byteSize() * (count[0] + 1L));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  public static void freeDeviceList(MemorySegment list) {
    try {
      handle(FREE_DEVICE_LIST, "ibv_free_device_list").invokeExact(list);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  public static String getDeviceName(MemorySegment device) {
    try {
      MemorySegment s = (MemorySegment) handle(GET_DEVICE_NAME, "ibv_get_device_name").invokeExact(device);
      return s.equals(MemorySegment.NULL) ? "?" : s.reinterpret(Long.MAX_VALUE).getString(0);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  public static MemorySegment openDevice(MemorySegment device) {
    return pointerCall("ibv_open_device", OPEN_DEVICE, device).reinterpret(IBV_CONTEXT.byteSize());
  }

  public static void closeDevice(MemorySegment context) {
    intCall("ibv_close_device", CLOSE_DEVICE, context);
  }

  /** {@code ibv_query_device} into {@code attr} (an {@link VerbsLayouts#IBV_DEVICE_ATTR}). */
  public static void queryDevice(MemorySegment context, MemorySegment attr) {
    intCall("ibv_query_device", QUERY_DEVICE, context, attr);
  }

  /**
   * {@code ibv_query_port} as the header's inline wrapper does it: with an extended context whose
   * {@code verbs_context.query_port} is set and within {@code sz}, call that with the full struct size;
   * otherwise zero the struct and call the exported symbol, which fills the compat prefix.
   */
  public static void queryPort(MemorySegment context, int port, MemorySegment attr) {
    attr.fill((byte) 0);
    MemorySegment ext = VerbsInline.extendedOp(context, VCTX_QUERY_PORT);
    if (ext.equals(MemorySegment.NULL)) {
      intCall("ibv_query_port", QUERY_PORT, context, (byte) port, attr);
    } else {
      VerbsInline.queryPort(ext, context, port, attr);
    }
  }

  /** {@code ibv_query_gid} into {@code gid} (16 bytes). */
  public static void queryGid(MemorySegment context, int port, int index, MemorySegment gid) {
    intCall("ibv_query_gid", QUERY_GID, context, (byte) port, index, gid);
  }

  // ---- protection domains and memory regions

  public static MemorySegment allocPd(MemorySegment context) {
    return pointerCall("ibv_alloc_pd", ALLOC_PD, context).reinterpret(IBV_PD.byteSize());
  }

  public static void deallocPd(MemorySegment pd) {
    intCall("ibv_dealloc_pd", DEALLOC_PD, pd);
  }

  /**
   * {@code ibv_reg_mr}. In rdma-core 44 the name is a macro: with no flag of {@code IBV_ACCESS_OPTIONAL_RANGE}
   * it calls the exported {@code ibv_reg_mr}; otherwise {@code ibv_reg_mr_iova2} with the address as iova
   * (which masks optional flags the kernel lacks). We make the same choice at run time.
   */
  public static MemorySegment regMr(MemorySegment pd, long address, long length, int access) {
    MemorySegment addr = MemorySegment.ofAddress(address);
    MemorySegment mr = (access & VerbsConstants.IBV_ACCESS_OPTIONAL_RANGE) == 0
        ? pointerCall("ibv_reg_mr", REG_MR, pd, addr, length, access)
        : pointerCall("ibv_reg_mr_iova2", REG_MR_IOVA2, pd, addr, length, address, access);
    return mr.reinterpret(IBV_MR.byteSize());
  }

  /** {@code ibv_reg_dmabuf_mr}; a {@link NativeException} ({@code ENOSYS}) where the library lacks it. */
  public static MemorySegment regDmabufMr(MemorySegment pd, long offset, long length, long iova, int fd, int access) {
    if (REG_DMABUF_MR == null) {
      LIB.require();
      throw new NativeException(LIBRARY, Errno.ENOSYS, "ENOSYS", "ibv_reg_dmabuf_mr is not exported by "
          + LIB.loadedName() + " (dma-buf registration needs rdma-core 34 or newer)");
    }
    return pointerCall("ibv_reg_dmabuf_mr", REG_DMABUF_MR, pd, offset, length, iova, fd, access)
        .reinterpret(IBV_MR.byteSize());
  }

  public static void deregMr(MemorySegment mr) {
    intCall("ibv_dereg_mr", DEREG_MR, mr);
  }

  // ---- completion channels and queues (polling and notification requests are in VerbsInline)

  public static MemorySegment createCompChannel(MemorySegment context) {
    return pointerCall("ibv_create_comp_channel", CREATE_COMP_CHANNEL, context)
        .reinterpret(IBV_COMP_CHANNEL.byteSize());
  }

  public static void destroyCompChannel(MemorySegment channel) {
    intCall("ibv_destroy_comp_channel", DESTROY_COMP_CHANNEL, channel);
  }

  public static MemorySegment createCq(MemorySegment context, int cqe, MemorySegment cqContext,
      MemorySegment channel, int compVector) {
    return pointerCall("ibv_create_cq", CREATE_CQ, context, cqe, cqContext, channel, compVector)
        .reinterpret(IBV_CQ.byteSize());
  }

  public static void destroyCq(MemorySegment cq) {
    intCall("ibv_destroy_cq", DESTROY_CQ, cq);
  }

  /** {@code ibv_get_cq_event} (blocks on the channel's fd): the CQ that has an event. */
  public static MemorySegment getCqEvent(MemorySegment channel) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment cq = a.allocate(ADDRESS);
      MemorySegment cqContext = a.allocate(ADDRESS);
      intCall("ibv_get_cq_event", GET_CQ_EVENT, channel, cq, cqContext);
      return cq.get(ADDRESS, 0);
    }
  }

  /**
   * {@code ibv_get_cq_event} into caller-owned slots, allocating nothing and throwing nothing for a failed
   * read: 0 with the CQ's pointer in {@code cqSlot} (an {@code ADDRESS}) and its context in
   * {@code contextSlot}, or the errno (e.g. {@code EAGAIN} on a non-blocking channel with no event). For
   * waiters that poll the channel's descriptor themselves and take events on every wake-up.
   */
  public static int getCqEvent(MemorySegment channel, MemorySegment cqSlot, MemorySegment contextSlot,
      MemorySegment errnoState) {
    try {
      int rc = (int) handle(GET_CQ_EVENT, "ibv_get_cq_event").invokeExact(errnoState, channel, cqSlot, contextSlot);
      if (rc == 0) return 0;
      int errno = Errno.read(errnoState);
      return rc > 0 ? rc : errno != 0 ? errno : Errno.EIO;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  public static void ackCqEvents(MemorySegment cq, int events) {
    try {
      handle(ACK_CQ_EVENTS, "ibv_ack_cq_events").invokeExact(cq, events);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  // ---- queue pairs (posting is in VerbsInline)

  public static MemorySegment createQp(MemorySegment pd, MemorySegment initAttr) {
    return pointerCall("ibv_create_qp", CREATE_QP, pd, initAttr).reinterpret(IBV_QP.byteSize());
  }

  public static void destroyQp(MemorySegment qp) {
    intCall("ibv_destroy_qp", DESTROY_QP, qp);
  }

  /** {@code ibv_modify_qp}: {@code mask} ({@code IBV_QP_*}) says which fields of {@code attr} apply. */
  public static void modifyQp(MemorySegment qp, MemorySegment attr, int mask) {
    intCall("ibv_modify_qp", MODIFY_QP, qp, attr, mask);
  }

  public static void queryQp(MemorySegment qp, MemorySegment attr, int mask, MemorySegment initAttr) {
    intCall("ibv_query_qp", QUERY_QP, qp, attr, mask, initAttr);
  }

  // ---- async events and status strings

  /** {@code ibv_get_async_event} into {@code event} (blocks on the context's async fd). */
  public static void getAsyncEvent(MemorySegment context, MemorySegment event) {
    intCall("ibv_get_async_event", GET_ASYNC_EVENT, context, event);
  }

  public static void ackAsyncEvent(MemorySegment event) {
    try {
      handle(ACK_ASYNC_EVENT, "ibv_ack_async_event").invokeExact(event);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** {@code ibv_wc_status_str}: {@code "success"}, {@code "remote access error"}, ... */
  public static String wcStatusStr(int status) {
    try {
      MemorySegment s = (MemorySegment) handle(WC_STATUS_STR, "ibv_wc_status_str").invokeExact(status);
      return s.equals(MemorySegment.NULL) ? "status " + status : s.reinterpret(Long.MAX_VALUE).getString(0);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** The exception for a failed verb: function, errno value, its name and text. */
  public static NativeException failure(String function, int errno) {
    return LIB.failure(function, errno);
  }

  // ---- plumbing

  // Every exported function is bound with errno capture: verbs report failure as NULL or -1 with errno
  // set, or as a returned errno value, and which one varies by verb, so we can always name the cause.
  private static MethodHandle bind(String symbol, FunctionDescriptor fd) {
    return LIB.bind(symbol, fd);
  }

  private static MethodHandle bindOptional(String symbol, FunctionDescriptor fd) {
    return LIB.bindOptional(symbol, fd);
  }

  private static MethodHandle bindPlain(String symbol, FunctionDescriptor fd) {
    return LIB.bindPlain(symbol, fd);
  }

  private static MethodHandle handle(MethodHandle h, String symbol) {
    return LIB.handle(h, symbol);
  }

  private static MemorySegment pointerCall(String function, MethodHandle h, Object... args) {
    return LIB.pointerCall(function, h, args);
  }

  private static void intCall(String function, MethodHandle h, Object... args) {
    LIB.intCall(function, h, args);
  }

  static RuntimeException rethrow(Throwable t) {
    return ErrnoLibrary.rethrow(t);
  }
}
