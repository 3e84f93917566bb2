package org.mori4j.transport.rdma.ibv;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.VerbsLayouts.IBV_COMP_CHANNEL;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.mori4j.natives.NativeException;
import org.mori4j.natives.verbs.IbVerbs;
import org.mori4j.natives.verbs.LibcFds;

/**
 * How the ibverbs channel takes events, through the real {@code ibv_get_cq_event} on a hand-built
 * {@code ibv_comp_channel} (no device): an empty non-blocking descriptor is "no event" (false, no exception),
 * any other failure is thrown naming the verb and errno. Taking a real event needs a device (libibverbs then
 * calls into the CQ's provider).
 */
class CqEventsTest {

  @Test
  void anEmptyChannelIsNoEventAndABrokenOneThrows() {
    Assumptions.assumeTrue(IbVerbs.available(), IbVerbs.absence());
    int fd = LibcFds.eventfd(0, LibcFds.EFD_NONBLOCK | LibcFds.EFD_CLOEXEC);
    EventWait wait = new EventWait(fd);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment channel = a.allocate(IBV_COMP_CHANNEL);
      channel.set(JAVA_INT, offset(IBV_COMP_CHANNEL, "fd"), fd);
      IbvCompletionChannel.CqEvents events = new IbvCompletionChannel.CqEvents(channel, wait);
      assertFalse(events.getAsBoolean());
      assertEquals(0, wait.await(5_000_000L, events), "nothing readable: a timeout, no event");

      channel.set(JAVA_INT, offset(IBV_COMP_CHANNEL, "fd"), -1);
      NativeException e = assertThrows(NativeException.class, events::getAsBoolean);
      assertEquals("ibv_get_cq_event failed: errno 9 (Bad file descriptor)", e.getMessage());
      assertEquals(9, e.code());
    } finally {
      wait.close();
      LibcFds.close(fd);
    }
  }
}
