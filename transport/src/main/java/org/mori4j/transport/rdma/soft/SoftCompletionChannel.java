package org.mori4j.transport.rdma.soft;

import static org.mori4j.natives.verbs.Errno.EBUSY;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.mori4j.transport.rdma.verbs.CompletionChannel;

/**
 * A completion channel of the software RDMA device (emulation): armed completion queues raise events here and
 * {@link #await} sleeps until one comes, the timeout passes or {@link #wakeup()} is called. Events accumulate
 * until taken; taking them acknowledges them. Closing it while a completion queue uses it fails with
 * {@code EBUSY}, as {@code ibv_destroy_comp_channel} does.
 */
final class SoftCompletionChannel implements CompletionChannel {
  private final SoftDevice device;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private int events;
  private boolean wake;
  private int attached;
  private boolean closed;

  SoftCompletionChannel(SoftDevice device) {
    this.device = device;
  }

  void attach() {
    lock.lock();
    try {
      attached++;
    } finally {
      lock.unlock();
    }
  }

  void detach() {
    lock.lock();
    try {
      attached--;
    } finally {
      lock.unlock();
    }
  }

  void raise() {
    lock.lock();
    try {
      events++;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public int await(long maxNanos) {
    lock.lock();
    try {
      long left = maxNanos;
      while (events == 0 && !wake && !closed && left > 0) left = changed.awaitNanos(left);
      int n = events;
      events = 0;
      wake = false;
      return n;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void wakeup() {
    lock.lock();
    try {
      wake = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) return;
      if (attached > 0) {
        throw SoftErrors.error("ibv_destroy_comp_channel", EBUSY, attached + " completion queues still use this channel; close them first");
      }
      closed = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    device.forget(this);
  }
}
