package org.mori4j.examples;



import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.shmem.Shmem;
import org.mori4j.shmem.ShmemConfig;
import org.mori4j.shmem.ShmemKernels;
import org.mori4j.shmem.collectives.AllReduceAlgorithm;
import org.mori4j.shmem.collectives.AllReduceReference;
import org.mori4j.shmem.collectives.ShmemCollectives;
import org.mori4j.shmem.collectives.ShmemDataType;

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

      // the bytes PE `pe` sends; ringByte in ShmemAllReducePe.java computes the same
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
      for (int rank : o.peRanks()) results.add(threads.submit(() -> new ShmemAllReducePe(rank, o, config, out).run()));
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

  static String name(AllReduceAlgorithm a) {
    return switch (a) {
      case P2P_READ -> "A p2p-read";
      case PUT_SIGNAL -> "B put-signal";
      case AUTO -> "AUTO";
    };
  }

  private static String join(List<Integer> ranks) {
    return String.join(", ", ranks.stream().map(String::valueOf).toList());
  }

  static long roundUp(long v, long a) {
    return (v + a - 1) / a * a;
  }

  /** The exception's class and message and its causes' messages, on one line. */
  static String describe(Throwable e) {
    StringBuilder b = new StringBuilder(e.getClass().getSimpleName()).append(": ").append(e.getMessage());
    for (Throwable c = e.getCause(); c != null; c = c.getCause()) b.append(" (caused by ").append(c).append(')');
    return b.toString();
  }
}
