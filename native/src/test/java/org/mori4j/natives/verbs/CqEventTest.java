package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.mori4j.natives.verbs.CLayout.offset;
import static org.mori4j.natives.verbs.VerbsLayouts.IBV_COMP_CHANNEL;
import static org.mori4j.natives.verbs.VerbsLayouts.IBV_CQ;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The allocation-free {@code ibv_get_cq_event} and {@code ibv_ack_cq_events} in the real libibverbs without a
 * device, on hand-built structs: a {@code ibv_comp_channel} whose descriptor is an empty non-blocking
 * eventfd gives {@code EAGAIN} as the errno (not an exception), a bad descriptor its own errno, and
 * acknowledging adds to a hand-built {@code ibv_cq}'s {@code comp_events_completed} (its zeroed mutex and
 * condition variable are glibc's static initializers). Taking a real event needs a device: after the read,
 * libibverbs calls the CQ's provider through private tables no hand-built struct can stand in for.
 */
class CqEventTest {

  @Test
  void anEmptyNonBlockingChannelGivesEagainAndABadOneItsErrno() {
    Assumptions.assumeTrue(IbVerbs.available(), IbVerbs.absence());
    int fd = LibcFds.eventfd(0, LibcFds.EFD_NONBLOCK | LibcFds.EFD_CLOEXEC);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment channel = a.allocate(IBV_COMP_CHANNEL);
      channel.set(JAVA_INT, offset(IBV_COMP_CHANNEL, "fd"), fd);
      MemorySegment cqSlot = a.allocate(ADDRESS);
      MemorySegment contextSlot = a.allocate(ADDRESS);
      MemorySegment errno = a.allocate(Linker.Option.captureStateLayout());
      cqSlot.set(ADDRESS, 0, MemorySegment.ofAddress(0x5EED));

      assertEquals(Errno.EAGAIN, IbVerbs.getCqEvent(channel, cqSlot, contextSlot, errno));
      assertEquals(0x5EED, cqSlot.get(ADDRESS, 0).address(), "a failed read leaves the slot alone");

      channel.set(JAVA_INT, offset(IBV_COMP_CHANNEL, "fd"), -1);
      assertEquals(9, IbVerbs.getCqEvent(channel, cqSlot, contextSlot, errno), "EBADF");
    } finally {
      LibcFds.close(fd);
    }
  }

  @Test
  void acknowledgingCountsTheEventsOnTheCq() {
    Assumptions.assumeTrue(IbVerbs.available(), IbVerbs.absence());
    try (Arena a = Arena.ofConfined()) {
      MemorySegment cq = a.allocate(IBV_CQ);
      IbVerbs.ackCqEvents(cq, 1);
      IbVerbs.ackCqEvents(cq, 2);
      assertEquals(3, cq.get(JAVA_INT, offset(IBV_CQ, "comp_events_completed")));
    }
  }
}
