package org.mori4j.transport;

import java.lang.foreign.MemorySegment;

/**
 * What a backend needs from a GPU runtime to move device memory through host staging buffers: page-locked
 * buffers with their own copy queue, asynchronous copies between such a buffer and device memory, and a
 * completion test that never blocks. Backends stay free of the native layer this way (the engine implements
 * it over {@code GpuRuntime}), and tests can drive the staging pipeline with an in-memory device.
 */
public interface DeviceStaging {
  /** Whether GPU memory can be staged at all (false when no GPU runtime could be opened). */
  boolean available();

  /** Why {@link #available()} is false, for messages; empty otherwise. */
  String unavailableReason();

  /** Opens a staging buffer of {@code bytes} bytes with its own copy queue; may block briefly (pinned allocation). */
  Slot openSlot(long bytes);

  /**
   * A staging buffer of {@code bytes} bytes only if one is ready without allocating (a pool's idle slot), else null.
   * A stager takes what this gives for its extra buffers, so that a busy pool costs pipelining depth rather than a
   * page-locked allocation on the data path (which waits for work running on the GPU, such as a kernel that spins
   * until this very transfer completes). Without a pool every slot is ready: the default opens one.
   */
  default Slot tryOpenSlot(long bytes) {
    return openSlot(bytes);
  }

  /**
   * Whether {@link Slot#close()} hands the slot back to a pool that {@link #tryOpenSlot} takes it from again, so that
   * opening and closing one per transfer costs no allocation (the engine's pool, {@code mori4j.tcp.gpu-staging-prewarm}
   * above 0). A stager then keeps only its first buffer and borrows the others for each transfer; without a pool it
   * keeps every buffer it opened until it closes.
   */
  default boolean pooled() {
    return false;
  }

  /** How a stager cuts transfers and waits for copies (the engine's configuration); {@link StagingTuning#DEFAULT} unless set. */
  default StagingTuning tuning() {
    return StagingTuning.DEFAULT;
  }

  /**
   * One staging buffer and the copies into and out of it. Copies issued between two {@link #mark()} calls
   * must target one device. Used by one thread at a time.
   */
  interface Slot extends AutoCloseable {
    /** The host buffer; host code reads or writes it only while {@link #done()} is true. */
    MemorySegment buffer();

    /** Starts copying {@code size} bytes at {@code bufferOffset} of the buffer to device address {@code dst}. */
    void toDevice(int device, long dst, long bufferOffset, long size);

    /** Starts copying {@code size} bytes from device address {@code src} into the buffer at {@code bufferOffset}. */
    void fromDevice(int device, long src, long bufferOffset, long size);

    /** Marks the end of the copies issued so far; {@link #done()} then reports on them. */
    void mark();

    /** True once every copy before the last {@link #mark()} has finished; never blocks; throws if a copy failed. */
    boolean done();

    /** Waits for copies still running, then frees the buffer and its queue. Idempotent. */
    @Override
    void close();
  }
}
