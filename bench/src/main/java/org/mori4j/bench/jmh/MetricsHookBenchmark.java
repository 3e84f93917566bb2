package org.mori4j.bench.jmh;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.BackendType;
import org.mori4j.io.StatusCode;
import org.mori4j.io.internal.Routes;
import org.mori4j.io.internal.TransferStatusImpl;
import org.mori4j.io.internal.metrics.EngineMeters;
import org.mori4j.io.internal.metrics.MetricsSettings;
import org.mori4j.io.internal.metrics.RouteMeters;
import org.mori4j.transport.TransferOp;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The metrics' own cost per transfer, without the I/O around it: a session's status made, counted on its route
 * ({@code TransferStatusImpl.meter}: two LongAdder additions and, with a registry or JFR on, a clock read) and
 * completed ({@code finish}: one addition, with a registry the latency Timer, with JFR on an event that is not
 * committed while no recording runs). {@code off} is the same without any meter, so the difference is what the
 * metrics add to every transfer. {@link MetricsOverheadBenchmark} measures the whole 4 KiB session write, whose
 * run-to-run noise on loopback is larger than the effect; this one resolves it. Uses engine internals, like
 * {@link StatusCompletionBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.AverageTime})
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 3, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class MetricsHookBenchmark {
  /**
   * off: no meters; counters: the default settings, no registry; counters-nojfr: the same with
   * {@code mori4j.metrics.jfr = off}; prometheus: a Prometheus registry bound, with client-side percentiles
   * 0.5/0.99/0.999; prometheus-nopct: the same with {@code mori4j.metrics.percentiles = []}, the default (histogram
   * buckets only). The names are those of the recorded runs in bench/results/*-metrics-overhead.
   */
  @Param({"off", "counters", "counters-nojfr", "prometheus", "prometheus-nopct"})
  public String metrics;

  private RouteMeters route;
  private long uid;

  @Setup
  public void start() {
    double[] percentiles = metrics.endsWith("-nopct") ? new double[0] : new double[] {0.5, 0.99, 0.999};
    MetricsSettings s = metrics.equals("off") ? MetricsSettings.OFF
        : new MetricsSettings(true, true, percentiles, !metrics.endsWith("-nojfr"), false);
    EngineMeters m = new EngineMeters("jmh-hook", s, () -> Routes.EMPTY);
    if (metrics.startsWith("prometheus")) m.bind(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
    route = m.route("jmh-peer", BackendType.TCP, TransferOp.WRITE, RouteMeters.SESSION);
  }

  @Benchmark
  public TransferStatusImpl meterAndFinish() {
    TransferStatusImpl st = new TransferStatusImpl(0);
    st.initSingle(TransferOp.WRITE, null, 0, null, 1, 2, 3, 0, 4096, uid++);
    st.meter(route);
    return st.finish(StatusCode.SUCCESS, "");
  }
}
