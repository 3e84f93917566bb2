package org.mori4j.io.gpuinit;

import java.util.HashMap;
import java.util.Map;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuModule.GpuFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * Target-side atomics on GPU memory: a one-thread kernel (compiled with NVRTC/hiprtc once per device) does a
 * system-scope {@code atomicAdd} or {@code atomicCAS} on the target word and stores the old value into a pinned
 * host cell. It is launched on a non-blocking stream of that GPU, so it never orders after a kernel that is
 * spinning on its completion queue (the legacy default stream would), and the proxy polls the stream instead of
 * synchronizing. It still needs a free multiprocessor slot: a kernel that occupies every SM of the target GPU and
 * spins would starve it (README, "GPU-initiated transfers").
 */
final class GpuAtomics implements AutoCloseable {
  static final String SOURCE = """
      extern "C" __global__ void mori4j_gpuinit_atomic(unsigned long long* target, int cas, unsigned long long compareAdd,
                                                      unsigned long long swap, volatile unsigned long long* old) {
        unsigned long long v = cas ? atomicCAS_system(target, compareAdd, swap) : atomicAdd_system(target, compareAdd);
        *old = v;
        __threadfence_system();
      }
      """;

  private final GpuRuntime gpu;
  private final Map<Integer, GpuModule> modules = new HashMap<>();
  private final Map<Integer, GpuStream> streams = new HashMap<>();
  private final Map<Integer, GpuFunction> functions = new HashMap<>();
  private final Map<Integer, DeviceBuffer> scratches = new HashMap<>();

  GpuAtomics(GpuRuntime gpu) {
    this.gpu = gpu;
  }

  /**
   * Compiles and loads the kernel for {@code device}, creates its stream and runs it once on scratch device memory,
   * ahead of the first atomic: with CUDA's lazy module loading (the default since CUDA 12) a kernel's first launch
   * may wait for the whole device, which never happens while the application's kernel spins on its completion queue.
   */
  void prepare(int device) {
    if (functions.containsKey(device)) return;
    GpuModule m = modules.computeIfAbsent(device, d -> gpu.loadModule(d, gpu.compile(d, SOURCE, "mori4j_gpuinit_atomic.cu")));
    GpuStream s = streams.computeIfAbsent(device, gpu::createStream);
    GpuFunction f = m.function("mori4j_gpuinit_atomic");
    // kept until close: freeing device memory may wait for the whole device, as a first launch may
    DeviceBuffer scratch = gpu.allocDevice(device, 16);
    scratches.put(device, scratch);
    gpu.launch(f, Dim3.of(1), Dim3.of(1), 0, s, KernelArgs.of().pointer(scratch.address()).i32(0).i64(1).i64(0).pointer(scratch.address() + 8));
    long end = System.nanoTime() + 30_000_000_000L;
    while (!s.isComplete()) {
      if (System.nanoTime() > end) throw new IllegalStateException("the atomic kernel's first run on device " + device + " did not finish within 30 s");
      Thread.onSpinWait();
    }
    functions.put(device, f);
  }

  /** Launches one atomic; the old value appears at pinned address {@code oldCell} once the returned stream is complete. */
  GpuStream launch(int device, long target, boolean cas, long compareAdd, long swap, long oldCell) {
    prepare(device);
    GpuStream s = streams.get(device);
    gpu.launch(functions.get(device), Dim3.of(1), Dim3.of(1), 0, s,
        KernelArgs.of().pointer(target).i32(cas ? 1 : 0).i64(compareAdd).i64(swap).pointer(oldCell));
    return s;
  }

  @Override
  public void close() {
    for (GpuStream s : streams.values()) {
      // bounded wait, never synchronize: an atomic starved by a spinning kernel must not hang close()
      long end = System.nanoTime() + 1_000_000_000L;
      try {
        while (!s.isComplete() && System.nanoTime() < end) Thread.onSpinWait();
      } catch (RuntimeException ignored) {
        // closing anyway; the stream's failure was reported to the atomic that caused it
      }
      s.close();
    }
    streams.clear();
    functions.clear();
    scratches.values().forEach(DeviceBuffer::close);
    scratches.clear();
    modules.values().forEach(GpuModule::close);
    modules.clear();
  }
}
