package org.mori4j.transport;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Intrusive multi-producer, single-consumer queue of {@link TransferOp}s (Vyukov's design): producers swap
 * the tail with one atomic exchange and link the previous tail, the single consumer walks from the head.
 * It allocates nothing per element, which keeps the session fast path free of per-transfer garbage.
 */
public final class OpQueue {
  private static final VarHandle TAIL;
  private static final VarHandle NEXT;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      TAIL = l.findVarHandle(OpQueue.class, "tail", TransferOp.class);
      NEXT = MethodHandles.privateLookupIn(TransferOp.class, l).findVarHandle(TransferOp.class, "nextSubmitted", TransferOp.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final TransferOp stub = new Stub();
  private TransferOp head = stub; // consumer only
  @SuppressWarnings("unused")
  private volatile TransferOp tail = stub;

  /** Any thread. */
  public void offer(TransferOp op) {
    NEXT.setRelease(op, (TransferOp) null);
    TransferOp prev = (TransferOp) TAIL.getAndSet(this, op);
    NEXT.setRelease(prev, op);
  }

  /** Consumer thread only; null when empty (or when a producer is between its two steps). */
  public TransferOp poll() {
    TransferOp h = head;
    TransferOp next = (TransferOp) NEXT.getAcquire(h);
    if (h == stub) {
      if (next == null) return null;
      head = next;
      h = next;
      next = (TransferOp) NEXT.getAcquire(h);
    }
    if (next != null) {
      head = next;
      return h;
    }
    if (h != (TransferOp) TAIL.getAcquire(this)) return null; // a producer is linking; retry later
    offer(stub);
    next = (TransferOp) NEXT.getAcquire(h);
    if (next != null) {
      head = next;
      return h;
    }
    return null;
  }

  /** Consumer thread only: whether nothing is queued (a racing producer may make it non-empty at once). */
  public boolean isEmpty() {
    return head == stub && NEXT.getAcquire(stub) == null;
  }

  private static final class Stub extends TransferOp {
    @Override
    public void transferSucceeded() {}

    @Override
    public void transferFailed(TransportError error, String message) {}
  }
}
