package org.mori4j.io.gpuinit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;

/**
 * The GPU side of the GPU-initiated tests on one device: the test kernels ({@code gpuinit_device_test.cu} compiled
 * with the device library by {@link GpuInitiatedKernels}) loaded there, a stream, device buffers it owns, the
 * pattern the kernels fill and check, and reading results (indices, CQEs) back. Closing it frees everything.
 */
final class GpuInitTestRig implements AutoCloseable {
  /** A completion as the kernel copied it out of the CQ. */
  record Cqe(long wrId, int status, int opcode, int flags, int byteLen, int imm, int wqeIndex, int owner) {
    static Cqe at(MemorySegment s, long i) {
      long o = i * GpuQueueLayout.CQE_BYTES;
      return new Cqe(s.get(JAVA_LONG_UNALIGNED, o + GpuQueueLayout.CQE_WR_ID), s.get(JAVA_INT_UNALIGNED, o + GpuQueueLayout.CQE_STATUS),
          Byte.toUnsignedInt(s.get(JAVA_BYTE, o + GpuQueueLayout.CQE_OPCODE)), Byte.toUnsignedInt(s.get(JAVA_BYTE, o + GpuQueueLayout.CQE_FLAGS)),
          s.get(JAVA_INT_UNALIGNED, o + GpuQueueLayout.CQE_BYTE_LEN), s.get(JAVA_INT_UNALIGNED, o + GpuQueueLayout.CQE_IMMEDIATE),
          s.get(JAVA_INT_UNALIGNED, o + GpuQueueLayout.CQE_WQE_INDEX), s.get(JAVA_INT_UNALIGNED, o + GpuQueueLayout.CQE_OWNER));
    }
  }

  final GpuRuntime gpu;
  final int device;
  final GpuModule module;
  final GpuStream stream;
  private final List<DeviceBuffer> buffers = new ArrayList<>();

  GpuInitTestRig(GpuRuntime gpu, int device) {
    this.gpu = gpu;
    this.device = device;
    this.module = GpuInitiatedKernels.load(gpu, device, GpuInitiatedKernelsTest.testKernels(), "gpuinit_device_test.cu");
    // every kernel looked up now: a lookup while another kernel spins could wait for it (lazy loading)
    for (String k : GpuInitiatedKernelsTest.KERNELS) module.function(k);
    this.stream = gpu.createStream(device);
  }

  static int patternByte(long offset, int seed) {
    return (int) ((offset * 131L + seed * 29L + 7L) & 0xff);
  }

  DeviceBuffer alloc(long bytes) {
    DeviceBuffer b = gpu.allocDevice(device, bytes);
    buffers.add(b);
    gpu.fill(b.address(), (byte) 0, bytes);
    return b;
  }

  void launch(String kernel, int blocks, int threads, KernelArgs args) {
    gpu.launch(module.function(kernel), Dim3.of(blocks), Dim3.of(threads), 0, stream, args);
  }

  /** Launches and waits, at most {@code limitMs}; a kernel still running then is a hang (the caller's assertion). */
  boolean runAndWait(String kernel, int blocks, int threads, KernelArgs args, long limitMs) throws InterruptedException {
    launch(kernel, blocks, threads, args);
    return await(limitMs);
  }

  boolean await(long limitMs) throws InterruptedException {
    long end = System.nanoTime() + limitMs * 1_000_000L;
    while (!stream.isComplete()) {
      if (System.nanoTime() > end) return false;
      Thread.sleep(1);
    }
    stream.synchronize(); // rethrows a kernel fault
    return true;
  }

  void fill(long addr, long bytes, int seed) {
    launch("t_fill", 64, 256, KernelArgs.of().pointer(addr).i64(bytes).i32(seed));
    stream.synchronize();
  }

  /** Bytes of [addr, +bytes) on this GPU that differ from the pattern, counted by a kernel on this GPU. */
  long check(long addr, long bytes, int seed) {
    DeviceBuffer wrong = alloc(8);
    launch("t_check", 64, 256, KernelArgs.of().pointer(addr).i64(bytes).i32(seed).pointer(wrong.address()));
    stream.synchronize();
    return Integer.toUnsignedLong(ints(wrong.address(), 1)[0]);
  }

  /** Slot k of n slices must hold the pattern's slice srcSlice[k]; returns the wrong bytes (a kernel on this GPU). */
  long checkSlices(long addr, int sliceBytes, int[] srcSlice, int seed) {
    DeviceBuffer slices = alloc(4L * srcSlice.length), wrong = alloc(8);
    try (Arena a = Arena.ofConfined()) {
      MemorySegment s = a.allocate(4L * srcSlice.length);
      for (int i = 0; i < srcSlice.length; i++) s.setAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, i, srcSlice[i]);
      gpu.copyHostToDevice(slices.address(), s, s.byteSize());
    }
    launch("t_check_slices", 64, 256, KernelArgs.of().pointer(addr).i32(sliceBytes).i32(srcSlice.length).pointer(slices.address()).i32(seed)
        .pointer(wrong.address()));
    stream.synchronize();
    return Integer.toUnsignedLong(ints(wrong.address(), 1)[0]);
  }

  long[] longs(long addr, int n) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment s = a.allocate(8L * n);
      gpu.copyDeviceToHost(s, addr, s.byteSize());
      return s.toArray(java.lang.foreign.ValueLayout.JAVA_LONG);
    }
  }

  int[] ints(long addr, int n) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment s = a.allocate(4L * n);
      gpu.copyDeviceToHost(s, addr, s.byteSize());
      return s.toArray(java.lang.foreign.ValueLayout.JAVA_INT);
    }
  }

  List<Cqe> cqes(long addr, int n) {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment s = a.allocate((long) GpuQueueLayout.CQE_BYTES * Math.max(n, 1));
      gpu.copyDeviceToHost(s, addr, (long) GpuQueueLayout.CQE_BYTES * n);
      List<Cqe> out = new ArrayList<>();
      for (int i = 0; i < n; i++) out.add(Cqe.at(s, i));
      return out;
    }
  }

  @Override
  public void close() {
    for (DeviceBuffer b : buffers) b.close();
    buffers.clear();
    stream.close();
    module.close();
  }
}
