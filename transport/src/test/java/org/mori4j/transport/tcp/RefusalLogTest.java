package org.mori4j.transport.tcp;

import static org.junit.jupiter.api.Assertions.*;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The target's log of closed connections: one line per reason per interval, the next one counting what it left out. */
class RefusalLogTest {
  @Test
  void onceAReasonPerIntervalWithTheCountOfTheOmitted() {
    Logger logger = (Logger) LoggerFactory.getLogger("refusal-log-test");
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    AtomicLong now = new AtomicLong(1_000);
    RefusalLog log = new RefusalLog(logger, 100, now::get);
    assertTrue(log.closed("malformed frame", "peer-a", "magic 0x0"));
    assertTrue(log.closed("refused hello", "peer-b", "wrong token"), "another reason has its own interval");
    for (int i = 0; i < 5; i++) assertFalse(log.closed("malformed frame", "peer-c", "magic 0x1"));
    now.addAndGet(99);
    assertFalse(log.closed("malformed frame", "peer-d", "magic 0x2"));
    now.addAndGet(1);
    assertTrue(log.closed("malformed frame", "peer-e", "magic 0x3"));
    now.addAndGet(100);
    assertTrue(log.closed("malformed frame", "peer-f", "magic 0x4"));
    assertEquals(4, lines.list.size());
    assertEquals("TCP target closed a data connection from peer-a: malformed frame (magic 0x0)", lines.list.get(0).getFormattedMessage());
    assertEquals("TCP target closed a data connection from peer-e: malformed frame (magic 0x3); 6 more closed for this reason"
        + " since the last report", lines.list.get(2).getFormattedMessage());
    assertFalse(lines.list.get(3).getFormattedMessage().contains("more closed"), "the count starts again after each report");
    assertThrows(IllegalArgumentException.class, () -> new RefusalLog(logger, 0, now::get));
    logger.detachAppender(lines);
  }
}
