package org.mori4j.transport.rdma.soft;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.transport.DeviceStaging;

/**
 * A genuine in-memory "GPU" for the software provider's staging path: device addresses are addresses of host
 * memory the test allocated, and each copy really moves the bytes, asynchronously, on a copy thread (as a copy
 * engine would), so the device thread has to wait for it. Counts the slots open. A copy touching
 * {@code poisonAddress} fails, as a copy to or from a bad device address would.
 */
final class InMemoryStaging implements DeviceStaging {
  final AtomicInteger openSlots = new AtomicInteger();
  final AtomicInteger copies = new AtomicInteger();
  volatile long poisonAddress = -1;
  private final ExecutorService copyEngine = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "test-copy-engine");
    t.setDaemon(true);
    return t;
  });

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
    return new MemorySlot(bytes);
  }

  private boolean poisoned(long address, long size) {
    long p = poisonAddress;
    return p >= address && p < address + size;
  }

  void shutdown() {
    copyEngine.shutdownNow();
  }

  private final class MemorySlot implements Slot {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment buffer;
    private Future<?> last;
    private Future<?> marked;
    private boolean closed;

    MemorySlot(long bytes) {
      buffer = arena.allocate(bytes, 4096);
    }

    @Override
    public MemorySegment buffer() {
      return buffer;
    }

    @Override
    public void toDevice(int device, long dst, long bufferOffset, long size) {
      MemorySegment to = MemorySegment.ofAddress(dst).reinterpret(size);
      boolean bad = poisoned(dst, size);
      last = copyEngine.submit(() -> {
        if (bad) throw new IllegalStateException("in-memory device: illegal address");
        MemorySegment.copy(buffer, bufferOffset, to, 0, size);
        copies.incrementAndGet();
      });
    }

    @Override
    public void fromDevice(int device, long src, long bufferOffset, long size) {
      MemorySegment from = MemorySegment.ofAddress(src).reinterpret(size);
      boolean bad = poisoned(src, size);
      last = copyEngine.submit(() -> {
        if (bad) throw new IllegalStateException("in-memory device: illegal address");
        MemorySegment.copy(from, 0, buffer, bufferOffset, size);
        copies.incrementAndGet();
      });
    }

    @Override
    public void mark() {
      marked = last;
    }

    @Override
    public boolean done() {
      if (marked == null || !marked.isDone()) return marked == null;
      try {
        marked.get();
      } catch (Exception e) {
        throw new IllegalStateException("copy failed", e);
      }
      return true;
    }

    @Override
    public void close() {
      if (closed) return;
      closed = true;
      if (last != null) {
        try {
          last.get();
        } catch (Exception ignored) {
          // the copy's failure was reported through done()
        }
      }
      arena.close();
      openSlots.decrementAndGet();
    }
  }
}
