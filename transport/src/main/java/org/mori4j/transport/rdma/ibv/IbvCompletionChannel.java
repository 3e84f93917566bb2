package org.mori4j.transport.rdma.ibv;

import java.lang.foreign.MemorySegment;
import java.util.function.BooleanSupplier;
import org.mori4j.natives.NativeException;
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
 */
final class IbvCompletionChannel implements CompletionChannel {
  private final VerbsCompletionChannel channel;
  private final EventWait wait;
  // Bound once so that await allocates no lambda per call.
  private final BooleanSupplier takeEvent = this::takeEvent;

  private IbvCompletionChannel(VerbsCompletionChannel channel, EventWait wait) {
    this.channel = channel;
    this.wait = wait;
  }

  static IbvCompletionChannel create(VerbsContext context) {
    VerbsCompletionChannel channel = context.createCompletionChannel();
    try {
      LibcFds.setNonBlocking(channel.fd());
      return new IbvCompletionChannel(channel, new EventWait(channel.fd()));
    } catch (RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  VerbsCompletionChannel verbs() {
    return channel;
  }

  @Override
  public int await(long maxNanos) {
    return wait.await(maxNanos, takeEvent);
  }

  @Override
  public void wakeup() {
    wait.wakeup();
  }

  private boolean takeEvent() {
    MemorySegment cq;
    try {
      cq = channel.awaitEvent();
    } catch (NativeException e) {
      // The descriptor is non-blocking: EAGAIN means the event ppoll saw is gone (nothing to take).
      if (e.code() == Errno.EAGAIN) return false;
      throw e;
    }
    IbVerbs.ackCqEvents(cq, 1);
    return true;
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
}
