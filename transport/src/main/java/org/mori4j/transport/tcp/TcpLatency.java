package org.mori4j.transport.tcp;

/**
 * How the TCP backend trades CPU for latency on small transfers.
 *
 * <p>{@code callerDrive}: a small request (a READ of at most 16 KiB, or a WRITE whose payload rides inline) to a
 * connection that is idle (nothing queued, in flight or buffered, no TLS) is written by the submitting thread itself,
 * and a caller that then waits reads the response from the socket for up to {@code driveSpinNanos} before it hands
 * the op back to the I/O thread and parks. {@code serveSpinNanos}: once an I/O loop has served two of a peer's requests
 * less than this apart, it polls its sockets for this long after each before it sleeps in {@code select}, so the next
 * request of a ping-pong finds it awake (a lone request costs no polling). Both waits yield the core between polls
 * ({@code sched_yield}) rather than spin on it: where runnable threads outnumber free cores (the 2-core VM) the thread
 * that must answer may be waiting for this very core.
 *
 * @param callerDrive    whether idle connections take the caller-driven path
 * @param driveSpinNanos longest a waiting caller reads the socket itself (0: never; the request still leaves from the caller)
 * @param serveSpinNanos how long a loop keeps polling after serving a request (0: sleep at once)
 */
public record TcpLatency(boolean callerDrive, long driveSpinNanos, long serveSpinNanos) {
  /** Everything off: every request goes through the I/O thread, which sleeps as soon as it is idle. */
  public static final TcpLatency OFF = new TcpLatency(false, 0, 0);

  public TcpLatency {
    if (driveSpinNanos < 0) throw new IllegalArgumentException("driveSpinNanos must be >= 0: " + driveSpinNanos);
    if (serveSpinNanos < 0) throw new IllegalArgumentException("serveSpinNanos must be >= 0: " + serveSpinNanos);
  }
}
