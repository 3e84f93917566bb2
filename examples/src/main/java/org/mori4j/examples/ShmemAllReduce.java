package org.mori4j.examples;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.shmem.Shmem;
import org.mori4j.shmem.ShmemConfig;
import org.mori4j.shmem.ShmemKernels;
import org.mori4j.shmem.collectives.AllReduceAlgorithm;
import org.mori4j.shmem.collectives.AllReduceReference;
import org.mori4j.shmem.collectives.ShmemCollectives;
import org.mori4j.shmem.collectives.ShmemDataType;
import org.mori4j.shmem.collectives.ShmemReduceOp;

/**
 * MORI shmem's all-reduce on the JVM: a group of {@code --np N} PEs (default 2) formed by unique id, one bf16
 * tensor of 64 x 7168 (seed 003's shape) in every PE's symmetric heap, filled with that PE's own values and summed
 * in place by {@link ShmemCollectives#allReduce} with each of the two kernels; every PE checks its result bit for
 * bit against {@link AllReduceReference}, and PE 0 prints the time per all-reduce. Then a kernel of its own,
 * compiled at run time with the shmem device library by {@link ShmemKernels#compile}, sends 64 KiB from every PE
 * to the next with one put + signal and checks on the GPU what arrived (with two PEs: PE 0 and PE 1 send to each
 * other). This process holds PE 0 and makes the unique id; it runs every PE that shares GPU 0 in its own threads
 * and starts one child JVM per other GPU for that GPU's PEs (PE r on GPU r mod the GPUs in use), because kernels
 * of one process share a GPU at the same time while kernels of two processes take turns, which would stall the
 * collectives' barriers. Exit code 0 when every check is exact, 1 on a mismatch or a failed PE, 2 when it cannot
 * run (no GPU, with the GPU runtime's reason, or bad arguments).
 */
public final class ShmemAllReduce {
  private ShmemAllReduce() {}

  static final int ROWS = 64;
  static final int COLS = 7168;
  static final ShmemDataType TYPE = ShmemDataType.BFLOAT16;
  static final long COUNT = (long) ROWS * COLS;
  static final long BYTES = COUNT * TYPE.bytes();
  static final long RING_BYTES = 64 << 10;
  static final int RING_THREADS = 256;
  static final int DEFAULT_ITERS = 200;
  /** Unmeasured calls before each kernel's timed ones. */
  static final int WARMUP_ITERS = 20;
  /** Unmeasured calls of both kernels, alternating, before any timing: JIT warm-up of the host side. */
  static final int WARMUP_CALLS = 400;
  static final String RING_KERNEL = "example_ring_put_signal";

  /**
   * The custom kernel: one put + signal per PE (to the next PE of the ring), a wait for the signal of the previous
   * PE, and a check of that PE's bytes on the GPU. The all-zero launch that {@link ShmemCollectives#preload} makes
   * returns at once ({@code bytes} is 0). Every parameter is 8 bytes wide, as that launch passes them.
   */
  static final String RING_SOURCE = """
      #include "mori_shmem.cuh"

      // the bytes PE `pe` sends; ringByte in ShmemAllReduce.java computes the same
      __device__ __forceinline__ uint8_t example_ring_byte(uint64_t pe, uint64_t i) {
        return (uint8_t) (i * 131u + pe * 29u + 7u);
      }

      extern "C" __global__ void example_ring_put_signal(const uint8_t* src, uint8_t* dst, uint64_t* signal,
                                                         uint64_t bytes, unsigned long long* wrong) {
        if (bytes == 0) return;
        int me = mori_shmem_my_pe(), n = mori_shmem_n_pes();
        int next = (me + 1) % n, prev = (me + n - 1) % n;
        // dst and signal are this PE's symmetric addresses: the library sends to PE next's copies of them, the
        // data first, then (after a system fence, once for the block) an atomic add of 1 to its signal word
        mori_shmem_putmem_nbi_signal_block(dst, src, bytes, signal, 1, SIGNAL_ADD, next, 0);
        if (threadIdx.x == 0) mori_shmem_uint64_wait_until_equals(signal, 1);  // PE prev's data is here
        __syncthreads();
        unsigned long long bad = 0;
        // volatile: the bytes were written by another GPU (or another PE's kernel), never cached here
        for (uint64_t i = threadIdx.x; i < bytes; i += blockDim.x)
          bad += ((volatile uint8_t*) dst)[i] != example_ring_byte(prev, i);
        if (bad != 0) atomicAdd(wrong, bad);
      }
      """;

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** What one invocation was asked to do; {@code peRanks} is null in the process that starts the group. */
  record Options(int nPes, int iters, List<Integer> peRanks, int device, byte[] uniqueId) {}

  /** Runs the example (or, with the hidden {@code --pe-*} options, a child's PEs); returns the exit code. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    Options o;
    try {
      o = parse(args);
    } catch (IllegalArgumentException e) {
      err.println("ShmemAllReduce: " + e.getMessage());
      err.println("usage: ShmemAllReduce [--np N (2..64, default 2)] [--iters K (timed all-reduces per kernel, default " + DEFAULT_ITERS + ")]");
      return 2;
    }
    ShmemConfig config = ShmemConfig.load();
    GpuRuntime gpu = GpuRuntimes.select(config.gpuRuntime());
    // without a GPU every shmem call would fail the same way: say so once, with the runtime's own reason
    if (!gpu.available()) {
      err.println("ShmemAllReduce: needs a GPU, and none can be used here: " + gpu.version());
      return 2;
    }
    int gpus;
    try {
      gpus = gpu.deviceCount();
    } catch (RuntimeException e) {
      err.println("ShmemAllReduce: needs a GPU, and the " + gpu.name() + " runtime cannot list its devices: " + e.getMessage());
      return 2;
    }
    if (gpus < 1) {
      err.println("ShmemAllReduce: needs a GPU: the " + gpu.name() + " runtime (" + gpu.version() + ") sees none");
      return 2;
    }
    try {
      return o.peRanks() == null ? runGroup(o, config, gpu, gpus, out, err) : runPes(o, config, out, err);
    } catch (IOException | InterruptedException | RuntimeException e) {
      err.println("ShmemAllReduce: failed: " + describe(e));
      return 1;
    }
  }

  static Options parse(String[] args) {
    int np = 2, iters = DEFAULT_ITERS, device = 0;
    List<Integer> ranks = null;
    byte[] id = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) throw new IllegalArgumentException(a.startsWith("--") ? a + " needs a value" : "unexpected argument '" + a + "'");
      String v = args[++i];
      try {
        switch (a) {
          case "--np" -> np = Integer.parseInt(v);
          case "--iters" -> iters = Integer.parseInt(v);
          case "--pe-ranks" -> ranks = Arrays.stream(v.split(",")).map(Integer::parseInt).toList();
          case "--pe-device" -> device = Integer.parseInt(v);
          case "--unique-id" -> id = HexFormat.of().parseHex(v);
          default -> throw new IllegalArgumentException("unknown option '" + a + "'");
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(a + ": '" + v + "' is not a number");
      }
    }
    if (np < 2 || np > 64) throw new IllegalArgumentException("--np must be in 2..64 (a put + signal needs two PEs): " + np);
    if (iters < 1) throw new IllegalArgumentException("--iters must be at least 1: " + iters);
    if ((ranks == null) != (id == null)) throw new IllegalArgumentException("--pe-ranks and --unique-id go together (they are for the child JVMs)");
    return new Options(np, iters, ranks, device, id);
  }

  // ---------------------------------------------------------------- the group: this JVM and one child per other GPU

  /** PE r runs on GPU r mod {@code gpusInUse}; these are the ranks of GPU {@code device}. */
  static List<Integer> ranksOf(int device, int gpusInUse, int n) {
    List<Integer> ranks = new ArrayList<>();
    for (int r = device; r < n; r += gpusInUse) ranks.add(r);
    return ranks;
  }

  private static int runGroup(Options o, ShmemConfig config, GpuRuntime gpu, int gpus, PrintStream out, PrintStream err)
      throws IOException, InterruptedException {
    int n = o.nPes();
    int used = Math.min(n, gpus);
    byte[] id = Shmem.getUniqueId(config);
    out.printf(Locale.ROOT, "ShmemAllReduce: %d PEs on %d GPU%s (%s; %s), one JVM per GPU: PE%s %s in this one%s%n", n, used, used == 1 ? "" : "s",
        gpu.deviceName(0), gpu.version(), ranksOf(0, used, n).size() == 1 ? "" : "s", join(ranksOf(0, used, n)),
        used == 1 ? "" : ", the others in " + (used - 1) + " child JVM" + (used == 2 ? "" : "s"));
    List<Process> children = new ArrayList<>();
    try {
      for (int d = 1; d < used; d++) children.add(spawn(d, ranksOf(d, used, n), o, id, out, err));
      int exit = runPes(new Options(n, o.iters(), ranksOf(0, used, n), 0, id), config, out, err);
      for (int d = 1; d < used; d++) {
        Process p = children.get(d - 1);
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
          err.println("ShmemAllReduce: the JVM of GPU " + d + " did not exit within 5 minutes");
          exit = 1;
        } else if (p.exitValue() != 0) {
          err.println("ShmemAllReduce: the JVM of GPU " + d + " (PEs " + join(ranksOf(d, used, n)) + ") exited with " + p.exitValue());
          exit = 1;
        }
      }
      out.println(exit == 0 ? "ShmemAllReduce: OK, every check on every PE exact" : "ShmemAllReduce: FAILED (see above)");
      return exit;
    } finally {
      for (Process p : children) if (p.isAlive()) p.destroyForcibly();
    }
  }

  /** A child JVM (same java, same class path) for the PEs of GPU {@code device}; its output is copied to ours. */
  private static Process spawn(int device, List<Integer> ranks, Options o, byte[] id, PrintStream out, PrintStream err) throws IOException {
    String java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java");
    List<String> cmd = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"));
    String logConfig = System.getProperty("logback.configurationFile");
    if (logConfig != null) cmd.add("-Dlogback.configurationFile=" + logConfig);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ShmemAllReduce.class.getName(), "--np", Integer.toString(o.nPes()),
        "--iters", Integer.toString(o.iters()), "--pe-ranks", join(ranks).replace(" ", ""), "--pe-device", Integer.toString(device),
        "--unique-id", HexFormat.of().formatHex(id)));
    Process p = new ProcessBuilder(cmd).start();
    copy(p.getInputStream(), out, "", "gpu-" + device + "-stdout");
    copy(p.getErrorStream(), err, "[gpu " + device + "] ", "gpu-" + device + "-stderr");
    p.onExit().thenAccept(done -> {
      if (done.exitValue() != 0)
        err.println("ShmemAllReduce: the JVM of GPU " + device + " exited with " + done.exitValue() + "; the PEs waiting for it fail once they notice");
    });
    return p;
  }

  private static void copy(java.io.InputStream from, PrintStream to, String prefix, String thread) {
    Thread.ofPlatform().daemon().name(thread).start(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(from, StandardCharsets.UTF_8))) {
        for (String l; (l = r.readLine()) != null; ) {
          synchronized (to) {
            to.println(prefix + l);
          }
        }
      } catch (IOException gone) {
        // the child is gone; its exit code says how
      }
    });
  }

  /** This JVM's PEs, one thread each; returns 0 when all of them found every result exact. */
  private static int runPes(Options o, ShmemConfig config, PrintStream out, PrintStream err) throws InterruptedException {
    ExecutorService threads = Executors.newFixedThreadPool(o.peRanks().size(), Thread.ofPlatform().name("pe-", 0).factory());
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int rank : o.peRanks()) results.add(threads.submit(() -> new Pe(rank, o, config, out).run()));
      int exit = 0;
      for (int i = 0; i < results.size(); i++) {
        try {
          exit = Math.max(exit, results.get(i).get());
        } catch (ExecutionException e) {
          err.println("PE " + o.peRanks().get(i) + ": failed: " + describe(e.getCause()));
          exit = 1;
        }
      }
      return exit;
    } finally {
      threads.shutdownNow();
    }
  }

  // ---------------------------------------------------------------- one PE

  /** One PE: its shmem, its collectives, a stream of its GPU, and its part of the checks. */
  static final class Pe {
    final int rank;
    final Options o;
    final ShmemConfig config;
    final PrintStream out;
    int wrong;

    Pe(int rank, Options o, ShmemConfig config, PrintStream out) {
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

  private static String name(AllReduceAlgorithm a) {
    return switch (a) {
      case P2P_READ -> "A p2p-read";
      case PUT_SIGNAL -> "B put-signal";
      case AUTO -> "AUTO";
    };
  }

  private static String join(List<Integer> ranks) {
    return String.join(", ", ranks.stream().map(String::valueOf).toList());
  }

  private static long roundUp(long v, long a) {
    return (v + a - 1) / a * a;
  }

  /** The exception's class and message and its causes' messages, on one line. */
  static String describe(Throwable e) {
    StringBuilder b = new StringBuilder(e.getClass().getSimpleName()).append(": ").append(e.getMessage());
    for (Throwable c = e.getCause(); c != null; c = c.getCause()) b.append(" (caused by ").append(c).append(')');
    return b.toString();
  }
}
