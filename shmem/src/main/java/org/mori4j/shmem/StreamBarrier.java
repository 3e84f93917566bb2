package org.mori4j.shmem;

import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * One PE's stream barrier ({@link Shmem#barrierAll(GpuStream)}): the barrier kernel's module, compiled and loaded
 * once, and the number of barriers queued so far, which each launch passes to the kernel (it adds to a word in
 * every PE's heap and waits until its own words reach that count). The PE serialises the calls and closes it at
 * finalize.
 */
final class StreamBarrier implements AutoCloseable {
  private final Shmem pe;
  private GpuModule module;
  private long count;

  StreamBarrier(Shmem pe) {
    this.pe = pe;
  }

  /** Compiles and loads the kernel unless that was done already. */
  void load() {
    if (module == null) module = ShmemKernels.compile(pe, "", "mori_shmem_barrier.cu");
  }

  /** Queues the next barrier on {@code stream}; every PE of {@code group} must be reachable. */
  void queue(GpuStream stream, GroupMemory group) {
    for (int p = 0; p < pe.nPes(); p++) {
      // the kernel signals every PE through its mapping or its endpoint; with neither it would trap on the stream
      if (group.peerHeapBase(p) == 0 && group.endpointsPerPeer() == 0)
        throw new ShmemException("barrierAll(stream) needs a direct path or an endpoint to every PE: " + group.paths().describe(p));
    }
    load();
    count++;
    pe.gpu().launch(module.function(ShmemKernels.STREAM_BARRIER_KERNEL), Dim3.of(1), Dim3.of(1), 0, stream, KernelArgs.of().i64(count));
  }

  @Override
  public void close() {
    if (module != null) module.close();
  }
}
