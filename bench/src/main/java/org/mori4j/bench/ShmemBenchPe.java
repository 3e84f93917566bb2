package org.mori4j.bench;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.natives.nccl.Nccl;
import org.mori4j.natives.nccl.NcclCommunicator;
import org.mori4j.natives.nccl.NcclDataType;
import org.mori4j.natives.nccl.NcclRedOp;
import org.mori4j.natives.nccl.NcclUniqueId;
import org.mori4j.shmem.Shmem;
import org.mori4j.shmem.ShmemKernels;
import org.mori4j.shmem.collectives.AllReduceAlgorithm;
import org.mori4j.shmem.collectives.AllReduceReference;
import org.mori4j.shmem.collectives.ShmemCollectives;
import org.mori4j.shmem.collectives.ShmemDataType;
import org.mori4j.shmem.collectives.ShmemReduceOp;

/**
 * One PE of {@code mori4j shmem-bench}, in its own JVM: measures, beside each other and in the same run, the two
 * shmem all-reduce kernels, NCCL's all-reduce of the same tensor on the same GPUs (through FFM, on its own stream)
 * and a raw peer copy of the same bytes to the next PE; then a put of 4 KiB .. max from PE 0 to PE 1 beside the
 * raw peer copy of the same size, and the 8-byte put + signal + wait round trip between PE 0 and PE 1. Every
 * iteration is one launch (or NCCL call, or copy) plus a synchronize of its stream, timed on the host; a host
 * barrier of all PEs starts each row. PE 0's timings are the ones reported. Before the timed iterations of each
 * all-reduce row, one call on fresh input is checked on every PE against {@link AllReduceReference} (the input is
 * small integers, so the sum is exact in any order and NCCL's result is checked too); a put is checked on PE 1.
 */
final class ShmemBenchPe {
  static final String KERNELS_RESOURCE = "/org/mori4j/bench/shmem_bench.cu";
  static final String NCCL_NA_ONE_GPU = "n/a: NCCL needs one GPU per rank";

  /** What the parent passes to each PE. */
  record Settings(int rank, int nPes, int device, byte[] shmemId, NcclUniqueId ncclId, String ncclMissing, ShmemDataType type,
                  List<Long> allReduceSizes, List<Long> putSizes, int iters, int warmupIters, int rttRounds, int rttLaunches, long heapSize,
                  Path json, String machine, Path plot, byte[] proxyShmemId, int proxyIters) {}

  /** The label of rows whose bytes the host proxy moved: nothing on this machine is a NIC. */
  static final String PROXY_LABEL = "host proxy (emulated NIC)";

  private final Settings s;
  private final Shmem shmem;
  private final GpuRuntime gpu;
  private final GpuStream stream;
  private final int me;
  private final int n;
  private final List<BaselineRow> rows = new ArrayList<>();
  private final List<String> comparisons = new ArrayList<>();
  /** P2P put-signal and NCCL p50 per all-reduce size, for the host-proxy comparison. */
  private final java.util.Map<Long, double[]> p2pP50 = new java.util.HashMap<>();
  private int failures;

  private ShmemBenchPe(Settings s, Shmem shmem) {
    this.s = s;
    this.shmem = shmem;
    this.gpu = shmem.gpu();
    this.stream = gpu.createStream(shmem.device());
    this.me = shmem.myPe();
    this.n = shmem.nPes();
  }

  /** Runs this PE's part; returns the exit code (0, or 1 when a result was wrong). Rank 0 prints the tables to {@code out}. */
  static int run(Settings s, PrintStream out) throws IOException {
    Shmem shmem = Shmem.initWithUniqueId(s.rank(), s.nPes(), s.shmemId(), org.mori4j.shmem.ShmemConfig.load().withDevice(s.device()).withHeapSize(s.heapSize()));
    ShmemBenchPe pe;
    int exit;
    try {
      pe = new ShmemBenchPe(s, shmem);
      try {
        exit = pe.measure(out);
      } finally {
        pe.stream.close();
      }
    } finally {
      shmem.close();
    }
    if (s.proxyShmemId() != null) exit = Math.max(exit, pe.measureProxy());
    if (s.rank() == 0) pe.report(out);
    return exit;
  }

  /**
   * The all-reduce again in a second group of the same PEs with {@code MORI_DISABLE_P2P}: kernel B (AUTO picks
   * it) through the GPU-initiated endpoints, every put and signal executed by the PEs' host proxies over TCP.
   * Each size is checked on every PE before it is timed; rows are labelled {@link #PROXY_LABEL}.
   */
  private int measureProxy() {
    int bad = 0;
    Shmem proxy = Shmem.initWithUniqueId(s.rank(), s.nPes(), s.proxyShmemId(),
        org.mori4j.shmem.ShmemConfig.load().withDevice(s.device()).withHeapSize(s.heapSize()).withDisableP2p(true));
    long max = s.allReduceSizes().stream().mapToLong(Long::longValue).max().orElse(0);
    try (GpuStream on = gpu.createStream(proxy.device());
         ShmemCollectives coll = ShmemCollectives.create(proxy, new ShmemCollectives.Settings(roundUp(max, 256), roundUp(max, 256), 0));
         PinnedBuffer host = gpu.allocPinned(max); PinnedBuffer back = gpu.allocPinned(max)) {
      long buffer = proxy.malloc(max);
      ShmemDataType type = s.type();
      for (long bytes : s.allReduceSizes()) {
        long count = bytes / type.bytes();
        MemorySegment mine = host.segment().asSlice(0, bytes);
        fillInput(mine, type, count, me);
        byte[] want = reference(type, count, bytes);
        gpu.copyHostToDeviceAsync(buffer, mine, bytes, on);
        on.synchronize();
        proxy.barrierAll();
        coll.allReduce(buffer, count, type, ShmemReduceOp.SUM, on);
        on.synchronize();
        gpu.copyDeviceToHostAsync(back.segment(), buffer, bytes, on);
        on.synchronize();
        long wrong = MemorySegment.mismatch(back.segment(), 0, bytes, MemorySegment.ofArray(want), 0, bytes);
        if (wrong >= 0) {
          bad++;
          System.err.printf(Locale.ROOT, "shmem-bench PE %d: all-reduce %s over the %s: wrong result at byte %d%n", me, HumanSize.format(bytes), PROXY_LABEL, wrong);
        }
        proxy.barrierAll();
        long[] lat = new long[s.proxyIters()];
        for (int i = -Math.min(2, s.warmupIters()); i < lat.length; i++) {
          long t0 = System.nanoTime();
          coll.allReduce(buffer, count, type, ShmemReduceOp.SUM, on);
          on.synchronize();
          if (i >= 0) lat[i] = System.nanoTime() - t0;
        }
        ResultRow row = ResultRow.fromLatencies(bytes, 1, lat);
        if (me == 0) {
          rows.add(new BaselineRow("shmem allreduce put-signal, " + PROXY_LABEL, row,
              "MORI_DISABLE_P2P: kernel B's puts + signals through GPU-initiated endpoints, executed by the host proxy over TCP; launch + synchronize"));
          double[] ref = p2pP50.get(bytes);
          comparisons.add(String.format(Locale.ROOT, "all-reduce %s over the %s: p50 %.1f us = %.1fx the P2P put-signal kernel (%.2f us)%s", HumanSize.format(bytes),
              PROXY_LABEL, row.p50LatUs(), ref == null ? Double.NaN : row.p50LatUs() / ref[0], ref == null ? Double.NaN : ref[0],
              ref == null || Double.isNaN(ref[1]) ? "" : String.format(Locale.ROOT, ", %.1fx NCCL (%.2f us)", row.p50LatUs() / ref[1], ref[1])));
        }
      }
      on.synchronize();
      proxy.barrierAll();
      proxy.free(buffer);
    } finally {
      proxy.close();
    }
    failures += bad;
    return bad == 0 ? 0 : 1;
  }

  private int measure(PrintStream out) throws IOException {
    long max = s.allReduceSizes().stream().mapToLong(Long::longValue).max().orElse(0);
    max = Math.max(max, s.putSizes().stream().mapToLong(Long::longValue).max().orElse(0));
    NcclCommunicator nccl = s.ncclId() == null ? null : NcclCommunicator.initRank(s.device(), n, me, s.ncclId());
    try (ShmemCollectives coll = ShmemCollectives.create(shmem, new ShmemCollectives.Settings(roundUp(max, 256), ShmemCollectives.Settings.defaults()
        .putSignalMaxBytes(), 0)); Arena arena = Arena.ofShared()) {
      long buffer = shmem.malloc(max);
      long dst = shmem.malloc(max);
      long words = shmem.malloc(256);
      GpuModule kernels = ShmemKernels.compile(shmem, resource(KERNELS_RESOURCE), "shmem_bench.cu");
      // the ping-pong spins until its peer answers: load it (and the put) everywhere before anyone runs it
      ShmemCollectives.preload(shmem, kernels, java.util.Map.of("mori4j_bench_put", 4, "mori4j_bench_pingpong", 7));
      shmem.barrierAll();
      PinnedBuffer host = gpu.allocPinned(max);
      try {
        if (me == 0) header(out, coll, nccl);
        warmUp(coll, buffer);
        for (long bytes : s.allReduceSizes()) allReduceRows(coll, nccl, buffer, dst, bytes, host);
        ShmemBenchPointToPoint p2p = new ShmemBenchPointToPoint(s, shmem, stream, rows, comparisons);
        failures += p2p.putRows(kernels, buffer, dst, host);
        p2p.roundTrip(kernels, words);
        stream.synchronize();
        shmem.barrierAll();
      } finally {
        host.close();
        kernels.close();
        shmem.free(words);
        shmem.free(dst);
        shmem.free(buffer);
      }
    } finally {
      if (nccl != null) nccl.close();
    }
    return failures == 0 ? 0 : 1;
  }

  private void header(PrintStream out, ShmemCollectives coll, NcclCommunicator nccl) {
    out.printf(Locale.ROOT, "mori4j shmem-bench: %d PEs, one JVM per GPU (PEs of one GPU share it), %s, %s%n", n, s.machine(), gpu.version());
    out.printf(Locale.ROOT, "  all-reduce %s sum in place, %d sizes %s .. %s; %d iterations after %d warm-up, PE 0's timings (launch + stream synchronize)%n",
        s.type(), s.allReduceSizes().size(), HumanSize.format(s.allReduceSizes().getFirst()), HumanSize.format(s.allReduceSizes().getLast()), s.iters(), s.warmupIters());
    out.printf(Locale.ROOT, "  shmem kernels: %d blocks x 512 threads at most; AUTO picks put-signal up to %s; NCCL: %s%n", coll.maxBlocks(),
        HumanSize.format(Math.max(1, coll.settings().putSignalMaxBytes())),
        nccl != null ? Nccl.versionString() + " from " + Nccl.library().loadedName().orElse("?") + " (NCCL_NVLS_ENABLE=" + System.getenv("NCCL_NVLS_ENABLE") + ")"
            : s.ncclMissing());
    out.flush();
  }

  // ---------------------------------------------------------------- all-reduce

  private void allReduceRows(ShmemCollectives coll, NcclCommunicator nccl, long buffer, long dst, long bytes, PinnedBuffer host) {
    ShmemDataType type = s.type();
    long count = bytes / type.bytes();
    MemorySegment mine = host.segment().asSlice(0, bytes);
    fillInput(mine, type, count, me);
    byte[] want = reference(type, count, bytes);
    String size = HumanSize.format(bytes) + (type == ShmemDataType.BFLOAT16 && count == 64 * 7168 ? " (64 x 7168 bf16)" : "");
    double best = Double.NaN, ncclP50 = Double.NaN;
    String bestName = "";
    for (AllReduceAlgorithm a : List.of(AllReduceAlgorithm.P2P_READ, AllReduceAlgorithm.PUT_SIGNAL)) {
      Runnable call = () -> coll.allReduce(buffer, count, type, ShmemReduceOp.SUM, stream, a);
      check("shmem " + name(a) + " " + size, buffer, bytes, mine, want, call, stream);
      shmem.barrierAll();
      ResultRow row = ResultRow.fromLatencies(bytes, 1, timed(() -> {
        call.run();
        stream.synchronize();
      }));
      rows.add(new BaselineRow("shmem allreduce " + name(a), row, "one kernel launch + synchronize"));
      if (Double.isNaN(best) || row.p50LatUs() < best) {
        best = row.p50LatUs();
        bestName = name(a);
      }
    }
    if (nccl != null) {
      NcclDataType nt = switch (type) {
        case BFLOAT16 -> NcclDataType.BFLOAT16;
        case FLOAT16 -> NcclDataType.FLOAT16;
        default -> NcclDataType.FLOAT32;
      };
      Runnable call = () -> nccl.allReduce(buffer, buffer, count, nt, NcclRedOp.SUM);
      check("nccl " + size, buffer, bytes, mine, want, () -> {
        call.run();
        nccl.synchronize();
      }, stream);
      shmem.barrierAll();
      ResultRow row = ResultRow.fromLatencies(bytes, 1, timed(() -> {
        call.run();
        nccl.synchronize();
      }));
      rows.add(new BaselineRow("nccl allreduce", row, "ncclAllReduce in place + synchronize, same buffer"));
      ncclP50 = row.p50LatUs();
    } else {
      rows.add(BaselineRow.missing("nccl allreduce", s.ncclMissing()));
    }
    int next = (me + 1) % n;
    long peerDst = shmem.ptrP2p(dst, me, next);
    shmem.barrierAll();
    ResultRow copy = ResultRow.fromLatencies(bytes, 1, timed(() -> {
      gpu.copyDeviceToDeviceAsync(peerDst, buffer, bytes, stream);
      stream.synchronize();
    }));
    rows.add(new BaselineRow("raw peer copy", copy,
        "cuMemcpyDtoDAsync of the tensor to the next PE's GPU" + (gpu.pointerInfo(peerDst).device() == shmem.device() ? " (same GPU)" : "")
            + " + synchronize, all PEs at once"));
    double putSignalP50 = rows.stream().filter(b -> b.series().equals("shmem allreduce put-signal") && b.row() != null && b.row().msgSize() == bytes)
        .mapToDouble(b -> b.row().p50LatUs()).reduce((x, y) -> y).orElse(Double.NaN);
    p2pP50.put(bytes, new double[] {putSignalP50, ncclP50});
    comparisons.add(String.format(Locale.ROOT, "all-reduce %s: best shmem kernel %s p50 %.2f us %s; raw copy p50 %.2f us", size, bestName, best,
        Double.isNaN(ncclP50) ? "(NCCL not measured)" : String.format(Locale.ROOT, "= %.2fx NCCL's p50 %.2f us", best / ncclP50, ncclP50), copy.p50LatUs()));
  }

  /** Unmeasured calls of both kernels at the smallest size, so that the first row does not pay for the JIT and first launches. */
  private void warmUp(ShmemCollectives coll, long buffer) {
    long count = s.allReduceSizes().getFirst() / s.type().bytes();
    shmem.barrierAll();
    for (int i = 0; i < 10 * Math.max(10, s.warmupIters()); i++) {
      coll.allReduce(buffer, count, s.type(), ShmemReduceOp.SUM, stream, i % 2 == 0 ? AllReduceAlgorithm.P2P_READ : AllReduceAlgorithm.PUT_SIGNAL);
      stream.synchronize();
    }
    shmem.barrierAll();
  }

  private static String name(AllReduceAlgorithm a) {
    return a == AllReduceAlgorithm.P2P_READ ? "p2p-read" : "put-signal";
  }

  /** Small non-negative integers: every partial sum is exact in bf16, fp16 and fp32 for up to 32 PEs, in any order. */
  private static void fillInput(MemorySegment seg, ShmemDataType type, long count, int pe) {
    for (long i = 0; i < count; i++) AllReduceReference.store(type, seg, i * type.bytes(), (float) ((i * 7 + pe * 13) % 8));
  }

  private byte[] reference(ShmemDataType type, long count, long bytes) {
    List<MemorySegment> inputs = new ArrayList<>();
    for (int p = 0; p < n; p++) {
      MemorySegment in = MemorySegment.ofArray(new byte[(int) bytes]);
      fillInput(in, type, count, p);
      inputs.add(in);
    }
    MemorySegment out = MemorySegment.ofArray(new byte[(int) bytes]);
    AllReduceReference.sum(type, inputs, out, count);
    return out.toArray(JAVA_BYTE);
  }

  /** Uploads this PE's input, runs {@code call} once after a barrier, and compares the result with the reference. */
  private void check(String what, long buffer, long bytes, MemorySegment input, byte[] want, Runnable call, GpuStream on) {
    gpu.copyHostToDeviceAsync(buffer, input, bytes, on);
    on.synchronize();
    shmem.barrierAll();
    call.run();
    on.synchronize();
    // pinned: a pageable copy was seen to wait behind another PE's kernel on the same GPU
    try (PinnedBuffer pinned = gpu.allocPinned(bytes)) {
      MemorySegment back = pinned.segment();
      gpu.copyDeviceToHostAsync(back, buffer, bytes, on);
      on.synchronize();
      long wrong = MemorySegment.mismatch(back, 0, bytes, MemorySegment.ofArray(want), 0, bytes);
      if (wrong >= 0) {
        failures++;
        System.err.printf(Locale.ROOT, "shmem-bench PE %d: %s: wrong result at byte %d of %d (want 0x%02x, got 0x%02x)%n", me, what, wrong, bytes,
            want[(int) wrong], back.get(JAVA_BYTE, wrong));
      }
    }
    shmem.barrierAll();
  }

  // ---------------------------------------------------------------- timing and output

  private long[] timed(Runnable iteration) {
    return timed(s, iteration);
  }

  /** Latencies of {@code s.iters()} iterations after the warm-up (callers put a host barrier of all PEs in front). */
  static long[] timed(Settings s, Runnable iteration) {
    for (int i = 0; i < s.warmupIters(); i++) iteration.run();
    long[] lat = new long[s.iters()];
    for (int i = 0; i < lat.length; i++) {
      long t0 = System.nanoTime();
      iteration.run();
      lat[i] = System.nanoTime() - t0;
    }
    return lat;
  }

  private void report(PrintStream out) throws IOException {
    out.print(ResultTable.renderBaselines("mori4j shmem-bench (same run, PE 0's timings)", rows));
    out.println("Comparison (same run):");
    for (String c : comparisons) out.println("  " + c);
    if (failures > 0) out.println("PE 0 found " + failures + " wrong result(s); see stderr");
    out.flush();
    if (s.json() != null) {
      JsonRows.write(s.json(), JsonRows.baselinesToJson(rows));
      System.err.println("wrote " + s.json());
    }
    if (s.plot() != null) {
      // the shmem rows are mori4j's own, NCCL and the raw copies the references beside them
      BenchPlot plot = new BenchPlot();
      List<BaselineRow> ours = rows.stream().filter(b -> b.series().startsWith("shmem ")).toList();
      for (String series : ours.stream().map(BaselineRow::series).distinct().toList()) {
        plot.measured(series, ours.stream().filter(b -> b.series().equals(series) && b.row() != null).map(BaselineRow::row).toList());
      }
      plot.baselines(rows.stream().filter(b -> !b.series().startsWith("shmem ")).toList())
          .write(s.plot(), "mori4j shmem-bench (PE 0's timings), " + s.type() + " all-reduce, put and round trip", s.machine() + ", " + gpu.version());
    }
  }

  static String resource(String name) {
    try (InputStream in = ShmemBenchPe.class.getResourceAsStream(name)) {
      if (in == null) throw new IllegalStateException("resource " + name + " is missing from the class path");
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static long roundUp(long v, long a) {
    return (v + a - 1) / a * a;
  }
}
