package org.mori4j.natives.gpu;

/**
 * A marker recorded into a stream: it completes when the work issued before it has finished. Lets a poller
 * ask "is that copy done?" without blocking, and times GPU work between two events.
 */
public interface GpuEvent extends AutoCloseable {
  int device();

  /** Records this event at the current end of {@code stream}. */
  void record(GpuStream stream);

  /** True once the work before the last {@link #record} has finished; never blocks. */
  boolean isComplete();

  /** Blocks until the work before the last {@link #record} has finished. */
  void synchronize();

  /** Milliseconds of GPU time from {@code start} to this event (both recorded, timing enabled, complete). */
  float elapsedMillisSince(GpuEvent start);

  @Override
  void close();
}
