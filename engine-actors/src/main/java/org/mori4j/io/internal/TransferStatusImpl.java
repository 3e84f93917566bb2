package org.mori4j.io.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.mori4j.io.BackendType;
import org.mori4j.io.StatusCode;
import org.mori4j.io.TransferStatus;
import org.mori4j.transport.CallerDrive;
import org.mori4j.transport.TransferOp;
import org.mori4j.transport.TransportError;

/**
 * The engine's transfer status, which is also the request a backend works on (see {@link TransferOp}): one
 * object per transfer. It completes exactly once; the winner of a race between a backend's completion and
 * a close publishes its code and message, later attempts are ignored. A waiter spins for a few
 * microseconds, then parks; the completing thread unparks it. A {@link CompletableFuture} is only made
 * when someone asks for {@link #completion()}.
 */
public final class TransferStatusImpl extends TransferOp implements TransferStatus {
  private static final VarHandle WAITER;

  static {
    try {
      MethodHandles.Lookup l = MethodHandles.lookup();
      WAITER = l.findVarHandle(TransferStatusImpl.class, "waiter", Thread.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final long spinNanos;
  /** The timer that cancels this transfer at its deadline (null: none); cancelled when the status completes first. */
  private volatile java.util.concurrent.Future<?> deadlineTask;
  private volatile StatusCode code = StatusCode.IN_PROGRESS;
  private String message = "";
  private volatile Thread waiter;
  private volatile CompletableFuture<TransferStatus> future;
  private volatile Consumer<TransferStatus> listener;
  /** Where this batch's arrays go back when it completes (null unless its backend allows it). */
  private BlockArrayPool arrayPool;
  private BlockArrayPool.Arrays pooledArrays;
  /** Every backend's part of the remote descriptor, so that a rerouted op finds the next backend's part. */
  private Map<BackendType, byte[]> descriptorData = Map.of();
  /** The route whose metrics count this transfer (null: metrics off, or refused before a route existed). */
  private org.mori4j.io.internal.metrics.RouteMeters meters;
  private long startNanos;

  public TransferStatusImpl(long spinNanos) {
    this.spinNanos = spinNanos;
  }

  /** A status that has already failed (bad input, closed engine). */
  public static TransferStatusImpl failed(StatusCode code, String message) {
    TransferStatusImpl s = new TransferStatusImpl(0);
    s.finish(code, message);
    return s;
  }

  /** A status that has already succeeded (inbound notifications). */
  public static TransferStatusImpl success() {
    TransferStatusImpl s = new TransferStatusImpl(0);
    s.finish(StatusCode.SUCCESS, "");
    return s;
  }

  /** Gives {@code arrays} (this batch's block arrays) back to {@code pool} when the status completes. */
  void returnArraysTo(BlockArrayPool pool, BlockArrayPool.Arrays arrays) {
    this.arrayPool = pool;
    this.pooledArrays = arrays;
  }

  /**
   * Sets {@link #remoteData()} to {@code chosen}, the chosen backend's part of the remote descriptor's
   * {@code all}, and keeps the rest for {@link #moveTo}.
   */
  public void remoteData(byte[] chosen, Map<BackendType, byte[]> all) {
    descriptorData = all;
    remoteData(chosen);
  }

  /** The remote descriptor's part for {@code type}, or null. */
  byte[] descriptorData(BackendType type) {
    return descriptorData.get(type);
  }

  /**
   * Readies this op for backend {@code type} (peer handle {@code peer}), after the one it went to handed it
   * back unfinished: no lane, that backend's part of the remote descriptor, and its own copy of pooled block
   * arrays unless the new backend also reads them only until it completes the op.
   */
  void moveTo(BackendType type, Object peer, boolean keepPooledArrays) {
    this.peer = peer;
    this.lane = null;
    this.laneSeq = 0;
    remoteData(descriptorData.get(type));
    if (pooledArrays != null && !keepPooledArrays) {
      localOffsets = java.util.Arrays.copyOf(localOffsets, blockCount);
      remoteOffsets = java.util.Arrays.copyOf(remoteOffsets, blockCount);
      sizes = java.util.Arrays.copyOf(sizes, blockCount);
      releaseArrays();
    }
  }

  /** Gives pooled block arrays back, once no one reads them any more (no-op without any). */
  private void releaseArrays() {
    BlockArrayPool.Arrays arrays = pooledArrays;
    if (arrays == null) return;
    pooledArrays = null;
    arrayPool.give(arrays);
  }

  /** Counts this transfer on {@code route} (started now); call before handing it to the backend. */
  public void meter(org.mori4j.io.internal.metrics.RouteMeters route) {
    if (route == null) return;
    meters = route;
    startNanos = route.started(totalBytes());
  }

  /** Whether {@link #meter} counted this transfer on a route. */
  public boolean metered() {
    return meters != null;
  }

  /** Completes the status once (the outcome guard of {@link TransferOp} decides who is first); returns this. */
  public TransferStatusImpl finish(StatusCode c, String msg) {
    if (!claimOutcome()) {
      // a backend's success after a cancellation: it has now read the blocks for the last time
      if (c == StatusCode.SUCCESS) releaseArrays();
      return this;
    }
    releaseArrays(); // the backend completes a batch only once it has read its blocks for the last time
    publish(c, msg);
    return this;
  }

  /**
   * Ends the transfer with {@code c} (ERR_TIMEOUT) unless it is already done: true when this call ended it. Its
   * backend drops what comes later (a late completion is ignored; TCP sends no request that has not left yet, and
   * reads a cancelled READ's data into scratch memory), and no byte moves into or out of the caller's buffer after
   * this returns true. Pooled block arrays stay with the op until the backend completes it.
   */
  public boolean cancel(StatusCode c, String msg) {
    if (!cancelOutcome()) return false;
    publish(c, msg);
    handOffDrive(); // its late response is the backend's to read and drop
    return true;
  }

  /**
   * Nobody will read this op's response on the caller's thread (see {@link CallerDrive}): the backend's own threads
   * take it. One volatile read when there is nothing to hand back.
   */
  private void handOffDrive() {
    CallerDrive d = callerDrive;
    if (d != null) d.handOff(this);
  }

  @Override
  public boolean cancel() {
    return cancel(StatusCode.ERR_TIMEOUT, "transfer uid " + uid() + " was cancelled by the caller");
  }

  /** Lets {@code task} cancel this transfer at its deadline; it is itself cancelled when the status completes first. */
  void deadlineTask(java.util.concurrent.Future<?> task) {
    deadlineTask = task;
    if (code.isFinal()) task.cancel(false);
  }

  private void publish(StatusCode c, String msg) {
    java.util.concurrent.Future<?> timer = deadlineTask;
    if (timer != null) timer.cancel(false);
    message = msg == null ? "" : msg;
    if (meters != null) meters.finished(c, startNanos, this); // before the code: a waiter then reads counters with it
    code = c; // volatile write publishes the message
    Thread w = (Thread) WAITER.getAndSet(this, (Thread) null);
    if (w != null) LockSupport.unpark(w);
    CompletableFuture<TransferStatus> f = future;
    if (f != null) f.complete(this);
    Consumer<TransferStatus> l = listener;
    if (l != null) runListener(l);
  }

  /** Runs {@code l} once when the status is final (at once if it already is). */
  public void onDone(Consumer<TransferStatus> l) {
    handOffDrive();
    listener = l;
    if (code.isFinal()) runListener(l);
  }

  private void runListener(Consumer<TransferStatus> l) {
    // a listener may be run by finish() and by onDone() when they race; the swap lets only one run it
    synchronized (this) {
      if (listener == null) return;
      listener = null;
    }
    l.accept(this);
  }

  @Override
  public void transferSucceeded() {
    finish(StatusCode.SUCCESS, "");
  }

  @Override
  public void transferFailed(TransportError error, String msg) {
    finish(map(error), msg);
  }

  public static StatusCode map(TransportError e) {
    return switch (e) {
      case INVALID_ARGS -> StatusCode.ERR_INVALID_ARGS;
      case NOT_FOUND -> StatusCode.ERR_NOT_FOUND;
      case BAD_STATE -> StatusCode.ERR_BAD_STATE;
      case TRANSPORT -> StatusCode.ERR_TRANSPORT;
      case PEER_LOST -> StatusCode.ERR_PEER_LOST;
      case TIMEOUT -> StatusCode.ERR_TIMEOUT;
      case GPU_OP -> StatusCode.ERR_GPU_OP;
      case RDMA_OP -> StatusCode.ERR_RDMA_OP;
    };
  }

  @Override
  public StatusCode code() {
    handOffDrive(); // a caller that polls the status does not read the socket: the I/O thread completes it
    return code;
  }

  @Override
  public String message() {
    return code.isFinal() ? message : "";
  }

  @Override
  public boolean inProgress() {
    handOffDrive();
    return !code.isFinal();
  }

  @Override
  public boolean succeeded() {
    handOffDrive();
    return code == StatusCode.SUCCESS;
  }

  @Override
  public boolean failed() {
    handOffDrive();
    StatusCode c = code;
    return c.isFinal() && c != StatusCode.SUCCESS;
  }

  @Override
  public TransferStatus await() {
    while (!await(Long.MAX_VALUE)) {
      // keep waiting; await(long) returns false only on timeout
    }
    return this;
  }

  @Override
  public boolean await(Duration timeout) {
    return await(timeout.isNegative() ? 0 : saturatedNanos(timeout));
  }

  private boolean await(long timeoutNanos) {
    if (code.isFinal()) return true;
    long start = System.nanoTime();
    CallerDrive d = callerDrive;
    if (d != null) {
      // the backend sent this request from the caller's thread: read the response here instead of parking
      d.drive(this, timeoutNanos);
      if (code.isFinal()) return true;
    }
    long spinEnd = start + Math.min(spinNanos, timeoutNanos);
    while (System.nanoTime() - spinEnd < 0) {
      if (code.isFinal()) return true;
      Thread.onSpinWait();
    }
    Thread me = Thread.currentThread();
    if (!WAITER.compareAndSet(this, (Thread) null, me)) {
      // another thread is parked on this status; wait through the future instead
      try {
        completion().toCompletableFuture().get(Math.max(0, timeoutNanos - (System.nanoTime() - start)),
            java.util.concurrent.TimeUnit.NANOSECONDS);
        return true;
      } catch (java.util.concurrent.TimeoutException e) {
        return false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return code.isFinal();
      } catch (java.util.concurrent.ExecutionException e) {
        return code.isFinal();
      }
    }
    boolean interrupted = false;
    try {
      while (!code.isFinal()) {
        long left = timeoutNanos - (System.nanoTime() - start);
        if (left <= 0) return false;
        LockSupport.parkNanos(this, left);
        // an interrupt must not turn into a busy loop; it is kept and restored for the caller
        if (Thread.interrupted()) interrupted = true;
      }
      return true;
    } finally {
      WAITER.compareAndSet(this, me, (Thread) null);
      if (interrupted) me.interrupt();
    }
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  @Override
  public CompletionStage<TransferStatus> completion() {
    handOffDrive();
    CompletableFuture<TransferStatus> f = future;
    if (f == null) {
      synchronized (this) {
        f = future;
        if (f == null) future = f = new CompletableFuture<>();
      }
    }
    if (code.isFinal()) f.complete(this);
    return f;
  }

  @Override
  public String toString() {
    StatusCode c = code;
    return "TransferStatus[" + c + (c.isFinal() && !message.isEmpty() ? ": " + message : "") + "]";
  }
}
