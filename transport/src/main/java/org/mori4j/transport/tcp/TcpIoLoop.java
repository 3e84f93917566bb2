package org.mori4j.transport.tcp;

import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.CompletionSource;
import org.mori4j.transport.OpQueue;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One selector and the connections registered with it: the TCP backend's completion source. Only the
 * thread that runs {@link #doWork()} touches the sockets; other threads hand it ops through a lock-free
 * queue and control actions through a task queue, then wake it if it sleeps in {@code select}.
 */
final class TcpIoLoop implements CompletionSource {
  private static final Logger log = LoggerFactory.getLogger(TcpIoLoop.class);
  private static final long TIMER_PERIOD_NANOS = 50_000_000L;

  private final String name;
  private final Selector selector;
  private final OpQueue ops = new OpQueue();
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final List<TcpConnection> connections = new ArrayList<>();
  private final AtomicBoolean sleeping = new AtomicBoolean();
  private final AtomicInteger submitting = new AtomicInteger();
  private final CountDownLatch closedLatch = new CountDownLatch(1);
  private volatile boolean closing;
  private volatile boolean closed;
  private long nextTimerNanos;
  /** Initiator ops of this loop's connections that wait for a response; loop thread only. */
  int inFlight;
  final long peerTimeoutNanos;
  private final DeviceStaging staging;
  private final int stagingChunk;
  /** Connections waiting for a GPU copy, polled every round instead of waiting in select; loop thread only. */
  private ArrayList<TcpConnection> gpuWaiters = new ArrayList<>();
  private ArrayList<TcpConnection> gpuPolling = new ArrayList<>();
  /** Connections that took ops in this round's drain; loop thread only. */
  private ArrayList<TcpConnection> toFlush = new ArrayList<>();
  private ArrayList<TcpConnection> flushLater = new ArrayList<>();
  /** The thread that runs {@link #doWork()} (the poller's), so that a caller on it never takes the caller-driven path. */
  private volatile Thread thread;
  private final long serveSpinNanos;
  /** When this loop last handled a peer's request on a target connection; loop thread only. */
  private long lastServeNanos = Long.MIN_VALUE / 2;
  /** The time between the last two requests it handled (long when it had been idle or a burst came); loop thread only. */
  private long serveGapNanos = Long.MAX_VALUE;
  /** The loop polls after serving (serve-spin) instead of sleeping in select; loop thread only. */
  private boolean polling;

  TcpIoLoop(String name, long peerTimeoutNanos) throws IOException {
    this(name, peerTimeoutNanos, null, 0);
  }

  TcpIoLoop(String name, long peerTimeoutNanos, DeviceStaging staging, int stagingChunk) throws IOException {
    this(name, peerTimeoutNanos, staging, stagingChunk, 0);
  }

  TcpIoLoop(String name, long peerTimeoutNanos, DeviceStaging staging, int stagingChunk, long serveSpinNanos) throws IOException {
    this.name = name;
    this.serveSpinNanos = serveSpinNanos;
    this.selector = Selector.open();
    this.peerTimeoutNanos = peerTimeoutNanos;
    this.staging = staging;
    this.stagingChunk = stagingChunk;
  }

  /** A stager for one connection; only reached for GPU regions, which registration refuses without staging. */
  GpuStager newStager() {
    if (staging == null) throw new IllegalStateException("GPU memory on a TCP backend without GPU staging");
    return new GpuStager(staging, stagingChunk);
  }

  /** Loop thread: poll {@code c} each round until its GPU copy is done (it calls this again if it must wait more). */
  void awaitGpu(TcpConnection c) {
    if (c.gpuWaiting) return;
    c.gpuWaiting = true;
    gpuWaiters.add(c);
  }

  private void pollGpu() {
    ArrayList<TcpConnection> now = gpuWaiters;
    gpuWaiters = gpuPolling;
    gpuPolling = now;
    for (int i = 0; i < now.size(); i++) {
      TcpConnection c = now.get(i);
      c.gpuWaiting = false;
      if (c.dead) continue;
      if (!c.enter(TcpConnection.LOOP)) {
        awaitGpu(c); // a caller holds it for a moment: poll it next round
        continue;
      }
      try {
        if (c.tally != null) c.tally.gpuPoll();
        c.onGpuPoll();
      } catch (RuntimeException e) {
        c.fail(TransportError.GPU_OP, "GPU staging failed: " + e.getMessage());
      } finally {
        c.exit();
      }
    }
    now.clear();
  }

  /** Loop thread: {@code c} took an op while idle; it writes once this round's queue is drained. */
  void flushLater(TcpConnection c) {
    toFlush.add(c);
  }

  Selector selector() {
    return selector;
  }

  /** Whether the current thread is this loop's. */
  boolean onLoopThread() {
    return thread == Thread.currentThread();
  }

  /** Any thread: queue an op whose {@code lane} is a connection of this loop. */
  void submit(TransferOp op) {
    submitting.incrementAndGet();
    try {
      if (closing) {
        op.transferFailed(TransportError.BAD_STATE, "TCP backend closed");
        return;
      }
      ops.offer(op);
    } finally {
      submitting.decrementAndGet();
    }
    if (sleeping.get()) selector.wakeup();
  }

  /** Any thread: run {@code task} on the loop thread. */
  void execute(Runnable task) {
    if (closed) throw new IllegalStateException("I/O loop " + name + " is closed");
    tasks.add(task);
    selector.wakeup();
  }

  void add(TcpConnection c) {
    connections.add(c);
  }

  void remove(TcpConnection c) {
    connections.remove(c);
  }

  /** Loop thread: how many of this loop's connections are target ends (tests ask it through {@link #execute}). */
  int targetConnections() {
    int n = 0;
    for (TcpConnection c : connections) if (c instanceof TargetConnection) n++;
    return n;
  }

  @Override
  public int doWork() {
    if (closed) return 0;
    if (closing) {
      shutdown();
      return 1;
    }
    if (thread != Thread.currentThread()) thread = Thread.currentThread();
    int work = 0;
    Runnable t;
    while ((t = tasks.poll()) != null) {
      runSafely(t);
      work++;
    }
    TransferOp op;
    while ((op = ops.poll()) != null) {
      TcpConnection c = (TcpConnection) op.lane;
      // a caller holds the connection for one write or one drive (which ends early once ops queue behind it)
      if (!c.enter(TcpConnection.LOOP)) {
        if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.DEFER, op.uid());
        c.enterWaiting(TcpConnection.LOOP);
      }
      try {
        c.enqueue(op);
      } finally {
        c.exit();
      }
      work++;
    }
    if (!toFlush.isEmpty()) flushAll();
    try {
      // the action form of select hands keys over one by one instead of filling the selected-key set,
      // which would allocate a set node for every ready key
      int n = selector.selectNow(keyHandler);
      if (n > 0 && polling) CallerDriveStats.SERVED_POLLING.add(n); // between two polls of the serve-spin
      work += n;
    } catch (IOException | ClosedSelectorException e) {
      log.warn("{}: select failed", name, e);
      return work;
    }
    if (!gpuWaiters.isEmpty()) pollGpu();
    long now = System.nanoTime();
    if (now - nextTimerNanos >= 0) {
      nextTimerNanos = now + TIMER_PERIOD_NANOS;
      for (int i = connections.size() - 1; i >= 0; i--) {
        TcpConnection c = connections.get(i);
        if (!c.enter(TcpConnection.LOOP)) continue; // a caller's hold is short; the next tick checks it
        try {
          c.checkProgress(now);
        } finally {
          c.exit();
        }
      }
    }
    return work;
  }

  /** Writes what the connections took in this round, after the whole drain, so a burst leaves in few writes. */
  private void flushAll() {
    ArrayList<TcpConnection> now = toFlush;
    toFlush = flushLater;
    flushLater = now;
    for (int i = 0; i < now.size(); i++) {
      TcpConnection c = now.get(i);
      c.enterWaiting(TcpConnection.LOOP); // a caller's hold is short (it sees the queued op and lets go)
      try {
        c.flushQueued();
      } finally {
        c.exit();
      }
    }
    now.clear();
  }

  private final java.util.function.Consumer<SelectionKey> keyHandler = this::handle;

  private void handle(SelectionKey k) {
    if (!k.isValid()) return;
    Object att = k.attachment();
    if (att instanceof TcpConnection c) {
      // a caller holds the connection for one write or one drive: wait for it, parked, rather than select the still
      // ready key again at once (that spin would take the core from the holder; see TcpConnection#enterWaiting)
      if (!c.enter(TcpConnection.LOOP)) {
        if (CallerDriveStats.TRACE)
          CallerDriveStats.trace(CallerDriveStats.HANDLE_SKIPPED, ((long) System.identityHashCode(c) << 16) | (k.interestOps() << 8) | k.readyOps());
        c.enterWaiting(TcpConnection.LOOP);
      }
      try {
        if (c.dead || !k.isValid()) return; // it failed while we waited
        if (CallerDriveStats.TRACE)
          CallerDriveStats.trace(c instanceof TargetConnection ? CallerDriveStats.HANDLE_TARGET : CallerDriveStats.HANDLE_INIT,
              ((long) System.identityHashCode(c) << 16) | (k.interestOps() << 8) | k.readyOps());
        int ready = k.readyOps();
        if (c.tally != null) c.tally.wake(ready);
        if (c.tls != null && (ready = c.tlsReady(ready)) == 0) return;
        if (serveSpinNanos > 0 && c instanceof TargetConnection) {
          long now = System.nanoTime();
          serveGapNanos = now - lastServeNanos;
          lastServeNanos = now;
        }
        if ((ready & SelectionKey.OP_WRITE) != 0) c.onWritable();
        if ((ready & SelectionKey.OP_READ) != 0 && k.isValid()) {
          c.onReadable();
          // several requests in one read: a burst (the peer does not wait for each answer), which the polling would
          // only slow down by taking the core from the threads that produce and read it
          if (serveSpinNanos > 0 && c instanceof TargetConnection t && t.servedInCall > 1) serveGapNanos = Long.MAX_VALUE;
        }
      } finally {
        if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.HANDLE_END, 0);
        c.exit();
      }
    } else if (att instanceof Runnable acceptor) {
      acceptor.run();
    }
  }

  @Override
  public int awaitWork(long maxNanos) {
    if (closed) {
      sleepQuietly(maxNanos);
      return 0;
    }
    sleeping.set(true);
    try {
      if (!ops.isEmpty() || !tasks.isEmpty() || closing) return 0;
      if (!gpuWaiters.isEmpty() || !toFlush.isEmpty()) {
        // a staging copy takes tens to hundreds of microseconds and signals nothing: poll again at once, giving
        // the core away in between (a nap of even 20 us sleeps 50-60 us on Linux, per copy on each side)
        int n = selector.selectNow(keyHandler);
        if (n == 0 && TcpCallTrace.ON) TcpCallTrace.loopYield();
        if (n == 0) Thread.yield();
        return n;
      }
      if (serveSpinNanos > 0 && serveGapNanos < serveSpinNanos && System.nanoTime() - lastServeNanos < serveSpinNanos) {
        // a peer that sends small requests one after another (a ping-pong) sends the next within microseconds of
        // its response: polling for a moment answers it without the wake-up of a sleeping select. Adaptive: only
        // after two requests within the window, so a lone request costs no polling, and not after a read that
        // brought several requests (a burst). Each empty poll yields the core
        // (sched_yield), so where runnable threads outnumber free cores the caller's thread, or this engine's
        // own, is not kept off its core for a scheduler slice by the polling
        polling = true;
        int n = selector.selectNow(keyHandler);
        if (n == 0) Thread.yield();
        else CallerDriveStats.SERVED_POLLING.add(n);
        return n;
      }
      polling = false;
      long ms = Math.max(1, TimeUnit.NANOSECONDS.toMillis(maxNanos));
      if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.SELECT_SLEEP, 0);
      if (TcpCallTrace.ON) TcpCallTrace.loopSleep();
      int n = selector.select(keyHandler, ms);
      if (CallerDriveStats.TRACE) CallerDriveStats.trace(CallerDriveStats.SELECT_WAKE, n);
      return n;
    } catch (IOException | ClosedSelectorException e) {
      sleepQuietly(maxNanos);
      return 0;
    } finally {
      sleeping.set(false);
    }
  }

  @Override
  public int inFlight() {
    return inFlight;
  }

  @Override
  public void wakeup() {
    selector.wakeup();
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public String name() {
    return name;
  }

  /** Asks the loop to close; waits for it to finish, or closes from here if the loop is not being driven. */
  void close(long waitMillis) {
    closing = true;
    selector.wakeup();
    try {
      if (!closedLatch.await(waitMillis, TimeUnit.MILLISECONDS)) {
        synchronized (this) {
          shutdown();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private synchronized void shutdown() {
    if (closed) return;
    while (submitting.get() != 0) Thread.onSpinWait();
    TransferOp op;
    while ((op = ops.poll()) != null) op.transferFailed(TransportError.BAD_STATE, "TCP backend closed");
    Runnable t;
    while ((t = tasks.poll()) != null) runSafely(t);
    for (TcpConnection c : new ArrayList<>(connections)) c.failOnLoop(TransportError.BAD_STATE, "TCP backend closed");
    connections.clear();
    gpuWaiters.clear();
    gpuPolling.clear();
    try {
      for (SelectionKey k : selector.keys()) k.channel().close();
      selector.close();
    } catch (IOException e) {
      log.debug("{}: close", name, e);
    }
    closed = true;
    closedLatch.countDown();
  }

  private void runSafely(Runnable t) {
    try {
      t.run();
    } catch (RuntimeException e) {
      log.error("{}: task failed", name, e);
    }
  }

  private static void sleepQuietly(long nanos) {
    try {
      TimeUnit.NANOSECONDS.sleep(Math.min(nanos, 10_000_000L));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
