package org.mori4j.transport.tcp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.transport.DeviceStaging;

/**
 * A genuine in-memory "device" for the staging pipeline: device addresses are addresses of host memory the
 * test allocated, and every copy really moves the bytes, asynchronously, on a copy thread of its own (as a
 * GPU copy engine would), after a random delay of up to {@code maxDelayMicros} so that the pipeline has to
 * wait for copies. Lets CI exercise double buffering, chunk boundaries and buffer reuse without a GPU.
 * A copy touching {@code poisonAddress} fails, to test that a failed device copy fails its transfer.
 */
final class HostBackedDeviceStaging implements DeviceStaging {
  final AtomicInteger openSlots = new AtomicInteger();
  final AtomicInteger copies = new AtomicInteger();
  private final ExecutorService copyEngine = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "fake-copy-engine");
    t.setDaemon(true);
    return t;
  });
  private final int maxDelayMicros;
  volatile long poisonAddress = -1;
  /** Slots {@link #tryOpenSlot} still hands out (a pool that runs short); unlimited by default. */
  final AtomicInteger ready = new AtomicInteger(Integer.MAX_VALUE);
  /**
   * Behave as the engine's pool: {@link #pooled()} is true and closing a slot that {@link #tryOpenSlot} handed out
   * makes it ready again (it is freed all the same: nothing here is costly to allocate).
   */
  volatile boolean pool;
  /** Slots {@link #tryOpenSlot} handed out, over the whole run. */
  final AtomicInteger taken = new AtomicInteger();

  HostBackedDeviceStaging(int maxDelayMicros) {
    this.maxDelayMicros = maxDelayMicros;
  }

  @Override
  public boolean available() {
    return true;
  }

  @Override
  public String unavailableReason() {
    return "";
  }

  @Override
  public Slot openSlot(long bytes) {
    openSlots.incrementAndGet();
    return new HostSlot(bytes);
  }

  @Override
  public Slot tryOpenSlot(long bytes) {
    if (ready.getAndUpdate(r -> Math.max(0, r - 1)) <= 0) return null;
    taken.incrementAndGet();
    HostSlot s = (HostSlot) openSlot(bytes);
    s.fromPool = true;
    return s;
  }

  @Override
  public boolean pooled() {
    return pool;
  }

  /** What {@link #tuning()} answers (the stagers read it when a connection opens one). */
  volatile org.mori4j.transport.StagingTuning tuning = org.mori4j.transport.StagingTuning.DEFAULT;

  @Override
  public org.mori4j.transport.StagingTuning tuning() {
    return tuning;
  }

  void shutdown() {
    copyEngine.shutdownNow();
  }

  private final class HostSlot implements Slot {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment buffer;
    private Future<?> last;
    private Future<?> marked;
    private boolean closed;
    boolean fromPool;

    HostSlot(long bytes) {
      buffer = arena.allocate(bytes, 4096);
    }

    @Override
    public MemorySegment buffer() {
      return buffer;
    }

    private void submit(long deviceAddress, long size, Runnable copy) {
      if (closed) throw new IllegalStateException("slot closed");
      long poison = poisonAddress;
      boolean bad = poison >= deviceAddress && poison < deviceAddress + size;
      last = copyEngine.submit(() -> {
        if (maxDelayMicros > 0) LockSupport.parkNanos(ThreadLocalRandom.current().nextInt(maxDelayMicros) * 1000L);
        if (bad) throw new IllegalStateException("fake device: illegal address 0x" + Long.toHexString(poison));
        copy.run();
        copies.incrementAndGet();
      });
    }

    @Override
    public void toDevice(int device, long dst, long bufferOffset, long size) {
      submit(dst, size, () -> MemorySegment.copy(buffer, bufferOffset, MemorySegment.ofAddress(dst).reinterpret(size), 0, size));
    }

    @Override
    public void fromDevice(int device, long src, long bufferOffset, long size) {
      submit(src, size, () -> MemorySegment.copy(MemorySegment.ofAddress(src).reinterpret(size), 0, buffer, bufferOffset, size));
    }

    @Override
    public void mark() {
      marked = last;
    }

    @Override
    public boolean done() {
      Future<?> f = marked;
      if (f == null || !f.isDone()) return f == null;
      try {
        f.get();
      } catch (Exception e) {
        throw new IllegalStateException(e.getCause() == null ? e.toString() : e.getCause().getMessage(), e);
      }
      return true;
    }

    @Override
    public void close() {
      if (closed) return;
      closed = true;
      try {
        if (last != null) last.get();
      } catch (Exception ignored) {
        // a failed copy has already been reported through done()
      }
      arena.close();
      openSlots.decrementAndGet();
      if (pool && fromPool) ready.getAndUpdate(r -> r == Integer.MAX_VALUE ? r : r + 1);
    }
  }
}
