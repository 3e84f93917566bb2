package org.mori4j.bench.jmh;

import com.typesafe.config.ConfigFactory;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.IoEngineSession;
import org.mori4j.io.MemoryDesc;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.TransferStatus;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the engine's metrics cost on the 4 KiB session write + {@code await()} path (issue 18: at most 2% with
 * metrics on), between two engines in this JVM over TCP on loopback, as {@link TcpWriteBenchmark}'s
 * {@code sessionWrite4k}: {@code metrics} = {@code off} ({@code mori4j.metrics.enabled = off}: no hook runs),
 * {@code counters} (on, no registry: the LongAdders only) and {@code prometheus} (on, a Prometheus registry bound to
 * the initiator: counters plus the latency Timer with percentiles and histogram buckets, two clock reads). Each
 * value runs in forks of its own; compare them within one invocation, and run it with several forks, since a
 * 2-core machine's run-to-run noise is of the order of the effect.
 */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.AverageTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 4, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 3, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"})
public class MetricsOverheadBenchmark {
  static final long SIZE = 4096;
  static final long BUFFER = 1 << 20;

  @Param({"off", "counters", "prometheus"})
  public String metrics;

  private Arena arena;
  private IoEngine initiator;
  private IoEngine target;
  private IoEngineSession session;
  private PrometheusMeterRegistry registry;
  private long offset;

  @Setup(Level.Trial)
  public void start() {
    // read by IoEngine.create through ConfigFactory.load(); each parameter value runs in its own forked JVM
    System.setProperty("mori4j.metrics.enabled", metrics.equals("off") ? "off" : "on");
    ConfigFactory.invalidateCaches();
    arena = Arena.ofShared();
    target = IoEngine.create("jmh-metrics-target", IoEngineConfig.loopback());
    initiator = IoEngine.create("jmh-metrics-initiator", IoEngineConfig.loopback());
    target.createBackend(BackendType.TCP, TcpBackendConfig.defaults().withEnableNotification(false));
    initiator.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
    if (metrics.equals("prometheus")) {
      registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      initiator.bindMetrics(registry);
    }
    MemorySegment src = arena.allocate(BUFFER, 4096);
    MemorySegment dst = arena.allocate(BUFFER, 4096);
    MemoryDesc local = initiator.registerMemory(src);
    MemoryDesc remote = target.registerMemory(dst);
    initiator.registerRemoteEngine(target.engineDesc());
    target.registerRemoteEngine(initiator.engineDesc());
    session = initiator.createSession(local, remote)
        .orElseThrow(() -> new IllegalStateException("no session between " + local + " and " + remote));
    expect(session.write(0, 0, SIZE, session.allocateTransferUid()).await());
  }

  @TearDown(Level.Trial)
  public void stop() {
    long started = initiator.metrics().getTransfersStarted();
    // a check that the variant measured what it says: counters move only with metrics on
    if (metrics.equals("off") ? started != 0 : started == 0)
      throw new IllegalStateException("metrics=" + metrics + " but the engine counted " + started + " transfers");
    if (registry != null && !registry.scrape().contains("mori4j_transfer_latency_seconds_count"))
      throw new IllegalStateException("the Prometheus registry shows no latency timer");
    initiator.close();
    target.close();
    arena.close();
  }

  @Benchmark
  public TransferStatus sessionWrite4k() {
    long o = offset;
    offset = (o + SIZE) & (BUFFER - 1);
    return expect(session.write(o, o, SIZE, session.allocateTransferUid()).await());
  }

  private static TransferStatus expect(TransferStatus s) {
    if (!s.succeeded()) throw new IllegalStateException("4 KiB write failed: " + s.code() + " " + s.message());
    return s;
  }
}
