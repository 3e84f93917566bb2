package org.mori4j.io.gpuinit;

/**
 * How {@link RdmaDeviceContext#createEndpoint} sizes and places an endpoint (MORI's {@code RdmaEndpointConfig}):
 * {@code onGpu} puts the queues in pinned host memory that GPU {@code deviceId} writes directly (false: plain
 * native memory, for host-driven use and CPU tests); {@code maxSendWr} is the send queue depth, {@code maxCqe} the
 * completion queue depth (at least {@code maxSendWr + maxRecvWr}, so that every work request can complete without
 * the proxy waiting on the device), {@code maxRecvWr} the receive queue depth (0: the endpoint takes no SEND or
 * WRITE_WITH_IMM). Depths are powers of two, because the rings are indexed by masking.
 */
public record RdmaEndpointConfig(boolean onGpu, int deviceId, int maxSendWr, int maxCqe, int maxRecvWr) {
  public static final int DEFAULT_MAX_SEND_WR = 1024;
  public static final int DEFAULT_MAX_CQE = 2048;
  public static final int DEFAULT_MAX_RECV_WR = 256;
  /** Largest depth of any ring: keeps one endpoint block well under a gigabyte. */
  public static final int MAX_DEPTH = 1 << 20;

  public RdmaEndpointConfig {
    if (deviceId < 0 && onGpu) throw new IllegalArgumentException("deviceId must be >= 0 for an endpoint on a GPU: " + deviceId);
    if (!pow2(maxSendWr)) throw new IllegalArgumentException("maxSendWr must be a power of two in 1.." + MAX_DEPTH + ": " + maxSendWr);
    if (!pow2(maxCqe)) throw new IllegalArgumentException("maxCqe must be a power of two in 1.." + MAX_DEPTH + ": " + maxCqe);
    if (maxRecvWr != 0 && !pow2(maxRecvWr))
      throw new IllegalArgumentException("maxRecvWr must be 0 or a power of two in 1.." + MAX_DEPTH + ": " + maxRecvWr);
    if ((long) maxCqe < (long) maxSendWr + maxRecvWr)
      throw new IllegalArgumentException("maxCqe (" + maxCqe + ") must be at least maxSendWr + maxRecvWr (" + maxSendWr + " + " + maxRecvWr + ")");
  }

  /** Host-memory queues with the default depths. */
  public static RdmaEndpointConfig host() {
    return new RdmaEndpointConfig(false, -1, DEFAULT_MAX_SEND_WR, DEFAULT_MAX_CQE, DEFAULT_MAX_RECV_WR);
  }

  /** Queues GPU {@code deviceId} writes directly, with the default depths. */
  public static RdmaEndpointConfig gpu(int deviceId) {
    return new RdmaEndpointConfig(true, deviceId, DEFAULT_MAX_SEND_WR, DEFAULT_MAX_CQE, DEFAULT_MAX_RECV_WR);
  }

  public RdmaEndpointConfig withDepths(int sendWr, int cqe, int recvWr) {
    return new RdmaEndpointConfig(onGpu, deviceId, sendWr, cqe, recvWr);
  }

  private static boolean pow2(int v) {
    return v > 0 && v <= MAX_DEPTH && Integer.bitCount(v) == 1;
  }
}
