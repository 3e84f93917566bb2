package org.mori4j.natives.verbs;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;

/**
 * A completion queue ({@code struct ibv_cq}). {@link #poll} drains completions into a reusable
 * {@link WorkCompletions} through the provider's {@code poll_cq} (read once from the context's ops table,
 * as the header's inline {@code ibv_poll_cq} reads it on every call); {@link #requestNotify} arms it for
 * one event on its completion channel.
 */
public final class VerbsCompletionQueue extends NativeResource {
  private final MemorySegment pollFn;

  VerbsCompletionQueue(MemorySegment cq) {
    super("ibv completion queue", cq, VerbsLayouts.IBV_CQ.byteSize());
    this.pollFn = VerbsInline.opsEntry(cq.get(ADDRESS, VerbsLayouts.CQ_CONTEXT), VerbsLayouts.CONTEXT_OPS_POLL_CQ);
  }

  /** The number of entries the provider actually gave the CQ (at least what was asked). */
  public int capacity() {
    return handle().get(JAVA_INT, VerbsLayouts.CQ_CQE);
  }

  /** Polls up to {@code into.capacity()} completions; returns how many were written (0 when empty). */
  public int poll(WorkCompletions into) {
    return VerbsInline.pollCq(pollFn, handle(), into.capacity(), into.segment());
  }

  /**
   * Polls up to {@code max} completions into entries {@code 0..max-1} of {@code into} ({@code max} between 1
   * and its capacity), so one native array can serve callers that take fewer at a time.
   */
  public int poll(WorkCompletions into, int max) {
    if (max < 1 || max > into.capacity()) {
      throw new IllegalArgumentException("max must be in 1.." + into.capacity() + ": " + max);
    }
    return VerbsInline.pollCq(pollFn, handle(), max, into.segment());
  }

  /** Arms the CQ: its next completion (solicited ones only, if asked) raises one channel event. */
  public void requestNotify(boolean solicitedOnly) {
    VerbsInline.reqNotifyCq(handle(), solicitedOnly);
  }

  /** {@code ibv_ack_cq_events}: acknowledges {@code events} events got from the channel for this CQ. */
  public void acknowledgeEvents(int events) {
    IbVerbs.ackCqEvents(handle(), events);
  }

  @Override
  protected void release(MemorySegment handle) {
    IbVerbs.destroyCq(handle);
  }
}
