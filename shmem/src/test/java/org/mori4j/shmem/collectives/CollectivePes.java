package org.mori4j.shmem.collectives;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.shmem.Shmem;

/**
 * The PEs of a GPU collectives test as threads of this JVM, with what those tests share: running a body on every
 * rank at once (collective calls need all PEs), moving a PE's buffer in and out, and checking an all-reduce
 * against {@link AllReduceReference} bit for bit.
 */
final class CollectivePes implements AutoCloseable {
  /** One PE's state: its shmem, collectives, stream and a buffer in its heap. */
  record Pe(Shmem shmem, ShmemCollectives coll, GpuStream stream, long buffer) {}

  private final int n;
  private final ExecutorService pool;
  private final List<Pe> pes = new ArrayList<>();

  /** Starts {@code n} PEs, each made by {@code start} on its own thread at once. */
  CollectivePes(int n, IntFunction<Pe> start) throws Exception {
    this.n = n;
    this.pool = Executors.newFixedThreadPool(n);
    pes.addAll(onAll(start));
  }

  Pe get(int rank) {
    return pes.get(rank);
  }

  int size() {
    return n;
  }

  /** Runs {@code body} for every rank at once and returns the results in rank order. */
  <T> List<T> onAll(IntFunction<T> body) throws Exception {
    List<Future<T>> futures = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      int rank = r;
      futures.add(pool.submit(() -> body.apply(rank)));
    }
    List<T> out = new ArrayList<>();
    for (Future<T> f : futures) out.add(f.get(300, TimeUnit.SECONDS));
    return out;
  }

  /**
   * {@code repeat} all-reduces in a row on each PE's stream at {@code offset} of its buffer, then one check of every
   * PE's bytes against the reference applied as often. Inputs are {@link #finiteValues} seeded by
   * {@code seedStep * rank + count + type}; failures are named by {@code label}.
   */
  void checkAllReduce(AllReduceAlgorithm algorithm, ShmemDataType type, long count, long offset, int repeat, long seedStep, String label)
      throws Exception {
    long bytes = count * type.bytes();
    List<byte[]> inputs = new ArrayList<>();
    for (int p = 0; p < n; p++) inputs.add(finiteValues(type, count, seedStep * p + count + type.ordinal()));
    List<byte[]> out = onAll(rank -> {
      Pe pe = pes.get(rank);
      upload(pe, inputs.get(rank), offset);
      for (int i = 0; i < repeat; i++) pe.coll().allReduce(pe.buffer() + offset, count, type, ShmemReduceOp.SUM, pe.stream(), algorithm);
      return download(pe, bytes, offset);
    });
    List<MemorySegment> expected = new ArrayList<>();
    for (byte[] in : inputs) expected.add(MemorySegment.ofArray(in.clone()));
    MemorySegment result = MemorySegment.ofArray(new byte[(int) bytes]);
    for (int i = 0; i < repeat; i++) {
      AllReduceReference.sum(type, expected, result, count);
      for (MemorySegment e : expected) e.copyFrom(result);
    }
    byte[] want = result.toArray(JAVA_BYTE);
    for (int p = 0; p < n; p++)
      assertBytes(want, out.get(p), label + algorithm + " " + type + " x " + count + (offset != 0 ? " at +" + offset : "")
          + (repeat > 1 ? " x" + repeat : "") + ", PE " + p);
  }

  /** Synchronizes every PE's stream, then closes its collectives, stream and shmem; stops the threads. */
  @Override
  public void close() throws Exception {
    onAll(rank -> {
      Pe pe = pes.get(rank);
      pe.stream().synchronize();
      pe.coll().close();
      pe.stream().close();
      pe.shmem().close();
      return null;
    });
    pool.shutdownNow();
  }

  /** Values in [-8, 8) with random low mantissa bits, so sums round in every type and no fp16 overflows. */
  static byte[] finiteValues(ShmemDataType type, long count, long seed) {
    Random random = new Random(seed);
    MemorySegment out = MemorySegment.ofArray(new byte[(int) (count * type.bytes())]);
    for (long i = 0; i < count; i++) AllReduceReference.store(type, out, i * type.bytes(), (random.nextFloat() * 16 - 8) * (random.nextInt(8) == 0 ? 1e-3f : 1f));
    return out.toArray(JAVA_BYTE);
  }

  /**
   * Copies {@code data} into the PE's buffer through pinned memory on the PE's stream, waits, then meets the other
   * PEs in a host barrier: no PE launches a kernel (which spins until the others' kernels arrive) while another
   * PE is still copying its input.
   */
  static void upload(Pe pe, byte[] data, long offset) {
    GpuRuntime gpu = pe.shmem().gpu();
    try (PinnedBuffer host = gpu.allocPinned(Math.max(1, data.length))) {
      MemorySegment.copy(data, 0, host.segment(), JAVA_BYTE, 0, data.length);
      gpu.copyHostToDeviceAsync(pe.buffer() + offset, host.segment(), data.length, pe.stream());
      pe.stream().synchronize();
    }
    pe.shmem().barrierAll();
  }

  static byte[] download(Pe pe, long bytes, long offset) {
    GpuRuntime gpu = pe.shmem().gpu();
    try (PinnedBuffer host = gpu.allocPinned(Math.max(1, bytes))) {
      gpu.copyDeviceToHostAsync(host.segment(), pe.buffer() + offset, bytes, pe.stream());
      pe.stream().synchronize();
      return host.segment().asSlice(0, bytes).toArray(JAVA_BYTE);
    }
  }

  static void assertBytes(byte[] want, byte[] got, String what) {
    assertEquals(want.length, got.length, what + ": length");
    for (int i = 0; i < want.length; i++)
      if (want[i] != got[i]) fail(String.format("%s: first wrong byte at %d of %d: want 0x%02x, got 0x%02x", what, i, want.length, want[i], got[i]));
  }
}
