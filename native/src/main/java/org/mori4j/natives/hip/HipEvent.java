package org.mori4j.natives.hip;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.NativeResource;

/** A {@code hipEvent_t} on one device; destroyed on close. */
final class HipEvent extends NativeResource implements GpuEvent {
  private final HipRuntime runtime;
  private final int device;
  private final MemorySegment handle;

  HipEvent(HipRuntime runtime, int device, MemorySegment handle) {
    this.runtime = runtime;
    this.device = device;
    this.handle = handle;
  }

  @Override
  public int device() {
    return device;
  }

  @Override
  public void record(GpuStream stream) {
    if (!(stream instanceof HipStream s)) throw new IllegalArgumentException("not a HIP stream: " + stream);
    if (s.device() != device) throw new IllegalArgumentException(describe() + " cannot be recorded on a stream of device " + s.device());
    runtime.bind(device);
    MemorySegment h = handle();
    MemorySegment sh = s.handle();
    Hip.call("hipEventRecord", () -> (int) Hip.EVENT_RECORD.invokeExact(h, sh));
  }

  @Override
  public boolean isComplete() {
    runtime.bind(device);
    MemorySegment h = handle();
    int rc = Hip.invoke(() -> (int) Hip.EVENT_QUERY.invokeExact(h));
    if (rc == HipConstants.hipErrorNotReady) return false;
    Hip.check(rc, "hipEventQuery");
    return true;
  }

  @Override
  public void synchronize() {
    runtime.bind(device);
    MemorySegment h = handle();
    Hip.call("hipEventSynchronize", () -> (int) Hip.EVENT_SYNCHRONIZE.invokeExact(h));
  }

  @Override
  public float elapsedMillisSince(GpuEvent start) {
    if (!(start instanceof HipEvent s)) throw new IllegalArgumentException("not a HIP event: " + start);
    runtime.bind(device);
    MemorySegment from = s.handle();
    MemorySegment to = handle();
    return Hip.outFloat("hipEventElapsedTime", out -> (int) Hip.EVENT_ELAPSED_TIME.invokeExact(out, from, to));
  }

  private MemorySegment handle() {
    checkOpen();
    return handle;
  }

  @Override
  protected void release() {
    runtime.bind(device);
    Hip.call("hipEventDestroy", () -> (int) Hip.EVENT_DESTROY.invokeExact(handle));
  }

  @Override
  protected String describe() {
    return "hip event on device " + device;
  }
}
