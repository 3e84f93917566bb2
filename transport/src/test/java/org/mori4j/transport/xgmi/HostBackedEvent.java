package org.mori4j.transport.xgmi;

import java.util.concurrent.locks.LockSupport;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuStream;

/** An event of {@link HostBackedGpuRuntime}: complete when its stream has run everything issued before the last record. */
final class HostBackedEvent implements GpuEvent {
  private final HostBackedGpuRuntime rt;
  private final int device;
  private volatile HostBackedStream stream;
  private volatile long mark;
  private boolean closed;
  /** A timing event's stream stamps its nanoTime when it reaches the record (the "GPU clock" of this device). */
  private final boolean timing;
  private volatile long at;

  HostBackedEvent(HostBackedGpuRuntime rt, int device, boolean timing) {
    this.rt = rt;
    this.device = device;
    this.timing = timing;
    rt.liveEvents.incrementAndGet();
  }

  @Override
  public int device() {
    return device;
  }

  @Override
  public void record(GpuStream s) {
    if (closed) throw new IllegalStateException("event closed");
    HostBackedStream st = (HostBackedStream) s;
    if (st.device != device) throw HostBackedGpuRuntime.fail("cuEventRecord", "event of device " + device + " on a stream of device " + st.device);
    if (timing) {
      at = 0;
      st.enqueue(() -> at = System.nanoTime());
    }
    mark = st.issued();
    stream = st;
  }

  @Override
  public boolean isComplete() {
    if (closed) throw new IllegalStateException("event closed");
    HostBackedStream st = stream;
    if (st == null) return true;
    boolean reached = st.reached(mark);
    if (reached) st.check();
    return reached;
  }

  @Override
  public void synchronize() {
    while (!isComplete()) LockSupport.parkNanos(10_000);
  }

  @Override
  public float elapsedMillisSince(GpuEvent start) {
    // as CUDA: both timing events, both recorded and complete
    if (!(start instanceof HostBackedEvent s) || !timing || !s.timing) throw HostBackedGpuRuntime.fail("cuEventElapsedTime", "an event without timing");
    if (!isComplete() || !s.isComplete() || at == 0 || s.at == 0) throw HostBackedGpuRuntime.fail("cuEventElapsedTime", "an event not recorded or not complete");
    return (at - s.at) / 1e6f;
  }

  @Override
  public void close() {
    if (!closed) rt.liveEvents.decrementAndGet();
    closed = true;
  }
}
