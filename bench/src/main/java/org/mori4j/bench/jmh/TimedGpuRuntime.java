package org.mori4j.bench.jmh;

import java.util.concurrent.atomic.AtomicLong;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.ForwardingGpuRuntime;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * A real GPU runtime (CUDA or HIP) behind a pass-through that stores {@link System#nanoTime()} at the start of every
 * kernel launch call and then counts it, as {@link HostPathGpuRuntime} does, so that {@link XgmiBatchHostBenchmark} can
 * time a {@code batchWrite} from its call to the real {@code cuLaunchKernel} (with the real pinned table, the real
 * {@code cuMemcpyHtoDAsync} upload and the driver's own costs in front of it). Every other call goes straight through
 * ({@link ForwardingGpuRuntime}); the wrapper adds one virtual call per runtime call and nothing else.
 */
final class TimedGpuRuntime extends ForwardingGpuRuntime implements LaunchClock {
  private final AtomicLong launches = new AtomicLong();
  private volatile long lastLaunchNanos;

  TimedGpuRuntime(GpuRuntime gpu) {
    super(gpu);
  }

  @Override public long launches() { return launches.get(); }
  @Override public long lastLaunchNanos() { return lastLaunchNanos; }

  @Override
  public void launch(GpuFunction function, Dim3 grid, Dim3 block, int sharedMemBytes, GpuStream stream, KernelArgs args) {
    lastLaunchNanos = System.nanoTime();
    launches.incrementAndGet();
    delegate.launch(function, grid, block, sharedMemBytes, stream, args);
  }
}
