package org.mori4j.examples;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;
import static org.mori4j.examples.ShmemAllReduce.*;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.shmem.Shmem;
import org.mori4j.shmem.ShmemConfig;
import org.mori4j.shmem.ShmemKernels;
import org.mori4j.shmem.collectives.AllReduceAlgorithm;
import org.mori4j.shmem.collectives.AllReduceReference;
import org.mori4j.shmem.collectives.ShmemCollectives;
import org.mori4j.shmem.collectives.ShmemReduceOp;

/**
 * One PE of {@link ShmemAllReduce}: its shmem, its collectives, a stream of its GPU, and its part of the checks (both
 * all-reduce kernels against the CPU reference, then the ring put + signal kernel); the values every PE fills in and
 * the reference they are checked against are here too, so that parent and child JVMs compute them alike.
 */
final class ShmemAllReducePe {
  final int rank;
  final ShmemAllReduce.Options o;
  final ShmemConfig config;
  final PrintStream out;
  int wrong;

  ShmemAllReducePe(int rank, ShmemAllReduce.Options o, ShmemConfig config, PrintStream out) {
    this.rank = rank;
    this.o = o;
    this.config = config;
    this.out = out;
  }

  int run() {
    int n = o.nPes();
    // the example needs a few MiB per PE; MORI's default heap (4 GiB) would be taken n times from one GPU when
    // PEs share it. MORI_SHMEM_HEAP_SIZE, when set, is used as it is (every PE has the same environment).
    long heap = System.getenv("MORI_SHMEM_HEAP_SIZE") != null ? config.heapSize() : roundUp((n + 2) * BYTES + (16L << 20), 1L << 20);
    ShmemConfig mine = config.withDevice(o.device()).withHeapSize(heap).withTimeout(Duration.ofSeconds(60));
    try (Shmem shmem = Shmem.initWithUniqueId(rank, n, o.uniqueId(), mine)) {
      GpuRuntime gpu = shmem.gpu();
      GpuStream stream = gpu.createStream(shmem.device());
      // kernel B's scratch holds one tensor per peer; AUTO keeps the measured size split between the kernels
      ShmemCollectives.Settings settings = new ShmemCollectives.Settings(roundUp(BYTES, 256), ShmemCollectives.Settings.defaults().putSignalMaxBytes(), 0);
      try (ShmemCollectives coll = ShmemCollectives.create(shmem, settings); PinnedBuffer host = gpu.allocPinned(BYTES)) {
        say("shmem PE %d of %d up on GPU %d (%s), heap %d MiB; collectives: %d blocks x 512 threads per kernel", rank, n, shmem.device(),
            gpu.pciBusId(shmem.device()), heap >> 20, coll.maxBlocks());
        long tensor = shmem.malloc(BYTES);
        try {
          allReduce(shmem, coll, stream, tensor, host);
        } finally {
          shmem.free(tensor);
        }
        ring(shmem, stream);
        stream.synchronize();
      } finally {
        stream.close();
      }
    }
    return wrong == 0 ? 0 : 1;
  }

  private void allReduce(Shmem shmem, ShmemCollectives coll, GpuStream stream, long tensor, PinnedBuffer host) {
    int n = o.nPes();
    MemorySegment input = host.segment();
    fill(input, rank);
    byte[] want = reference(n);
    String what = String.format(Locale.ROOT, "all-reduce (sum) of a %d x %d bf16 tensor (%d KiB)", ROWS, COLS, BYTES >> 10);
    say("%s: this PE's values uploaded; every PE computes the CPU reference from all %d PEs' values", what, n);
    for (AllReduceAlgorithm a : List.of(AllReduceAlgorithm.P2P_READ, AllReduceAlgorithm.PUT_SIGNAL)) check(shmem, coll, stream, tensor, input, want, a, what);

    // timing: every PE makes the same calls; PE 0 reports its own. Unmeasured calls of both kernels first: the
    // first few hundred calls run the host side (argument packing, FFM downcalls) in the interpreter and cost
    // several times a compiled call (without this warm-up the first kernel timed measured mostly the interpreter)
    shmem.barrierAll();
    for (int i = 0; i < WARMUP_CALLS; i++) {
      coll.allReduce(tensor, COUNT, TYPE, ShmemReduceOp.SUM, stream, i % 2 == 0 ? AllReduceAlgorithm.P2P_READ : AllReduceAlgorithm.PUT_SIGNAL);
      stream.synchronize();
    }
    List<String> times = new ArrayList<>();
    for (AllReduceAlgorithm a : List.of(AllReduceAlgorithm.P2P_READ, AllReduceAlgorithm.PUT_SIGNAL)) {
      Runnable call = () -> coll.allReduce(tensor, COUNT, TYPE, ShmemReduceOp.SUM, stream, a);
      shmem.barrierAll();
      for (int i = 0; i < WARMUP_ITERS; i++) {
        call.run();
        stream.synchronize();
      }
      long[] ns = new long[o.iters()];
      for (int i = 0; i < ns.length; i++) {
        long t0 = System.nanoTime();
        call.run();
        stream.synchronize();
        ns[i] = System.nanoTime() - t0;
      }
      // the same number of calls queued back to back: what the kernels cost without a host round trip each
      shmem.barrierAll();
      double queuedUs;
      try (GpuEvent start = shmem.gpu().createEvent(shmem.device(), true); GpuEvent end = shmem.gpu().createEvent(shmem.device(), true)) {
        start.record(stream);
        for (int i = 0; i < o.iters(); i++) call.run();
        end.record(stream);
        end.synchronize();
        queuedUs = end.elapsedMillisSince(start) * 1000.0 / o.iters();
      }
      Arrays.sort(ns);
      times.add(String.format(Locale.ROOT, "%s p50 %.1f us, min %.1f us (launch + synchronize, %d calls); %.1f us per call back to back",
          name(a), ns[ns.length / 2] / 1e3, ns[0] / 1e3, ns.length, queuedUs));
    }
    // the values grew in the timed calls (in-place sums): fresh input, and the kernel AUTO picks, checked once more
    check(shmem, coll, stream, tensor, input, want, AllReduceAlgorithm.AUTO, what + " after the timed calls");
    if (rank == 0) {
      say("time per all-reduce of %d x %d bf16 over %d PEs (PE 0's clock):", ROWS, COLS, n);
      for (String t : times) say("  %s", t);
    }
  }

  /** Uploads this PE's values, runs one all-reduce with {@code a}, and compares every byte with the reference. */
  private void check(Shmem shmem, ShmemCollectives coll, GpuStream stream, long tensor, MemorySegment input, byte[] want, AllReduceAlgorithm a, String what) {
    GpuRuntime gpu = shmem.gpu();
    gpu.copyHostToDeviceAsync(tensor, input, BYTES, stream);
    stream.synchronize();
    shmem.barrierAll(); // no PE's kernel reads a peer's tensor before that peer's upload is done
    coll.allReduce(tensor, COUNT, TYPE, ShmemReduceOp.SUM, stream, a);
    stream.synchronize();
    String kernel = a == AllReduceAlgorithm.AUTO ? "AUTO -> " + name(coll.allReduceAlgorithmFor(BYTES)) : name(a);
    try (PinnedBuffer back = gpu.allocPinned(BYTES)) {
      MemorySegment got = back.segment();
      MemorySegment w = MemorySegment.ofArray(want);
      gpu.copyDeviceToHostAsync(got, tensor, BYTES, stream);
      stream.synchronize();
      long bad = 0, first = -1;
      for (long i = 0; i < COUNT; i++) {
        if (got.get(JAVA_SHORT_UNALIGNED, i * 2) != w.get(JAVA_SHORT_UNALIGNED, i * 2)) {
          if (first < 0) first = i;
          bad++;
        }
      }
      if (bad == 0) {
        say("%s, kernel %s: exact (all %d elements equal the CPU reference's bits)", what, kernel, COUNT);
      } else {
        wrong++;
        say("%s, kernel %s: MISMATCH in %d of %d elements; first at [%d][%d]: want %s, got %s", what, kernel, bad, COUNT, first / COLS, first % COLS,
            AllReduceReference.load(TYPE, w, first * 2), AllReduceReference.load(TYPE, got, first * 2));
      }
    }
    shmem.barrierAll(); // nobody uploads the next input while a peer's kernel may still read this one
  }

  /**
   * The custom kernel: every PE puts {@link #RING_BYTES} of its own pattern into the next PE's {@code dst} with a
   * signal, waits for the previous PE's signal and counts, on the GPU, the bytes that differ from that PE's
   * pattern; the host checks the same bytes again.
   */
  private void ring(Shmem shmem, GpuStream stream) {
    GpuRuntime gpu = shmem.gpu();
    int n = o.nPes(), prev = (rank + n - 1) % n, next = (rank + 1) % n;
    long src = shmem.malloc(RING_BYTES);
    long dst = shmem.malloc(RING_BYTES);
    long words = shmem.mallocAlign(256, 256); // [0]: the signal word, [8]: the GPU's count of wrong bytes
    try (GpuModule module = ShmemKernels.compile(shmem, RING_SOURCE, "example_ring_put_signal.cu");
         PinnedBuffer host = gpu.allocPinned(RING_BYTES); Arena arena = Arena.ofConfined()) {
      // CUDA loads a kernel at its first launch, which may wait for running kernels to end: a PE spinning in the
      // wait would then keep a PE of the same GPU from ever loading it. Load it on every PE first.
      ShmemCollectives.preload(shmem, module, Map.of(RING_KERNEL, 5));
      MemorySegment seg = host.segment();
      for (long i = 0; i < RING_BYTES; i++) seg.set(JAVA_BYTE, i, ringByte(rank, i));
      gpu.copyHostToDeviceAsync(src, seg, RING_BYTES, stream);
      gpu.fill(dst, (byte) 0, RING_BYTES);
      gpu.fill(words, (byte) 0, 256);
      stream.synchronize();
      MemorySegment word = arena.allocate(8, 8);
      gpu.copyDeviceToHost(word, words, 8); // a synchronous read: the fills are done before any peer can signal
      shmem.barrierAll();
      gpu.launch(module.function(RING_KERNEL), Dim3.of(1), Dim3.of(RING_THREADS), 0, stream,
          KernelArgs.of().pointer(src).pointer(dst).pointer(words).i64(RING_BYTES).pointer(words + 8));
      stream.synchronize();
      MemorySegment counters = arena.allocate(16, 8);
      gpu.copyDeviceToHost(counters, words, 16);
      long signal = counters.get(JAVA_LONG, 0), gpuWrong = counters.get(JAVA_LONG, 8);
      gpu.copyDeviceToHostAsync(seg, dst, RING_BYTES, stream);
      stream.synchronize();
      long hostWrong = 0;
      for (long i = 0; i < RING_BYTES; i++) if (seg.get(JAVA_BYTE, i) != ringByte(prev, i)) hostWrong++;
      boolean ok = signal == 1 && gpuWrong == 0 && hostWrong == 0;
      if (!ok) wrong++;
      say("put + signal (kernel %s, compiled with the device library): sent %d KiB to PE %d with SIGNAL_ADD; PE %d's signal seen (word = %d), "
          + "its %d bytes checked on the GPU (%d wrong) and on the host (%d wrong): %s", RING_KERNEL,
          RING_BYTES >> 10, next, prev, signal, RING_BYTES, gpuWrong, hostWrong, ok ? "exact" : "MISMATCH");
      shmem.barrierAll(); // every PE's kernel has read its dst before any heap is freed
    } finally {
      shmem.free(words);
      shmem.free(dst);
      shmem.free(src);
    }
  }

  private void say(String format, Object... args) {
    String line = "PE " + rank + ": " + String.format(Locale.ROOT, format, args);
    synchronized (out) {
      out.println(line);
      out.flush();
    }
  }

  // ---------------------------------------------------------------- values

  /** PE {@code pe}'s values: pseudo-random in [-4, 4) from a seed of its rank, rounded to bf16. */
  static void fill(MemorySegment seg, int pe) {
    Random random = new Random(7919L * (pe + 1));
    for (long i = 0; i < COUNT; i++) AllReduceReference.store(TYPE, seg, i * TYPE.bytes(), random.nextFloat() * 8 - 4);
  }

  /** The sum over all {@code n} PEs' values, as the kernels define it (fp32 in PE order, rounded once to bf16). */
  static byte[] reference(int n) {
    List<MemorySegment> inputs = new ArrayList<>();
    for (int p = 0; p < n; p++) {
      MemorySegment in = MemorySegment.ofArray(new byte[(int) BYTES]);
      fill(in, p);
      inputs.add(in);
    }
    MemorySegment sum = MemorySegment.ofArray(new byte[(int) BYTES]);
    AllReduceReference.sum(TYPE, inputs, sum, COUNT);
    return sum.toArray(JAVA_BYTE);
  }

  /** The byte {@code i} of PE {@code pe}'s ring message; {@code example_ring_byte} in the kernel computes the same. */
  static byte ringByte(int pe, long i) {
    return (byte) (i * 131 + pe * 29L + 7);
  }
}
