package org.mori4j.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ComparisonTest {
  private static ResultRow row(long msg, double avgBw, double p50) {
    return new ResultRow(msg, 1, msg, avgBw, avgBw, p50, p50, p50, p50);
  }

  @Test
  void ratiosComeFromTheSameRunAndMissingBaselinesAreNamed() {
    List<ResultRow> rows = List.of(row(4096, 0.05, 60), row(64L << 20, 3.6, 18000), row(1024, 0.01, 50));
    List<BaselineRow> base = List.of(
        new BaselineRow("nio-stream", row(64L << 20, 3.0, 20000), ""),
        new BaselineRow("nio-pingpong 4KiB", row(4096, 0.1, 30), ""),
        new BaselineRow("iperf3 single-stream", ResultRow.bandwidthOnly(0, 1, 4.0), ""),
        BaselineRow.missing("ucx tag_bw", "ucx_perftest not installed"),
        BaselineRow.missing("ucx tag_lat", "ucx_perftest not installed"));
    List<String> l = Comparison.lines(rows, base);
    assertEquals(List.of(
        "4 KiB x 1: p50 60.00 us = 2.00x nio-pingpong p50 (30.00 us); ucx tag_lat round-trip not measured",
        "64 MiB x 1: avg BW 3.60 GB/s = 120% of nio-stream (3.00), 90% of iperf3 (4.00), ucx tag_bw not measured"), l);
  }

  @Test
  void theLatencyRowIsAMultipleOfBothRoundTripsAndTheRatiosAreValues() {
    ResultRow k4 = row(4096, 0.4, 11.0);
    List<BaselineRow> base = List.of(new BaselineRow("nio-pingpong 4KiB", row(4096, 0.1, 22), ""),
        new BaselineRow("ucx tag_lat", new ResultRow(4096, 1, 4096, Double.NaN, Double.NaN, Double.NaN, 11.0, 11.5, Double.NaN), ""));
    assertEquals(List.of("4 KiB x 1: p50 11.00 us = 0.50x nio-pingpong p50 (22.00 us); 0.96x ucx tag_lat round-trip p50 (11.50 us)"),
        Comparison.lines(List.of(k4), base));
    List<Comparison.Ratio> r = Comparison.ratios(List.of(k4), base);
    assertEquals(2, r.size());
    assertEquals(11.0 / 11.5, r.get(1).value(), 1e-12);
    assertTrue(r.get(1).atOrBetter(), "lower latency than the reference is better");
    // bandwidth: higher is better; exactly the reference counts as at-or-better
    ResultRow big = row(64L << 20, 4.0, 16000);
    List<Comparison.Ratio> bw = Comparison.ratios(List.of(big), List.of(
        new BaselineRow("ucx tag_bw", ResultRow.bandwidthOnly(64L << 20, 64L << 20, 4.0), "")));
    assertEquals(List.of("nio-stream", "iperf3 single-stream", "ucx tag_bw"), bw.stream().map(Comparison.Ratio::series).toList());
    assertFalse(bw.get(0).measured());
    assertFalse(bw.get(0).atOrBetter(), "a missing reference is never at or better");
    assertTrue(bw.get(2).atOrBetter());
    assertEquals(1.0, bw.get(2).value(), 1e-12);
  }

  @Test
  void aBurstRowIsAShareOfTheNioStreamOfTheSameMessages() {
    ResultRow burst = new ResultRow(4096, 128, 4096L * 128, 1.0, 0.8, 500, 650, 600, 900);
    List<BaselineRow> base = List.of(new BaselineRow("nio-stream", new ResultRow(4096, 128, 4096L * 128, 0.6, 0.5, 900, 1000, 950, 1500), ""),
        new BaselineRow("nio-stream", row(64L << 20, 3.0, 20000), ""));
    assertEquals(List.of("4 KiB x 128: avg BW 0.80 GB/s = 160% of nio-stream (0.50)"), Comparison.lines(List.of(burst), base));
    assertEquals(List.of("4 KiB x 128: avg BW 0.80 GB/s = nio-stream not measured"), Comparison.lines(List.of(burst), List.of()));
  }

  @Test
  void gpuRowsAreAShareOfTheCpuRowsWithTheRawCopiesBeside() {
    List<ResultRow> gpu = List.of(row(4096, 0.05, 60), row(64L << 20, 3.4, 18000), row(1L << 20, 1.0, 1000));
    List<ResultRow> cpu = List.of(row(4096, 0.05, 60), row(64L << 20, 4.0, 16000));
    List<BaselineRow> base = List.of(
        new BaselineRow("cuMemcpy H2D pinned", row(64L << 20, 25.5, 2600), ""),
        new BaselineRow("cuMemcpy D2H pinned", row(64L << 20, 26.25, 2500), ""));
    assertEquals(List.of(
        "64 MiB x 1: gpu avg BW 3.40 GB/s = 85% of cpu<->cpu (4.00 GB/s); raw H2D 25.50 GB/s, D2H 26.25 GB/s",
        "1 MiB x 1: gpu avg BW 1.00 GB/s = cpu<->cpu not measured; raw H2D 25.50 GB/s, D2H 26.25 GB/s"),
        Comparison.gpuLines(gpu, cpu, base, "cuMemcpy H2D pinned", "cuMemcpy D2H pinned"));
    assertEquals(List.of("64 MiB x 1: gpu avg BW 3.40 GB/s = cpu<->cpu not measured (--compare-cpu); raw H2D not measured, D2H not measured"),
        Comparison.gpuLines(gpu.subList(1, 2), null, List.of(), "hipMemcpy H2D pinned", "hipMemcpy D2H pinned"));
    assertEquals(List.of("64 MiB x 1: gpu avg BW 3.40 GB/s = 85% of cpu<->cpu (4.00 GB/s); raw copies not measured (no GPU on this side)"),
        Comparison.gpuLines(gpu.subList(1, 2), cpu, base, null, null));
  }
}
