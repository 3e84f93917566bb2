package org.mori4j.bench;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;

/**
 * Drops the two warnings Pekko prints on every run of this program although nothing is wrong, so that a
 * warning on the console means something: that remoting runs without Pekko Cluster (an engine made by
 * {@code IoEngine.create} uses remoting for discovery and handshakes only, and Pekko has no setting that
 * silences this), and that an Artery outbound stream was aborted, which is how the system's own shutdown
 * ends its connections. Everything else, including other Materializer warnings, passes.
 */
public final class ExpectedPekkoNoiseFilter extends Filter<ILoggingEvent> {
  @Override
  public FilterReply decide(ILoggingEvent e) {
    String logger = e.getLoggerName();
    String msg = e.getFormattedMessage();
    if (msg == null) return FilterReply.NEUTRAL;
    if (logger.equals("org.apache.pekko.remote.RemoteActorRefProvider") && msg.startsWith("Pekko Cluster not in use - Using Pekko Cluster is recommended"))
      return FilterReply.DENY;
    if (logger.equals("org.apache.pekko.stream.Materializer") && msg.startsWith("[outbound connection to ")
        && msg.endsWith("Upstream failed, cause: StreamTcpException: The connection has been aborted"))
      return FilterReply.DENY;
    return FilterReply.NEUTRAL;
  }
}
