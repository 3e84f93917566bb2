package org.mori4j.natives.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicReference;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * Native memory for one kernel launch's parameters, reused from launch to launch instead of an arena opened and
 * closed (two allocations, zeroed, and two frees) around every {@code cuLaunchKernel}: that arena and the argument
 * lists it was filled from were most of the Java side of a launch call. There is one spare per process, taken by
 * the launching thread for the length of its call and given back after; a launch that finds it taken (another
 * thread is launching at that moment) or needs more than it holds returns null from {@link #take} and uses an arena
 * of its own as before. The spare's memory belongs to a global arena: it lives as long as the process, as the
 * primary contexts {@link CudaRuntime} retains do, and is never freed, so a thread that still holds it cannot touch
 * freed memory.
 */
final class LaunchScratch {
  /** Value bytes the spare holds (the XGMI gather kernel takes 48); larger argument lists use an arena of their own. */
  static final int VALUE_BYTES = 1024;
  /** Parameters the spare has pointers for. */
  static final int MAX_PARAMS = 64;

  private static final AtomicReference<LaunchScratch> SPARE = new AtomicReference<>(new LaunchScratch());

  private final MemorySegment values;
  private final MemorySegment pointers;

  private LaunchScratch() {
    Arena arena = Arena.global();
    values = arena.allocate(VALUE_BYTES, KernelArgs.MAX_ALIGNMENT);
    pointers = arena.allocate(ValueLayout.ADDRESS, MAX_PARAMS);
  }

  /** The spare, now this thread's until {@link #giveBack}, or null when taken or too small for {@code args}. */
  static LaunchScratch take(KernelArgs args) {
    if (args.totalBytes() > VALUE_BYTES || args.count() > MAX_PARAMS) return null;
    return SPARE.getAndSet(null);
  }

  /** Lays {@code args} out in the spare; returns the {@code void**} for the launch. */
  MemorySegment write(KernelArgs args) {
    return args.writeTo(values, pointers);
  }

  void giveBack() {
    SPARE.set(this);
  }
}
