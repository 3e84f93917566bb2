package org.mori4j.io.internal.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.mori4j.io.BackendType;
import org.mori4j.io.StatusCode;
import org.mori4j.io.internal.Routes;

/**
 * Exports one engine's {@link EngineMeters} through the application's {@link MeterRegistry}. Counters are function
 * counters over the engine's {@code LongAdder}s (read at scrape time, nothing on the transfer path); the latency of
 * successful transfers is a {@link Timer} per route with a percentile histogram (Prometheus buckets; p50/p99/p999
 * by {@code histogram_quantile}) and, when {@code mori4j.metrics.percentiles} names them, client-side percentiles,
 * fed by {@link RouteMeters#finished}. Every meter carries the tag {@code engine}; the names and tags are
 * listed in engine-actors/docs/metrics.md. All methods run under the engine meters' lock.
 */
final class MicrometerBinding {
  /** Shortest and longest latency the histogram buckets cover (a loopback 4 KiB write takes ~20 us). */
  private static final Duration MIN_LATENCY = Duration.ofNanos(1_000);
  private static final Duration MAX_LATENCY = Duration.ofSeconds(60);

  final MeterRegistry registry;
  private final EngineMeters meters;
  private final Tags engineTags;
  private final List<Meter> registered = new ArrayList<>();
  /** (peer, backend) pairs whose in-flight gauge exists. */
  private final Set<String> inFlightGauges = new HashSet<>();

  MicrometerBinding(EngineMeters meters, MeterRegistry registry) {
    this.meters = meters;
    this.registry = registry;
    this.engineTags = Tags.of("engine", meters.engineKey);
  }

  private static String tag(BackendType b) {
    return b.name().toLowerCase(Locale.ROOT);
  }

  private <M extends Meter> M keep(M m) {
    registered.add(m);
    return m;
  }

  private void counter(String name, String description, Tags tags, LongAdder a) {
    keep(FunctionCounter.builder(name, a, LongAdder::sum).description(description).tags(engineTags.and(tags)).register(registry));
  }

  /** Engine-wide meters. */
  void engine() {
    keep(Gauge.builder("mori4j.registered.regions", meters.routes, s -> s.get().locals().size())
        .description("Memory regions registered with the engine now").tags(engineTags).strongReference(true).register(registry));
  }

  /**
   * The meters of backend {@code b}, once the engine has one: connections, their changes, fall-backs, reroutes
   * between it and the backends in {@code others}, registrations, and for XGMI its kernel launches.
   */
  void backend(BackendType b, Iterable<BackendType> others) {
    Tags bt = Tags.of("backend", tag(b));
    int i = b.ordinal();
    keep(Gauge.builder("mori4j.connections", meters.routes, s -> connections(s.get(), b))
        .description("Peer engines this backend is connected to now").tags(engineTags.and(bt)).strongReference(true).register(registry));
    for (EngineMeters.Change c : EngineMeters.Change.values())
      counter("mori4j.connection.changes", "Connection changes of a backend (connected, failed, disconnected, lost, reconnect)",
          bt.and("change", c.tag()), meters.connectionChanges[i][c.ordinal()]);
    counter("mori4j.fallbacks", "Peers whose transfers other backends carry because this faster backend could not connect",
        bt, meters.fallbacks[i]);
    for (BackendType o : others) {
      if (o == b) continue;
      counter("mori4j.reroutes", REROUTES, Tags.of("from", tag(b), "to", tag(o)), meters.reroutes[i][o.ordinal()]);
      counter("mori4j.reroutes", REROUTES, Tags.of("from", tag(o), "to", tag(b)), meters.reroutes[o.ordinal()][i]);
    }
    LongAdder count = meters.registrations[i];
    LongAdder nanos = meters.registrationNanos[i];
    keep(FunctionTimer.builder("mori4j.registrations", meters, m -> count.sum(), m -> nanos.sum(), TimeUnit.NANOSECONDS)
        .description("Memory registrations with a backend and the time they took").tags(engineTags.and(bt)).register(registry));
    counter("mori4j.registration.failures", "Memory registrations a backend refused", bt, meters.registrationFailures[i]);
    counter("mori4j.deregistrations", "Memory deregistrations sent to a backend", bt, meters.deregistrations[i]);
    if (b == BackendType.XGMI)
      counter("mori4j.xgmi.kernel.launches", "XGMI gather/scatter kernel launches (one per batch of two or more blocks)",
          Tags.empty(), meters.kernelLaunches);
  }

  private static final String REROUTES = "Transfers a backend handed to another at transfer time";

  private static double connections(Routes r, BackendType b) {
    int n = 0;
    for (Routes.Peer p : r.peers().values()) if (p.handles().containsKey(b)) n++;
    return n;
  }

  private Tags routeTags(RouteMeters r) {
    return engineTags.and("backend", r.backendTag(), "peer", r.peer, "op", r.opTag(), "kind", r.kindTag());
  }

  /** A route's counters, its latency timer (histograms on) and its (peer, backend)'s in-flight gauge. */
  void route(RouteMeters r, PeerMeters p) {
    Tags t = routeTags(r);
    keep(FunctionCounter.builder("mori4j.transfer.ops", r.started, LongAdder::sum).description("Transfers started")
        .tags(t).register(registry));
    keep(FunctionCounter.builder("mori4j.transfer.bytes", r.bytes, LongAdder::sum).description("Bytes of the transfers started")
        .baseUnit("bytes").tags(t).register(registry));
    if (meters.settings.histogram()) {
      r.latency = keep(Timer.builder("mori4j.transfer.latency").description("Latency of successful transfers, submission to completion")
          .tags(t).publishPercentiles(meters.settings.percentiles()).publishPercentileHistogram()
          .minimumExpectedValue(MIN_LATENCY).maximumExpectedValue(MAX_LATENCY).register(registry));
    }
    BackendType b = r.backend;
    if (inFlightGauges.add(p.peer + '\0' + b)) {
      keep(Gauge.builder("mori4j.transfers.in.flight", p, x -> x.inFlight(b)).description("Transfers started and not finished")
          .tags(engineTags.and("backend", tag(b), "peer", p.peer)).strongReference(true).register(registry));
    }
  }

  /** A route's error counter for {@code code}, made when the first such error happens. */
  void error(RouteMeters r, StatusCode code) {
    keep(FunctionCounter.builder("mori4j.transfer.errors", r.errors[code.ordinal()], LongAdder::sum)
        .description("Transfers that failed (or were refused: backend and peer 'none'), by status code")
        .tags(routeTags(r).and("code", code.name())).register(registry));
  }

  /** The engine closed: its meters leave the registry, and the routes stop feeding their timers. */
  void close() {
    meters.peers.values().forEach(p -> p.forEach(r -> r.latency = null));
    for (Meter m : registered) registry.remove(m);
    registered.clear();
  }
}
