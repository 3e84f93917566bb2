package org.mori4j.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Locale;
import org.mori4j.natives.gpu.Dim3;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.KernelArgs;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.shmem.Shmem;

/**
 * shmem-bench's point-to-point rows between PE 0 and PE 1: {@code mori_shmem_putmem_nbi_block} + quiet per size
 * beside a raw peer copy of the same bytes (PE 1 checks every byte it received), and the 8-byte put + signal + wait
 * round trip. Rows and comparison lines go into the lists of the PE's run; nothing runs with fewer than two PEs.
 */
final class ShmemBenchPointToPoint {
  private final ShmemBenchPe.Settings s;
  private final Shmem shmem;
  private final GpuRuntime gpu;
  private final GpuStream stream;
  private final int me;
  private final int n;
  private final List<BaselineRow> rows;
  private final List<String> comparisons;

  ShmemBenchPointToPoint(ShmemBenchPe.Settings s, Shmem shmem, GpuStream stream, List<BaselineRow> rows, List<String> comparisons) {
    this.s = s;
    this.shmem = shmem;
    this.gpu = shmem.gpu();
    this.stream = stream;
    this.me = shmem.myPe();
    this.n = shmem.nPes();
    this.rows = rows;
    this.comparisons = comparisons;
  }

  /** PE 0 puts each size into PE 1 and times it beside a raw peer copy; PE 1 checks the bytes. Returns the wrong results PE 1 saw. */
  int putRows(GpuModule kernels, long buffer, long dst, PinnedBuffer host) {
    if (n < 2) return 0;
    int failures = 0;
    long max = s.putSizes().stream().mapToLong(Long::longValue).max().orElse(0);
    DataPattern.fill(host.segment(), max, 0xB0B);
    gpu.copyHostToDeviceAsync(buffer, host.segment(), max, stream);
    stream.synchronize();
    long peerDst = shmem.ptrP2p(dst, me, 1);
    // up to four 512-thread blocks per SM: the put's copy loop has one load in flight per thread
    int blocks = 4 * Math.max(1, gpu.multiprocessorCount(shmem.device()));
    for (long bytes : s.putSizes()) {
      int grid = (int) Math.min(blocks, Math.max(1, bytes / (16 << 10)));
      shmem.barrierAll();
      ResultRow put = me != 0 ? null : ResultRow.fromLatencies(bytes, 1, ShmemBenchPe.timed(s, () -> {
        gpu.launch(kernels.function("mori4j_bench_put"), Dim3.of(grid), Dim3.of(512), 0, stream,
            KernelArgs.of().pointer(dst).pointer(buffer).i64(bytes).i32(1));
        stream.synchronize();
      }));
      shmem.barrierAll();
      if (me == 1) {
        try (PinnedBuffer pinned = gpu.allocPinned(bytes)) {
          MemorySegment back = pinned.segment();
          gpu.copyDeviceToHostAsync(back, dst, bytes, stream);
          stream.synchronize();
          long wrong = DataPattern.firstMismatch(back, 0, 0, bytes, 0xB0B);
          if (wrong >= 0) {
            failures++;
            System.err.printf(Locale.ROOT, "shmem-bench PE 1: put of %s from PE 0: wrong byte at %d%n", HumanSize.format(bytes), wrong);
          }
        }
      }
      shmem.barrierAll();
      ResultRow copy = me != 0 ? null : ResultRow.fromLatencies(bytes, 1, ShmemBenchPe.timed(s, () -> {
        gpu.copyDeviceToDeviceAsync(peerDst, buffer, bytes, stream);
        stream.synchronize();
      }));
      shmem.barrierAll();
      if (me == 0) {
        rows.add(new BaselineRow("shmem put", put, "PE 0 -> PE 1, mori_shmem_putmem_nbi_block over " + grid + " blocks + quiet, launch + synchronize"));
        rows.add(new BaselineRow("raw peer copy (put)", copy, "cuMemcpyDtoDAsync PE 0 -> PE 1 + synchronize"));
        comparisons.add(String.format(Locale.ROOT, "put %s: avg %.2f GB/s = %.0f%% of the raw peer copy (%.2f GB/s)", HumanSize.format(bytes), put.avgBwGBps(),
            100 * put.avgBwGBps() / copy.avgBwGBps(), copy.avgBwGBps()));
      }
    }
    return failures;
  }

  /** An 8-byte put + signal + wait ping-pong between PE 0 and PE 1, timed per round trip. */
  void roundTrip(GpuModule kernels, long words) {
    if (n < 2) return;
    gpu.fill(words, (byte) 0, 256);
    try (Arena arena = Arena.ofConfined()) {
      gpu.copyDeviceToHost(arena.allocate(8), words, 8); // the fill is done before any peer signals
    }
    shmem.barrierAll();
    int rounds = s.rttRounds();
    long[] lat = new long[s.rttLaunches()];
    for (int k = -2; k < s.rttLaunches(); k++) {
      long base = (long) (k + 2) * rounds;
      long t0 = System.nanoTime();
      if (me <= 1) {
        gpu.launch(kernels.function("mori4j_bench_pingpong"), Dim3.of(1), Dim3.of(1), 0, stream,
            KernelArgs.of().pointer(words).pointer(words + 64).pointer(words + 128).i32(rounds).i64(base).i32(0).i32(1 - me));
        stream.synchronize();
      }
      if (k >= 0) lat[k] = System.nanoTime() - t0;
    }
    shmem.barrierAll();
    if (me == 0) {
      LatencyStats st = LatencyStats.of(lat);
      ResultRow row = new ResultRow(8, rounds, 8L * rounds, Double.NaN, Double.NaN, st.minNs() / 1e3 / rounds, st.meanNs() / 1e3 / rounds,
          st.p50Ns() / 1e3 / rounds, st.p99Ns() / 1e3 / rounds);
      rows.add(new BaselineRow("shmem put+signal+wait round trip", row, String.format(Locale.ROOT,
          "PE 0 <-> PE 1, 8 B, %d launches of %d rounds in one thread; latency per round trip", s.rttLaunches(), rounds)));
      comparisons.add(String.format(Locale.ROOT, "8-byte put + signal + wait round trip PE 0 <-> PE 1: p50 %.2f us, min %.2f us", row.p50LatUs(), row.minLatUs()));
    }
  }
}
