package org.mori4j.io.gpuinit;

import com.typesafe.config.Config;
import java.util.concurrent.TimeUnit;

/**
 * {@code mori4j.gpu-initiated} read once per context: the proxy's duty cycle (spin after activity, then park, longer while idle), the
 * default queue depths, the device-side wait timeout written into every endpoint, the receiver-not-ready retry
 * time and how long a peer may leave a SEND, write-with-immediate notice or atomic unanswered.
 */
record GpuInitSettings(long spinNanos, long parkNanos, long parkMaxNanos, long maxRunNanos, int defaultMaxSendWr, int defaultMaxCqe, int defaultMaxRecvWr,
                       long waitTimeoutNanos, long rnrRetryNanos, long peerTimeoutNanos, long probeAfterNanos, long probeTimeoutNanos,
                       String gpuRuntime) {

  static GpuInitSettings from(Config root) {
    Config c = root.getConfig("mori4j.gpu-initiated");
    GpuInitSettings s = new GpuInitSettings(nanos(c, "proxy-spin"), nanos(c, "proxy-park"), nanos(c, "proxy-park-max"), nanos(c, "proxy-max-run"),
        c.getInt("max-send-wr"), c.getInt("max-cqe"), c.getInt("max-recv-wr"), nanos(c, "wait-timeout"), nanos(c, "rnr-retry-time"),
        nanos(c, "peer-timeout"), nanos(c, "liveness-probe-after"), nanos(c, "liveness-probe-timeout"), root.getString("mori4j.gpu.runtime"));
    if (s.parkNanos <= 0) throw new IllegalArgumentException("mori4j.gpu-initiated.proxy-park must be positive: " + c.getValue("proxy-park").render());
    if (s.parkMaxNanos < s.parkNanos)
      throw new IllegalArgumentException("mori4j.gpu-initiated.proxy-park-max must be at least proxy-park: " + c.getValue("proxy-park-max").render());
    if (s.maxRunNanos <= 0) throw new IllegalArgumentException("mori4j.gpu-initiated.proxy-max-run must be positive");
    if (s.waitTimeoutNanos <= 0) throw new IllegalArgumentException("mori4j.gpu-initiated.wait-timeout must be positive: " + c.getValue("wait-timeout").render());
    if (s.peerTimeoutNanos <= 0 || s.rnrRetryNanos < 0)
      throw new IllegalArgumentException("mori4j.gpu-initiated.peer-timeout must be positive and rnr-retry-time not negative");
    if (s.probeAfterNanos <= 0 || s.probeTimeoutNanos <= 0)
      throw new IllegalArgumentException("mori4j.gpu-initiated.liveness-probe-after and liveness-probe-timeout must be positive");
    new RdmaEndpointConfig(false, -1, s.defaultMaxSendWr, s.defaultMaxCqe, s.defaultMaxRecvWr);
    // the proxy must give up on a lost peer before a kernel waiting on it traps
    long hostGivesUp = Math.max(s.peerTimeoutNanos + s.rnrRetryNanos, s.probeAfterNanos + s.probeTimeoutNanos);
    if (hostGivesUp >= s.waitTimeoutNanos)
      org.slf4j.LoggerFactory.getLogger(GpuInitSettings.class).warn("mori4j.gpu-initiated: wait-timeout ({} ms) is not longer than what the proxy "
          + "may wait on a lost peer ({} ms: peer-timeout + rnr-retry-time, or the liveness probe): a kernel can trap before it sees RETRY_EXC_ERR",
          s.waitTimeoutNanos / 1_000_000, hostGivesUp / 1_000_000);
    return s;
  }

  private static long nanos(Config c, String path) {
    return c.getDuration(path, TimeUnit.NANOSECONDS);
  }

  GpuInitSettings withProbe(long after, long timeout) {
    return new GpuInitSettings(spinNanos, parkNanos, parkMaxNanos, maxRunNanos, defaultMaxSendWr, defaultMaxCqe, defaultMaxRecvWr, waitTimeoutNanos,
        rnrRetryNanos, peerTimeoutNanos, after, timeout, gpuRuntime);
  }

  GpuInitSettings withTimeouts(long rnr, long peer) {
    return new GpuInitSettings(spinNanos, parkNanos, parkMaxNanos, maxRunNanos, defaultMaxSendWr, defaultMaxCqe, defaultMaxRecvWr, waitTimeoutNanos, rnr,
        peer, probeAfterNanos, probeTimeoutNanos, gpuRuntime);
  }
}
