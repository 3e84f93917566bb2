package org.mori4j.bench.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.mori4j.transport.xgmi.XgmiTrace;

/** kv-bench's trace line: each stage's median over the windows that saw it, "-" where none did, counts per migration. */
class KvBenchTraceTest {
  private static XgmiTrace.Window window(long planned, long gpuEnd, long launches) {
    // host stages in ns after migrate(); -1: not seen (a run without GPU timing)
    return new XgmiTrace.Window(planned, planned + 1_000, planned + 2_000, planned + 3_000, 5_000, 6_000, 7_000, 8_000, 9_000,
        gpuEnd < 0 ? -1 : 1_500, gpuEnd, gpuEnd < 0 ? -1 : 400, gpuEnd < 0 ? -1 : 800, launches, 2, launches - 2, 0, gpuEnd < 0 ? 0 : launches, 40, 250_000, 12, 300_000, 60_000, 900_000,
        parts(launches), new long[] {100_000, 700_000, 50_000, 7});
  }

  /** Issue parts over {@code launches} timed launches: part p took (p + 1) us per launch. */
  private static long[] parts(long launches) {
    long[] p = new long[XgmiTrace.PARTS + 1];
    for (int i = 0; i < XgmiTrace.PARTS; i++) p[i] = (i + 1) * 1_000L * launches;
    p[XgmiTrace.PARTS] = launches;
    return p;
  }

  @Test
  void mediansPerStageAndDashesForStagesNeverSeen() {
    KvBenchTrace t = new KvBenchTrace();
    assertNull(t.summary("push-1"), "no window, no line");
    t.add(window(1_000, 4_000, 80));
    t.add(window(3_000, -1, 80));
    t.add(window(2_000, 6_000, 80));
    String s = t.summary("push-4096");
    assertTrue(s.startsWith("kv-bench xgmi trace push-4096 (p50 of 3 migrations"), s);
    assertTrue(s.contains(" plan built 2.0 |"), s); // median of 1, 3, 2 us
    assertTrue(s.contains("| GPU last end 4.0 |"), s); // the lower median of the two windows that had GPU timing
    assertTrue(s.contains("|| GPU span 2.5,"), s); // 4.0 - 1.5 us
    assertTrue(s.contains("80 launches, 2 issued by the caller, 78 by the worker"), s);
    assertTrue(s.contains("at most 40 completions found by one poll; the trace's own GPU-time reads 250.0 us"), s);
    assertTrue(s.contains("12 polls of its events 300.0, reporting completions 60.0, issuing 900.0"), s);
    assertTrue(s.contains("80 launches timed): checks 1.00 | slot+stream 2.00 | table 3.00 |"), s);
    assertTrue(s.contains("| between issues 9.00 | sum 45.00"), s);
    assertTrue(s.contains("the caller's calls (p50 per migration, us; 7 calls): plans 100.0 | engine calls 700.0 | after the calls 50.0"), s);
    KvBenchTrace none = new KvBenchTrace();
    none.add(window(1_000, -1, 1));
    assertTrue(none.summary("pull-1").contains("| GPU first start - |"), none.summary("pull-1"));
    assertEquals(-1, none.p50(XgmiTrace.Window::gpuLastEnd));
  }
}
