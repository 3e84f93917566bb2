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
 * engine would), so the device thread has to wait for it. Counts the slots open.
 */
final class InMemoryStaging implements DeviceStaging {
  final AtomicInteger openSlots = new AtomicInteger();
  final AtomicInteger copies = new AtomicInteger();
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
      last = copyEngine.submit(() -> {
        MemorySegment.copy(buffer, bufferOffset, to, 0, size);
        copies.incrementAndGet();
      });
    }

    @Override
    public void fromDevice(int device, long src, long bufferOffset, long size) {
      MemorySegment from = MemorySegment.ofAddress(src).reinterpret(size);
      last = copyEngine.submit(() -> {
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
