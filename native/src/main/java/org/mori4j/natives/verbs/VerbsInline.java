package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.mori4j.natives.verbs.IbVerbs.rethrow;
import static org.mori4j.natives.verbs.VerbsLayouts.*;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import org.mori4j.natives.NativeException;

/**
 * The verbs that {@code <infiniband/verbs.h>} defines as static inline functions, so no library exports
 * them: {@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_poll_cq} and {@code ibv_req_notify_cq}
 * call {@code context->ops.<verb>}, and the extended verbs step back from {@code ibv_context} to its
 * enclosing {@code verbs_context} ({@code verbs_get_ctx_op}). We read the same function pointers, at offsets
 * derived from the ABI-checked layouts, and call them through address-taking downcall handles.
 */
public final class VerbsInline {
  private static final Linker LINKER = Linker.nativeLinker();

  // Function-pointer calls: the target address is the handle's first argument. The data-path ones are
  // short, never block and never call back into Java, which is what Linker.Option.critical is for: it
  // skips the thread-state transition on each post and poll.
  private static final Linker.Option CRITICAL = Linker.Option.critical(false);
  private static final MethodHandle POST_SEND_FN =
      LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), CRITICAL);
  private static final MethodHandle POST_RECV_FN = POST_SEND_FN;
  private static final MethodHandle POLL_CQ_FN =
      LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), CRITICAL);
  private static final MethodHandle REQ_NOTIFY_CQ_FN =
      LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
  private static final MethodHandle QUERY_PORT_EX_FN =
      LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS, JAVA_LONG));

  private VerbsInline() {}

  /**
   * A provider function from {@code context->ops} at {@code opsOffset} ({@code VerbsLayouts.CONTEXT_OPS_*}).
   * The table is filled when the device is opened and never changes, so owners read it once.
   */
  public static MemorySegment opsEntry(MemorySegment context, long opsOffset) {
    MemorySegment fn = context.reinterpret(IBV_CONTEXT.byteSize()).get(ADDRESS, opsOffset);
    if (fn.equals(MemorySegment.NULL)) {
      throw new NativeException(IbVerbs.LIBRARY, Errno.EOPNOTSUPP, "EOPNOTSUPP",
          "the verbs provider has no function at ibv_context.ops+" + opsOffset);
    }
    return fn;
  }

  /** Inline in the header: {@code qp->context->ops.post_send}; {@code fn} comes from {@link #opsEntry}. */
  public static int postSend(MemorySegment fn, MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
    try {
      return (int) POST_SEND_FN.invokeExact(fn, qp, wr, badWr);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** Inline in the header: {@code qp->context->ops.post_recv}; {@code fn} comes from {@link #opsEntry}. */
  public static int postRecv(MemorySegment fn, MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
    try {
      return (int) POST_RECV_FN.invokeExact(fn, qp, wr, badWr);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * {@code ibv_poll_cq}, inline in the header: calls the provider's {@code poll_cq} (from
   * {@link #opsEntry}, cached by the caller) and returns the number of completions written to {@code wc}.
   */
  public static int pollCq(MemorySegment pollFn, MemorySegment cq, int entries, MemorySegment wc) {
    try {
      int n = (int) POLL_CQ_FN.invokeExact(pollFn, cq, entries, wc);
      // A negative count is the provider's own error code, not an errno.
      if (n < 0) {
        throw new NativeException(IbVerbs.LIBRARY, n, "POLL_CQ_ERROR", "ibv_poll_cq failed: returned " + n);
      }
      return n;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** Inline in the header: {@code cq->context->ops.req_notify_cq(cq, solicited_only)}. */
  public static void reqNotifyCq(MemorySegment cq, boolean solicitedOnly) {
    try {
      MemorySegment fn = opsEntry(cq.get(ADDRESS, CQ_CONTEXT), CONTEXT_OPS_REQ_NOTIFY_CQ);
      int rc = (int) REQ_NOTIFY_CQ_FN.invokeExact(fn, cq, solicitedOnly ? 1 : 0);
      if (rc != 0) throw IbVerbs.failure("ibv_req_notify_cq", rc);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** {@code vctx->query_port(context, port_num, port_attr, sizeof(*port_attr))}. */
  static void queryPort(MemorySegment fn, MemorySegment context, int port, MemorySegment attr) {
    try {
      int rc = (int) QUERY_PORT_EX_FN.invokeExact(fn, context, (byte) port, attr, IBV_PORT_ATTR.byteSize());
      if (rc != 0) throw IbVerbs.failure("ibv_query_port", rc);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** The extended-context function at {@code vctxOffset}, or NULL, exactly as {@code verbs_get_ctx_op}. */
  static MemorySegment extendedOp(MemorySegment context, long vctxOffset) {
    MemorySegment ctx = context.reinterpret(IBV_CONTEXT.byteSize());
    if (ctx.get(ADDRESS, CONTEXT_ABI_COMPAT).address() != VerbsConstants.VERBS_ABI_IS_EXTENDED) {
      return MemorySegment.NULL;
    }
    MemorySegment vctx = MemorySegment.ofAddress(context.address() - VCTX_CONTEXT)
        .reinterpret(VERBS_CONTEXT.byteSize());
    if (vctx.get(CLayout.SIZE_T, VCTX_SZ) < VERBS_CONTEXT.byteSize() - vctxOffset) return MemorySegment.NULL;
    return vctx.get(ADDRESS, vctxOffset);
  }
}
