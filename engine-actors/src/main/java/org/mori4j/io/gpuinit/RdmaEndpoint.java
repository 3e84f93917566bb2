package org.mori4j.io.gpuinit;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One GPU-initiated endpoint (MORI's {@code RdmaEndpoint}, a queue pair): its memory block (control block, send,
 * completion and receive rings, atomic result cells; layout in {@link GpuQueueLayout}) and its queue pair number.
 * A kernel receives {@link #address()} as its {@code MoriRdmaEndpoint*}. Created by
 * {@link RdmaDeviceContext#createEndpoint}, connected by {@link RdmaDeviceContext#connectEndpoint}, executed by the
 * context's host proxy. {@link #errors()} lists the error completions the proxy wrote (the first 256), each also
 * counted in the control block; the first one is logged at WARN.
 */
public final class RdmaEndpoint implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RdmaEndpoint.class);
  private static final int MAX_ERRORS_KEPT = 256;

  /** Endpoint states as the control block's {@code state} field holds them. */
  public enum State { RESET, RTS, ERROR, CLOSED }

  /** One error completion: the work request's id, its ibv_wc_status and why. */
  public record ErrorCompletion(long wrId, int status, String message) {
    @Override
    public String toString() {
      return "wrId " + wrId + ": " + GpuQueueLayout.statusName(status) + " (" + status + "): " + message;
    }
  }

  final RdmaDeviceContext ctx;
  final EndpointBlock block;
  final RdmaEndpointConfig config;
  final RdmaMemoryRegion internal;
  final EndpointRunner runner;
  private final int qpn;
  private final List<ErrorCompletion> errors = new ArrayList<>();
  private int errorTotal;
  private volatile boolean closed;

  RdmaEndpoint(RdmaDeviceContext ctx, int qpn, RdmaEndpointConfig config, EndpointBlock block, RdmaMemoryRegion internal, Proxy proxy) {
    this.ctx = ctx;
    this.qpn = qpn;
    this.config = config;
    this.block = block;
    this.internal = internal;
    this.runner = new EndpointRunner(this, proxy);
  }

  /** Queue pair number: non-zero, unique within its context. */
  public int qpn() {
    return qpn;
  }

  public RdmaEndpointConfig config() {
    return config;
  }

  /** Address of the control block: the kernel's {@code MoriRdmaEndpoint*} (GPU-visible when {@code onGpu}). */
  public long address() {
    return block.address();
  }

  /** Bytes of the whole endpoint block. */
  public long blockBytes() {
    return block.bytes();
  }

  /** The region of the atomic result cells ({@code internalLkey} in the control block). */
  public RdmaMemoryRegion internalRegion() {
    return internal;
  }

  /** What a peer passes to {@link RdmaDeviceContext#connectEndpoint}. */
  public EndpointHandle handle() {
    return new EndpointHandle(ctx.engine.key(), ctx.incarnation, ctx.path, qpn);
  }

  public State state() {
    if (closed) return State.CLOSED;
    return switch (block.getIntAcquire(GpuQueueLayout.CTRL_STATE)) {
      case GpuQueueLayout.STATE_RTS -> State.RTS;
      case GpuQueueLayout.STATE_ERROR -> State.ERROR;
      default -> State.RESET;
    };
  }

  /** Error completions seen so far (the first 256; the control block's errorCount counts all). */
  public List<ErrorCompletion> errors() {
    synchronized (errors) {
      return Collections.unmodifiableList(new ArrayList<>(errors));
    }
  }

  /** Error completions in total, as the control block counts them (readable after close too). */
  public int errorCount() {
    synchronized (errors) {
      return errorTotal;
    }
  }

  void addError(long wrId, int status, String message) {
    boolean first;
    synchronized (errors) {
      errorTotal++;
      first = errors.isEmpty();
      if (errors.size() < MAX_ERRORS_KEPT) errors.add(new ErrorCompletion(wrId, status, message));
    }
    if (first)
      LOG.warn("GPU-initiated endpoint qpn {} of context {} (host proxy): error completion wrId {} {}: {}; later work requests are flushed",
          qpn, ctx.name, wrId, GpuQueueLayout.statusName(status), message);
  }

  boolean isClosed() {
    return closed;
  }

  /** Stops the proxy's work on this endpoint, cancels what it has in flight and frees the block. */
  @Override
  public void close() {
    if (closed) return;
    closed = true;
    ctx.closeEndpoint(this);
  }

  @Override
  public String toString() {
    return "RdmaEndpoint[qpn " + qpn + ", " + (config.onGpu() ? "GPU " + config.deviceId() : "host") + ", sq " + config.maxSendWr()
        + ", cq " + config.maxCqe() + ", rq " + config.maxRecvWr() + ", at 0x" + Long.toHexString(address()) + "]";
  }
}
