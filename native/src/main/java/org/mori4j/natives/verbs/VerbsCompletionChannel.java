package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;

/**
 * A completion event channel ({@code struct ibv_comp_channel}): a file descriptor that becomes readable
 * when a CQ armed with {@link VerbsCompletionQueue#requestNotify} gets a completion, so a poller can sleep
 * instead of spinning. Destroying it fails ({@code EBUSY}) while a CQ still uses it.
 */
public final class VerbsCompletionChannel extends NativeResource {
  VerbsCompletionChannel(MemorySegment channel) {
    super("ibv completion channel", channel, VerbsLayouts.IBV_COMP_CHANNEL.byteSize());
  }

  /** The channel's file descriptor, for poll/epoll. */
  public int fd() {
    return handle().get(JAVA_INT, VerbsLayouts.COMP_CHANNEL_FD);
  }

  /**
   * Blocks in {@code ibv_get_cq_event} until an armed CQ has an event; returns that CQ's pointer (compare
   * with {@link VerbsCompletionQueue#handle()}). Each event must be acknowledged with
   * {@link VerbsCompletionQueue#acknowledgeEvents}.
   */
  public MemorySegment awaitEvent() {
    return IbVerbs.getCqEvent(handle());
  }

  @Override
  protected void release(MemorySegment handle) {
    IbVerbs.destroyCompChannel(handle);
  }
}
