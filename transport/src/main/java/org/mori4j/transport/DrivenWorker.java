package org.mori4j.transport;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The life of a backend worker that one poller thread drives as a {@link CompletionSource} (the XGMI worker, an
 * RDMA worker): ops arrive from any thread through a lock-free queue, tasks (control work that must run on the
 * worker's thread, where its native resources live) through another; the first thread that drives it owns it;
 * closing fails what is queued and lets the subclass fail and free what it holds, on the owning thread, or on the
 * closer's when no poller ever drove it. Subclasses add what they do each round ({@link #work()}) and how they
 * wait ({@link CompletionSource#awaitWork}).
 */
public abstract class DrivenWorker implements CompletionSource {
  private static final Logger log = LoggerFactory.getLogger(DrivenWorker.class);
  private static final int FRESH = 0, DRIVEN = 1, CLOSED_BY_CLOSER = 2;

  private final String name;
  protected final OpQueue ops = new OpQueue();
  protected final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicInteger submitting = new AtomicInteger();
  private final AtomicInteger owner = new AtomicInteger(FRESH);
  private final CountDownLatch closedLatch = new CountDownLatch(1);
  /** Set by {@link #close}; read by the worker's waits, which must end at once. */
  protected volatile boolean closing;
  private volatile boolean closed;
  /** The worker thread while it waits in {@code awaitWork}, for {@link #wakeup()}. */
  protected volatile Thread parked;

  protected DrivenWorker(String name) {
    this.name = name;
  }

  /** Why ops fail once the worker closes ("... backend of engine 'x' is closed"). */
  protected abstract String closedReason();

  /** One round of the worker's own work after the tasks ran: completions, queued ops. Worker thread. */
  protected abstract int work();

  /** Closing, on the owning thread: fail what the worker holds with {@code reason} and free its resources. */
  protected abstract void release(String reason);

  // ---- any thread ----

  /** Queues {@code op}; fails it at once when closing. */
  public void submit(TransferOp op) {
    submitting.incrementAndGet();
    try {
      if (closing) {
        op.transferFailed(TransportError.BAD_STATE, closedReason());
        return;
      }
      ops.offer(op);
    } finally {
      submitting.decrementAndGet();
    }
    wakeup();
  }

  /** Runs {@code task} on the worker thread (or, once closed, on the caller's). */
  public void execute(Runnable task) {
    if (closed) {
      task.run();
      return;
    }
    tasks.add(task);
    wakeup();
    // closed meanwhile: the closer may have drained the queue already
    if (closed && tasks.remove(task)) task.run();
  }

  @Override
  public void wakeup() {
    Thread t = parked;
    if (t != null) LockSupport.unpark(t);
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public String name() {
    return name;
  }

  /** Asks the worker to close and waits up to {@code waitMillis} for it, or closes it here when nobody ever drove it. */
  public void close(long waitMillis) {
    closing = true;
    wakeup();
    if (owner.compareAndSet(FRESH, CLOSED_BY_CLOSER)) {
      shutdown();
      return;
    }
    try {
      if (!closedLatch.await(waitMillis, TimeUnit.MILLISECONDS))
        log.error("{}: the worker did not finish closing within {} ms; its native resources stay with the process", name, waitMillis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---- worker thread ----

  /** Whether the calling poller thread owns this worker (it drove it first). */
  protected final boolean driven() {
    return owner.get() == DRIVEN;
  }

  @Override
  public final int doWork() {
    if (closed) return 0;
    if (owner.get() != DRIVEN && !owner.compareAndSet(FRESH, DRIVEN)) return 0;
    if (!enterRound()) return 0;
    try {
      if (closing) {
        shutdown();
        return 1;
      }
      return runTasks() + work();
    } finally {
      exitRound();
    }
  }

  /**
   * Worker thread, before a round of tasks and work (and closing): false when the round must be skipped now (the
   * XGMI worker: a submitting thread is issuing an op on the worker's behalf; the round comes again at once). True by
   * default; a subclass that returns true gets {@link #exitRound()} after the round.
   */
  protected boolean enterRound() {
    return true;
  }

  /** Ends what {@link #enterRound()} began. */
  protected void exitRound() {}

  /** Whether ops or tasks are waiting (a wait must not start then). */
  protected final boolean hasQueued() {
    return !ops.isEmpty() || !tasks.isEmpty();
  }

  /**
   * Polls with {@code poll} until it found work, {@code outstanding} says nothing is left to wait for, ops or tasks
   * arrived, or {@code maxNanos} passed, giving the core away between polls: for waits that only a device ends and
   * that signal nothing (a timed nap would cost the timer's slack, ~50 us on Linux, per wait). Pass cached method
   * references: this runs on every idle round.
   */
  protected final int pollYielding(long maxNanos, java.util.function.IntSupplier poll, java.util.function.BooleanSupplier outstanding) {
    long end = System.nanoTime() + maxNanos;
    while (driven() && !closing) {
      int n = poll.getAsInt();
      if (n > 0 || !outstanding.getAsBoolean() || hasQueued() || System.nanoTime() - end >= 0) return n;
      Thread.yield();
    }
    return 0;
  }

  private int runTasks() {
    int n = 0;
    Runnable t;
    while ((t = tasks.poll()) != null) {
      runSafely(t);
      n++;
    }
    return n;
  }

  private void shutdown() {
    if (closed) return;
    while (submitting.get() != 0) Thread.onSpinWait();
    String reason = closedReason();
    runTasks();
    TransferOp op;
    while ((op = ops.poll()) != null) op.transferFailed(TransportError.BAD_STATE, reason);
    release(reason);
    closed = true;
    closedLatch.countDown();
    runTasks();
  }

  protected final void runSafely(Runnable t) {
    try {
      t.run();
    } catch (RuntimeException e) {
      log.error("{}: task failed", name, e);
    }
  }
}
