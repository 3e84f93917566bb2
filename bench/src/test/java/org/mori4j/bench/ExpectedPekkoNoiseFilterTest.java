package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.spi.FilterReply;
import org.junit.jupiter.api.Test;

/** Only the two known lines are dropped; look-alikes from other loggers or with other causes pass. */
class ExpectedPekkoNoiseFilterTest {
  private static final String PROVIDER = "org.apache.pekko.remote.RemoteActorRefProvider";
  private static final String MATERIALIZER = "org.apache.pekko.stream.Materializer";
  private static final String NOT_IN_USE = "Pekko Cluster not in use - Using Pekko Cluster is recommended if you need remote watch and deploy.";
  private static final String ABORTED = "[outbound connection to [pekko://mori4j@127.0.0.1:42515], control stream] Upstream failed, cause: "
      + "StreamTcpException: The connection has been aborted";

  private static FilterReply decide(String logger, String message) {
    LoggerContext ctx = new LoggerContext();
    LoggingEvent e = new LoggingEvent(logger, ctx.getLogger(logger), Level.WARN, message, null, null);
    return new ExpectedPekkoNoiseFilter().decide(e);
  }

  @Test
  void dropsTheTwoExpectedWarnings() {
    assertEquals(FilterReply.DENY, decide(PROVIDER, NOT_IN_USE));
    assertEquals(FilterReply.DENY, decide(MATERIALIZER, ABORTED));
  }

  @Test
  void letsEverythingElseThrough() {
    assertEquals(FilterReply.NEUTRAL, decide("org.mori4j.io.IoEngine", NOT_IN_USE));
    assertEquals(FilterReply.NEUTRAL, decide(MATERIALIZER, ABORTED.replace("has been aborted", "reset by peer")));
    assertEquals(FilterReply.NEUTRAL, decide(MATERIALIZER, "[inbound connection] Upstream failed, cause: StreamTcpException: The connection has been aborted"));
    assertEquals(FilterReply.NEUTRAL, decide(PROVIDER, "Pekko Cluster not in use - enabling unsafe features anyway"));
    assertEquals(FilterReply.NEUTRAL, decide(PROVIDER, null));
  }
}
