package org.mori4j.io.internal;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.transport.DeviceStaging;

/**
 * One engine's GPU runtime and the staging buffers its backends move GPU memory through. The runtime is
 * selected once, on first need ({@code mori4j.gpu.runtime}: auto, cuda or hip), because opening it loads the
 * driver and initialises it (hundreds of milliseconds), which only engines that register GPU memory should
 * pay. A staging slot is a pinned host buffer ({@code allocPinned}, portable to every device) with, per
 * device it has copied to, its own non-blocking stream and a timing-free event: copies go on that stream,
 * {@link Slot#mark()} records the event, and {@link Slot#done()} asks the event, which never blocks. The
 * runtime makes each device's context current on the calling thread itself, so the I/O threads may call it.
 */
public final class GpuStaging implements DeviceStaging {
  private final String mode;
  private static final AtomicInteger OPEN_SLOTS = new AtomicInteger();
  private volatile GpuRuntime runtime;

  public GpuStaging(String mode) {
    this.mode = mode;
  }

  /** The runtime for this engine's mode; the stand-in that fails every call when none could be opened. */
  public GpuRuntime runtime() {
    GpuRuntime r = runtime;
    if (r == null) {
      synchronized (this) {
        r = runtime;
        if (r == null) runtime = r = GpuRuntimes.select(mode);
      }
    }
    return r;
  }

  @Override
  public boolean available() {
    return runtime().available();
  }

  @Override
  public String unavailableReason() {
    GpuRuntime r = runtime();
    return r.available() ? "" : r.version();
  }

  /** Staging buffers open now in this process, over every engine (tests check that closing frees them all). */
  public static int openSlotsInProcess() {
    return OPEN_SLOTS.get();
  }

  @Override
  public Slot openSlot(long bytes) {
    GpuRuntime r = runtime();
    PinnedBuffer pinned = r.allocPinned(bytes);
    OPEN_SLOTS.incrementAndGet();
    return new PinnedSlot(r, pinned);
  }

  private final class PinnedSlot implements Slot {
    private final GpuRuntime runtime;
    private final PinnedBuffer pinned;
    private final MemorySegment buffer;
    private GpuStream[] streams = new GpuStream[0];
    private GpuEvent[] events = new GpuEvent[0];
    private int lastDevice = -1;
    private GpuEvent marked;
    private boolean closed;

    PinnedSlot(GpuRuntime runtime, PinnedBuffer pinned) {
      this.runtime = runtime;
      this.pinned = pinned;
      this.buffer = pinned.segment();
    }

    @Override
    public MemorySegment buffer() {
      return buffer;
    }

    private GpuStream stream(int device) {
      if (device >= streams.length) {
        streams = java.util.Arrays.copyOf(streams, device + 1);
        events = java.util.Arrays.copyOf(events, device + 1);
      }
      if (streams[device] == null) {
        streams[device] = runtime.createStream(device);
        events[device] = runtime.createEvent(device, false);
      }
      lastDevice = device;
      return streams[device];
    }

    @Override
    public void toDevice(int device, long dst, long bufferOffset, long size) {
      runtime.copyHostToDeviceAsync(dst, buffer.asSlice(bufferOffset, size), size, stream(device));
    }

    @Override
    public void fromDevice(int device, long src, long bufferOffset, long size) {
      runtime.copyDeviceToHostAsync(buffer.asSlice(bufferOffset, size), src, size, stream(device));
    }

    @Override
    public void mark() {
      if (lastDevice < 0) return;
      GpuEvent e = events[lastDevice];
      e.record(streams[lastDevice]);
      marked = e;
    }

    @Override
    public boolean done() {
      return marked == null || marked.isComplete();
    }

    @Override
    public void close() {
      if (closed) return;
      closed = true;
      try {
        // the copy engines may still be reading or writing the buffer: free it only after them
        for (GpuStream s : streams) {
          if (s != null) {
            try {
              s.synchronize();
            } catch (RuntimeException e) {
              org.slf4j.LoggerFactory.getLogger(GpuStaging.class).warn("GPU staging stream failed while closing: {}", e.getMessage());
            }
          }
        }
        for (GpuEvent e : events) if (e != null) e.close();
        for (GpuStream s : streams) if (s != null) s.close();
      } finally {
        pinned.close();
        OPEN_SLOTS.decrementAndGet();
      }
    }
  }
}
