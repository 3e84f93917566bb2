package org.mori4j.shmem;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.transport.xgmi.HostBackedGpuRuntime;

/**
 * The in-memory GPU of the transport tests ({@link HostBackedGpuRuntime}: device memory is shared memory
 * files, IPC handles name the files, copies and kernels run on stream threads) taught what shmem needs: the
 * device library's {@code globalGpuStates} global in every module that declares it, and the stream-barrier
 * kernel, run in Java to the kernel's own contract (read this PE's state from the module's global, add one to
 * this PE's slot in every PE's heap through the mapped addresses, wait until every slot here reaches the
 * target, fail the stream after the device wait timeout). What it cannot show: the CUDA code itself, which the
 * {@code gpu}-tagged tests run.
 */
final class ShmemTestDevice {
  private static final AtomicInteger NAMES = new AtomicInteger();
  private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

  final HostBackedGpuRuntime gpu;
  /** The name it is registered under with {@link GpuRuntimes#register}. */
  final String name;

  ShmemTestDevice(int devices) {
    this(new HostBackedGpuRuntime(devices, 0, true));
  }

  /** A device whose memory files live in {@code dir}, shared with another process playing a PE of this host. */
  ShmemTestDevice(int devices, Path dir) {
    this(new HostBackedGpuRuntime(devices, 0, true, dir));
  }

  private ShmemTestDevice(HostBackedGpuRuntime gpu) {
    this.gpu = gpu;
    this.name = "shmem-test-" + ProcessHandle.current().pid() + "-" + NAMES.incrementAndGet();
    gpu.defineGlobal(GpuStates.SYMBOL, GpuStates.LAYOUT.byteSize());
    gpu.defineKernel(ShmemKernels.STREAM_BARRIER_KERNEL, ShmemTestDevice::streamBarrier);
    gpu.defineKernel("mori4j_gpuinit_atomic", ShmemTestDevice::proxyAtomic);
    GpuRuntimes.register(name, gpu);
  }

  /** Settings for a PE on this device: a small heap, short timeouts. */
  ShmemConfig config(long heapBytes) {
    return ShmemConfig.load().withGpuRuntime(name).withHeapSize(heapBytes).withTimeout(Duration.ofSeconds(20))
        .withDeviceWaitTimeout(Duration.ofSeconds(10));
  }

  void shutdown() {
    gpu.shutdown();
  }

  /** The kernel {@code mori_shmem_internal_stream_barrier(unsigned long long target)} of mori_shmem.cuh. */
  private static void streamBarrier(HostBackedGpuRuntime.Launch launch) {
    var global = launch.globals().get(GpuStates.SYMBOL);
    if (global == null) throw new IllegalStateException("the module has no " + GpuStates.SYMBOL);
    byte[] raw = at(global.address(), global.size()).toArray(ValueLayout.JAVA_BYTE);
    GpuStates s = GpuStates.fromBytes(raw);
    long target = ByteBuffer.wrap(launch.args().getFirst()).order(ByteOrder.LITTLE_ENDIAN).getLong();
    long slot = s.internalOffset() + 8L * s.rank();
    long[] peers = s.peerHeapBase();
    for (int pe = 0; pe < s.nPes(); pe++) {
      if (peers[pe] == 0) throw new IllegalStateException("mori_shmem: PE " + s.rank() + ": no direct (P2P) path to PE " + pe);
      LONG.getAndAdd(at(peers[pe] + slot, 8), 0L, 1L);
    }
    long start = System.nanoTime();
    for (int pe = 0; pe < s.nPes(); pe++) {
      MemorySegment word = at(s.heapBase() + s.internalOffset() + 8L * pe, 8);
      while ((long) LONG.getVolatile(word, 0L) < target) {
        if (s.waitTimeoutNs() != 0 && System.nanoTime() - start > s.waitTimeoutNs())
          throw new IllegalStateException("mori_shmem: PE " + s.rank() + ": wait timed out (a PE died, or never signals this word)");
        LockSupport.parkNanos(20_000);
      }
    }
  }

  /**
   * The GPU-initiated proxy's atomic kernel ({@code mori4j_gpuinit_atomic(target, cas, compareAdd, swap, old)} of
   * engine-actors' GpuAtomics), to its contract: one 64-bit fetch-add or compare-and-swap, the old value stored.
   */
  private static void proxyAtomic(HostBackedGpuRuntime.Launch launch) {
    java.util.List<byte[]> a = launch.args();
    long target = ByteBuffer.wrap(a.get(0)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    boolean cas = ByteBuffer.wrap(a.get(1)).order(ByteOrder.LITTLE_ENDIAN).getInt() != 0;
    long compareAdd = ByteBuffer.wrap(a.get(2)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    long swap = ByteBuffer.wrap(a.get(3)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    long old = ByteBuffer.wrap(a.get(4)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    MemorySegment word = at(target, 8);
    long v = cas ? (long) LONG.compareAndExchange(word, 0L, compareAdd, swap) : (long) LONG.getAndAdd(word, 0L, compareAdd);
    LONG.setVolatile(at(old, 8), 0L, v);
  }

  private static MemorySegment at(long address, long size) {
    return MemorySegment.ofAddress(address).reinterpret(size);
  }
}
