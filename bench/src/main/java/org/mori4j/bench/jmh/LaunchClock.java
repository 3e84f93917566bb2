package org.mori4j.bench.jmh;

/**
 * A GPU runtime of the benchmarks that counts kernel launches and stores {@link System#nanoTime()} at the start of the
 * last launch call before counting it ({@link HostPathGpuRuntime}, {@link TimedGpuRuntime}): a thread that saw the
 * count change knows when the launch call began.
 */
interface LaunchClock {
  /** Kernel launches so far. */
  long launches();

  /** {@link System#nanoTime()} at the start of the last launch call. */
  long lastLaunchNanos();
}
