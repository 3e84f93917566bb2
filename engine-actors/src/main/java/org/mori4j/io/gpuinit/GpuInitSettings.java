package org.mori4j.io.gpuinit;

import com.typesafe.config.Config;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.StatusCode;
import org.mori4j.io.internal.SettingReads;
import org.mori4j.io.internal.SettingReads.Section;

/**
 * {@code mori4j.gpu-initiated} read once per context: the proxy's duty cycle (spin after activity, then park, longer while idle), the
 * default queue depths, the device-side wait timeout written into every endpoint, the receiver-not-ready retry
 * time and how long a peer may leave a SEND, write-with-immediate notice or atomic unanswered. Read when a context
 * opens, not when the engine starts (an engine that never opens one is not refused for them): a refused value fails
 * {@link RdmaDeviceContext#open} with {@code ERR_INVALID_ARGS} in the message form of {@link SettingReads}, as the KV
 * layer's settings fail {@code KvCache.create}.
 */
record GpuInitSettings(long spinNanos, long parkNanos, long parkMaxNanos, long maxRunNanos, int defaultMaxSendWr, int defaultMaxCqe, int defaultMaxRecvWr,
                       long waitTimeoutNanos, long rnrRetryNanos, long peerTimeoutNanos, long probeAfterNanos, long probeTimeoutNanos,
                       String gpuRuntime) {

  /** The settings of {@code engine}'s configuration; a refused one is {@code ERR_INVALID_ARGS}, the refusal its cause. */
  static GpuInitSettings of(IoEngine engine) {
    try {
      return from(engine.actorSystem().settings().config());
    } catch (SettingReads.Refused e) {
      throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, e.getMessage(), e);
    }
  }

  /** The settings of {@code root} (a full configuration); a refused one is a {@link SettingReads.Refused} naming it. */
  static GpuInitSettings from(Config root) {
    Section c = SettingReads.section(root, "mori4j.gpu-initiated");
    long spin = c.nanosNotNegative("proxy-spin");
    long park = c.positiveDuration("proxy-park").toNanos();
    long parkMax = c.getDuration("proxy-park-max").toNanos();
    if (parkMax < park) throw c.refused("proxy-park-max", "must be at least proxy-park (" + c.config().getValue("proxy-park").unwrapped() + ")");
    long maxRun = c.positiveDuration("proxy-max-run").toNanos();
    int sendWr = depth(c, "max-send-wr", 1);
    int cqe = depth(c, "max-cqe", 1);
    int recvWr = depth(c, "max-recv-wr", 0);
    if ((long) cqe < (long) sendWr + recvWr)
      throw c.refused("max-cqe", "must be at least max-send-wr + max-recv-wr (" + sendWr + " + " + recvWr + "): every work request must be able to complete");
    long waitTimeout = c.positiveDuration("wait-timeout").toNanos();
    long rnr = c.nanosNotNegative("rnr-retry-time");
    long peer = c.positiveDuration("peer-timeout").toNanos();
    long probeAfter = c.positiveDuration("liveness-probe-after").toNanos();
    long probeTimeout = c.positiveDuration("liveness-probe-timeout").toNanos();
    // mori4j.gpu.runtime was checked when the engine started (EngineSettings), from this same configuration
    GpuInitSettings s = new GpuInitSettings(spin, park, parkMax, maxRun, sendWr, cqe, recvWr, waitTimeout, rnr, peer, probeAfter, probeTimeout,
        SettingReads.section(root, "mori4j.gpu").getString("runtime"));
    // the proxy must give up on a lost peer before a kernel waiting on it traps; the sums saturate, as the config does
    // a duration past Long.MAX_VALUE ns
    long hostGivesUp = Math.max(saturatedSum(peer, rnr), saturatedSum(probeAfter, probeTimeout));
    if (hostGivesUp >= waitTimeout)
      org.slf4j.LoggerFactory.getLogger(GpuInitSettings.class).warn("mori4j.gpu-initiated: wait-timeout ({} ms) is not longer than what the proxy "
          + "may wait on a lost peer ({} ms: peer-timeout + rnr-retry-time, or the liveness probe): a kernel can trap before it sees RETRY_EXC_ERR",
          waitTimeout / 1_000_000, hostGivesUp / 1_000_000);
    return s;
  }

  /** A ring depth: a power of two up to {@link RdmaEndpointConfig#MAX_DEPTH} (the rings are indexed by masking), or 0 where {@code min} is 0. */
  private static int depth(Section c, String key, int min) {
    int v = c.getInt(key);
    if (v == 0 && min == 0) return 0;
    if (v < 1 || v > RdmaEndpointConfig.MAX_DEPTH || Integer.bitCount(v) != 1)
      throw c.refused(key, "must be " + (min == 0 ? "0 or " : "") + "a power of two in 1.." + RdmaEndpointConfig.MAX_DEPTH);
    return v;
  }

  private static long saturatedSum(long a, long b) {
    long s = a + b;
    return ((a ^ s) & (b ^ s)) < 0 ? Long.MAX_VALUE : s;
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
