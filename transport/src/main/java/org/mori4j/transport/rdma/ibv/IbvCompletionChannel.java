package org.mori4j.transport.rdma.ibv;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.util.function.BooleanSupplier;
import org.mori4j.natives.verbs.Errno;
import org.mori4j.natives.verbs.IbVerbs;
import org.mori4j.natives.verbs.LibcFds;
import org.mori4j.natives.verbs.VerbsCompletionChannel;
import org.mori4j.natives.verbs.VerbsContext;
import org.mori4j.transport.rdma.verbs.CompletionChannel;

/**
 * A completion channel ({@code ibv_comp_channel}, owned) for the EVENT poll mode. Its descriptor is made
 * non-blocking ({@code fcntl O_NONBLOCK}) so that {@code ibv_get_cq_event} can never block past a timeout;
 * {@link #await} sleeps in {@code ppoll} on that descriptor and a wake-up eventfd ({@link EventWait}), then
 * takes each pending event with {@code ibv_get_cq_event} and acknowledges it at once with
 * {@code ibv_ack_cq_events(cq, 1)}: an unacknowledged event would make {@code ibv_destroy_cq} wait forever.
 * Waiting and taking events allocate nothing; a {@link #wakeup()} that races {@link #close()} does nothing.
 */
final class IbvCompletionChannel implements CompletionChannel {
  private final VerbsCompletionChannel channel;
  private final EventWait wait;
  private final CqEvents events;

  private IbvCompletionChannel(VerbsCompletionChannel channel, EventWait wait) {
    this.channel = channel;
    this.wait = wait;
    this.events = new CqEvents(channel.handle(), wait);
  }

  static IbvCompletionChannel create(VerbsContext context) {
    VerbsCompletionChannel channel = context.createCompletionChannel();
    EventWait wait = null;
    try {
      LibcFds.setNonBlocking(channel.fd());
      wait = new EventWait(channel.fd());
      return new IbvCompletionChannel(channel, wait);
    } catch (RuntimeException e) {
      if (wait != null) wait.close();
      channel.close();
      throw e;
    }
  }

  VerbsCompletionChannel verbs() {
    return channel;
  }

  @Override
  public int await(long maxNanos) {
    return wait.await(maxNanos, events);
  }

  @Override
  public void wakeup() {
    wait.wakeup();
  }

  /** Closes the wake-up side, then destroys the channel (which fails, EBUSY, while a CQ still uses it). */
  @Override
  public void close() {
    wait.close();
    channel.close();
  }

  @Override
  public String toString() {
    return "ibverbs completion channel " + channel;
  }

  /**
   * Takes one event from a channel whose descriptor is non-blocking: {@code ibv_get_cq_event} into slots
   * allocated once from the wait's arena, then {@code ibv_ack_cq_events(cq, 1)}. False when there was none
   * ({@code EAGAIN}: the event {@code ppoll} saw is gone); any other errno is thrown. Separate from the
   * channel so that it runs in tests on a hand-built {@code ibv_comp_channel} over an eventfd.
   */
  static final class CqEvents implements BooleanSupplier {
    private final MemorySegment channel;
    private final MemorySegment cqSlot;
    private final MemorySegment contextSlot;
    private final MemorySegment errno;

    CqEvents(MemorySegment channel, EventWait scratchOwner) {
      this.channel = channel;
      this.cqSlot = scratchOwner.allocate(ADDRESS);
      this.contextSlot = scratchOwner.allocate(ADDRESS);
      this.errno = scratchOwner.allocate(Linker.Option.captureStateLayout());
    }

    @Override
    public boolean getAsBoolean() {
      int rc = IbVerbs.getCqEvent(channel, cqSlot, contextSlot, errno);
      if (rc == Errno.EAGAIN) return false;
      if (rc != 0) throw IbVerbs.failure("ibv_get_cq_event", rc);
      IbVerbs.ackCqEvents(cqSlot.get(ADDRESS, 0), 1);
      return true;
    }
  }
}
