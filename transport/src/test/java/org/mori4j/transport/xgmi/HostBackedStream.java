package org.mori4j.transport.xgmi;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.natives.gpu.GpuStream;

/**
 * A stream of {@link HostBackedGpuRuntime}: an in-order queue of work with its own thread; a failed item makes the
 * stream's errors sticky, as CUDA's are.
 */
final class HostBackedStream implements GpuStream {
  private static final Runnable STOP = () -> {};
  private final HostBackedGpuRuntime rt;
  final int device;
  private final LinkedBlockingQueue<Runnable> work = new LinkedBlockingQueue<>();
  private final AtomicLong issued = new AtomicLong();
  private final AtomicLong done = new AtomicLong();
  private volatile String error;
  private volatile boolean closed;
  private final Thread thread;

  HostBackedStream(HostBackedGpuRuntime rt, int device) {
    this.rt = rt;
    this.device = device;
    rt.liveStreams.incrementAndGet();
    thread = Thread.ofPlatform().daemon().name("test-gpu-stream-" + device).start(this::loop);
  }

  void enqueue(Runnable r) {
    if (closed) throw new IllegalStateException("stream closed");
    issued.incrementAndGet();
    work.add(r);
  }

  private void loop() {
    try {
      while (true) {
        Runnable r = work.take();
        if (r == STOP) return;
        for (int i = 0; rt.stalled && i < 60_000; i++) Thread.sleep(1);
        if (rt.maxDelayMicros > 0 && ThreadLocalRandom.current().nextBoolean()) LockSupport.parkNanos(ThreadLocalRandom.current().nextInt(rt.maxDelayMicros) * 1000L);
        try {
          if (error == null) r.run();
        } catch (RuntimeException e) {
          error = e.getMessage();
        }
        done.incrementAndGet();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  long issued() {
    return issued.get();
  }

  boolean reached(long mark) {
    return done.get() >= mark;
  }

  void check() {
    String e = error;
    if (e != null) throw HostBackedGpuRuntime.fail("cuStreamQuery", e);
  }

  @Override
  public int device() {
    return device;
  }

  @Override
  public void synchronize() {
    long mark = issued.get();
    while (!reached(mark)) LockSupport.parkNanos(10_000);
    check();
  }

  @Override
  public boolean isComplete() {
    check();
    return reached(issued.get());
  }

  /** Waits for the queued work, then stops the thread; a failed stream is destroyed too, and then says why. */
  @Override
  public void close() {
    if (closed) return;
    closed = true;
    long mark = issued.get();
    while (!reached(mark)) LockSupport.parkNanos(10_000);
    work.add(STOP);
    rt.liveStreams.decrementAndGet();
    check();
  }
}
