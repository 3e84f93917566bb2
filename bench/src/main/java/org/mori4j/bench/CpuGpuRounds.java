package org.mori4j.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code bench --compare-cpu --compare-cpu-rounds N}: the GPU and the CPU<->CPU rows of every point measured in
 * turns, N rounds (each round runs every point's GPU row and CPU row back to back, the GPU row first in even rounds
 * and second in odd ones), so that both series see the same machine state and a drift of the loopback's speed (the
 * CPU rows of one run swung 2.8-5.1 GB/s between sizes on the 1x H100 host) cannot pass for a GPU effect. Each
 * round's GPU avg bandwidth is divided by the same round's CPU one; the verdict per point is the median of those
 * ratios with their range. The tables get one row per point pooled over all rounds' iterations.
 */
final class CpuGpuRounds {
  private CpuGpuRounds() {}

  /** The pooled rows of both series and one ratio line per point. */
  record Result(List<ResultRow> gpuRows, List<ResultRow> cpuRows, List<String> ratioLines) {}

  /** Checks the point fits, shows progress and runs {@code afterRow} after each row (the target's liveness check). */
  static Result run(List<SweepPlan.Point> points, EngineBenchmark gpu, EngineBenchmark cpu, int rounds, SweepOptions sweep,
                    ProgressBar progress, Runnable afterRow) {
    if (rounds < 1) throw new IllegalArgumentException("rounds must be at least 1: " + rounds);
    int n = points.size();
    long[][][] gpuLat = new long[n][rounds][];
    long[][][] cpuLat = new long[n][rounds][];
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < n; i++) {
        SweepPlan.Point p = points.get(i);
        for (int turn = 0; turn < 2; turn++) {
          boolean gpuTurn = (turn == 0) == (r % 2 == 0);
          EngineBenchmark b = gpuTurn ? gpu : cpu;
          if (p.msgSize() > b.capacity())
            throw new IllegalStateException("the buffers (" + HumanSize.format(b.capacity()) + ") are smaller than the message size "
                + HumanSize.format(p.msgSize()) + "; give the target a larger --buffer-size");
          progress.show((gpuTurn ? "" : "cpu ") + HumanSize.format(p.msgSize()) + " x " + p.batchSize() + " round " + (r + 1));
          long[] lat = b.latencies(p, sweep.iters, sweep.warmupIters, sweep.warmupNanos());
          (gpuTurn ? gpuLat : cpuLat)[i][r] = lat;
          progress.step();
          afterRow.run();
        }
      }
    }
    List<ResultRow> gpuRows = new ArrayList<>(n);
    List<ResultRow> cpuRows = new ArrayList<>(n);
    List<String> lines = new ArrayList<>(n + 1);
    lines.add(String.format(Locale.ROOT, "gpu/cpu avg BW, %d interleaved rounds (median ratio [min..max]; medians of the rounds' avg BW):", rounds));
    for (int i = 0; i < n; i++) {
      SweepPlan.Point p = points.get(i);
      gpuRows.add(ResultRow.fromLatencies(p.msgSize(), p.batchSize(), concat(gpuLat[i])));
      cpuRows.add(ResultRow.fromLatencies(p.msgSize(), p.batchSize(), concat(cpuLat[i])));
      double[] ratio = new double[rounds];
      double[] g = new double[rounds];
      double[] c = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        g[r] = ResultRow.fromLatencies(p.msgSize(), p.batchSize(), gpuLat[i][r]).avgBwGBps();
        c[r] = ResultRow.fromLatencies(p.msgSize(), p.batchSize(), cpuLat[i][r]).avgBwGBps();
        ratio[r] = g[r] / c[r];
      }
      double[] sorted = ratio.clone();
      Arrays.sort(sorted);
      lines.add(String.format(Locale.ROOT, "%s x %d: gpu/cpu %.0f%% [%.0f%%..%.0f%%]; gpu %.2f GB/s, cpu %.2f GB/s; p50 latency gpu %.1f us, cpu %.1f us",
          HumanSize.format(p.msgSize()), p.batchSize(), 100 * median(ratio), 100 * sorted[0], 100 * sorted[rounds - 1], median(g), median(c),
          gpuRows.get(i).p50LatUs(), cpuRows.get(i).p50LatUs()));
    }
    return new Result(gpuRows, cpuRows, lines);
  }

  /** Median (the mean of the two middle values for an even count). */
  static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    int m = s.length / 2;
    return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
  }

  private static long[] concat(long[][] parts) {
    int len = 0;
    for (long[] p : parts) len += p.length;
    long[] all = new long[len];
    int at = 0;
    for (long[] p : parts) {
      System.arraycopy(p, 0, all, at, p.length);
      at += p.length;
    }
    return all;
  }
}
