package org.mori4j.io;

import static org.junit.jupiter.api.Assertions.*;

import com.typesafe.config.ConfigFactory;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.mori4j.io.internal.metrics.EngineMBean;

/**
 * The engine's metrics (engine-actors/docs/metrics.md, "Metrics"): exact counts in a Micrometer registry after known
 * traffic (ops, bytes, errors by code, refusals, latency histogram counts, connections, registrations), the
 * Prometheus text format, JFR events in a recording, the MBean's life, and an engine with metrics off.
 */
class MetricsTest {
  private static final long BUF = 1 << 20;
  /** The suite's data backend as the meters' tag (TCP, or RDMA in the engine-actors RDMA executions). */
  private static final String BACKEND = TestBackends.type().name().toLowerCase(java.util.Locale.ROOT);

  private static double counter(MeterRegistry r, String name, String... tags) {
    FunctionCounter c = r.find(name).tags(tags).functionCounter();
    assertNotNull(c, "no counter " + name + " " + List.of(tags) + " in " + r.getMeters().stream().map(m -> m.getId().toString()).toList());
    return c.count();
  }

  private static TransferStatus done(TransferStatus s) {
    assertTrue(s.await(java.time.Duration.ofSeconds(20)), "transfer did not finish: " + s);
    return s;
  }

  private static TransferStatus ok(TransferStatus s) {
    done(s);
    assertTrue(s.succeeded(), "transfer failed: " + s);
    return s;
  }

  @Test
  void registryHoldsExactCountsErrorsByCodeAndHistogramCountsAfterKnownTraffic() {
    // client-side percentiles are off by default (they double a timer's cost); this test asks for them
    String[] pct = {"0.5", "0.99", "0.999"};
    for (int i = 0; i < pct.length; i++) System.setProperty("mori4j.metrics.percentiles." + i, pct[i]);
    ConfigFactory.invalidateCaches();
    EnginePair pair;
    try {
      pair = new EnginePair(BUF);
    } finally {
      for (int i = 0; i < pct.length; i++) System.clearProperty("mori4j.metrics.percentiles." + i);
      ConfigFactory.invalidateCaches();
    }
    try (EnginePair p = pair) {
      IoEngine in = p.initiator;
      String peer = p.target.key();
      // one write before the registry is bound: counters count it, the timer (made at bind time) does not
      ok(in.write(p.local, 0, p.remote, 0, 4096, in.allocateTransferUid()));
      // Prometheus' registry: its timers keep the histogram buckets (SimpleMeterRegistry keeps only the percentiles)
      PrometheusMeterRegistry reg = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      in.bindMetrics(reg);
      in.bindMetrics(reg); // the same registry again: nothing happens
      IoEngineException other = assertThrows(IoEngineException.class, () -> in.bindMetrics(new SimpleMeterRegistry()));
      assertEquals(StatusCode.ERR_BAD_STATE, other.code());

      int writes = 9, reads = 7, sessionWrites = 5;
      for (int i = 0; i < writes; i++) ok(in.write(p.local, i * 4096L, p.remote, i * 4096L, 4096, in.allocateTransferUid()));
      for (int i = 0; i < reads; i++) ok(in.read(p.local, i * 1000L, p.remote, 0, 1000, in.allocateTransferUid()));
      // one batch entry of three separate blocks (512 B each): one op of 1536 bytes
      List<TransferStatus> batch = in.batchWrite(List.of(p.local), List.of(new long[] {0, 1024, 4096}), List.of(p.remote),
          List.of(new long[] {0, 2048, 8192}), List.of(new long[] {512, 512, 512}), new long[] {in.allocateTransferUid()});
      ok(batch.get(0));
      IoEngineSession s = in.createSession(p.local, p.remote).orElseThrow();
      for (int i = 0; i < sessionWrites; i++) ok(s.write(0, 4096L * i, 4096, s.allocateTransferUid()));
      ok(s.batchRead(new long[] {0, 8192}, new long[] {0, 8192}, new long[] {100, 100}, s.allocateTransferUid()));
      // refused before any backend sees them: two bad sizes, one unregistered local descriptor, one bad session offset
      assertEquals(StatusCode.ERR_INVALID_ARGS, done(in.write(p.local, 0, p.remote, BUF - 10, 4096, 1)).code());
      assertEquals(StatusCode.ERR_INVALID_ARGS, done(in.write(p.local, 0, p.remote, 0, -1, 2)).code());
      MemoryDesc foreign = new MemoryDesc(in.key(), 999_999, -1, p.local.address(), p.local.size(), MemoryLocationType.CPU, 7, Map.of());
      assertEquals(StatusCode.ERR_NOT_FOUND, done(in.read(foreign, 0, p.remote, 0, 10, 3)).code());
      assertEquals(StatusCode.ERR_INVALID_ARGS, done(s.write(BUF, 0, 1, 4)).code());
      // failed after submission: the target no longer has this memory, which only its backend can tell
      MemorySegment gone = p.arena.allocate(8192, 4096);
      MemoryDesc goneDesc = p.target.registerMemory(gone);
      p.target.deregisterMemory(goneDesc);
      TransferStatus failed = done(in.write(p.local, 0, goneDesc, 0, 4096, in.allocateTransferUid()));
      assertTrue(failed.failed(), "a write to deregistered memory succeeded: " + failed);

      String[] route = {"engine", in.key(), "backend", BACKEND, "peer", peer};
      assertEquals(1 + writes + 1, counter(reg, "mori4j.transfer.ops", tags(route, "op", "write", "kind", "single")));
      assertEquals((1 + writes + 1) * 4096.0, counter(reg, "mori4j.transfer.bytes", tags(route, "op", "write", "kind", "single")));
      assertEquals(reads, counter(reg, "mori4j.transfer.ops", tags(route, "op", "read", "kind", "single")));
      assertEquals(reads * 1000.0, counter(reg, "mori4j.transfer.bytes", tags(route, "op", "read", "kind", "single")));
      assertEquals(1, counter(reg, "mori4j.transfer.ops", tags(route, "op", "write", "kind", "batch")));
      assertEquals(1536, counter(reg, "mori4j.transfer.bytes", tags(route, "op", "write", "kind", "batch")));
      assertEquals(sessionWrites, counter(reg, "mori4j.transfer.ops", tags(route, "op", "write", "kind", "session")));
      assertEquals(1, counter(reg, "mori4j.transfer.ops", tags(route, "op", "read", "kind", "session")));
      assertEquals(200, counter(reg, "mori4j.transfer.bytes", tags(route, "op", "read", "kind", "session")));
      assertEquals(1, counter(reg, "mori4j.transfer.errors", tags(route, "op", "write", "kind", "single", "code", failed.code().name())));
      String[] none = {"engine", in.key(), "backend", "none", "peer", "none"};
      assertEquals(2, counter(reg, "mori4j.transfer.errors", tags(none, "op", "write", "kind", "single", "code", "ERR_INVALID_ARGS")));
      assertEquals(1, counter(reg, "mori4j.transfer.errors", tags(none, "op", "read", "kind", "single", "code", "ERR_NOT_FOUND")));
      assertEquals(1, counter(reg, "mori4j.transfer.errors", tags(none, "op", "write", "kind", "session", "code", "ERR_INVALID_ARGS")));
      assertNull(reg.find("mori4j.transfer.errors").tags("code", "ERR_TIMEOUT").functionCounter(), "a counter for an error that never happened");

      // latency: successes after binding only, with a percentile histogram
      Timer singleWrites = reg.find("mori4j.transfer.latency").tags(tags(route, "op", "write", "kind", "single")).timer();
      assertNotNull(singleWrites);
      assertEquals(writes, singleWrites.count());
      assertEquals(writes, bucketTotal(singleWrites));
      assertEquals(List.of(0.5, 0.99, 0.999), java.util.Arrays.stream(singleWrites.takeSnapshot().percentileValues())
          .map(v -> v.percentile()).toList(), "p50, p99, p999");
      assertTrue(singleWrites.takeSnapshot().histogramCounts().length > 10, "histogram buckets");
      assertEquals(reads, reg.find("mori4j.transfer.latency").tags(tags(route, "op", "read", "kind", "single")).timer().count());
      assertEquals(sessionWrites, reg.find("mori4j.transfer.latency").tags(tags(route, "op", "write", "kind", "session")).timer().count());

      Gauge inFlight = reg.find("mori4j.transfers.in.flight").tags(route).gauge();
      assertEquals(0, inFlight.value());
      assertEquals(1, reg.find("mori4j.connections").tags("engine", in.key(), "backend", BACKEND).gauge().value());
      assertEquals(1, counter(reg, "mori4j.connection.changes", "engine", in.key(), "backend", BACKEND, "change", "connected"));
      FunctionTimer registrations = reg.find("mori4j.registrations").tags("engine", in.key(), "backend", BACKEND).functionTimer();
      assertEquals(1, registrations.count());
      assertTrue(registrations.totalTime(TimeUnit.NANOSECONDS) > 0);
      assertEquals(1, reg.find("mori4j.registered.regions").tags("engine", in.key()).gauge().value());

      // the same counters as totals (what JMX shows)
      var totals = in.metrics();
      long started = 1 + writes + 1 + reads + 1 + sessionWrites + 1;
      assertEquals(started, totals.getTransfersStarted());
      assertEquals(started, totals.getTransfersCompleted());
      assertEquals(0, totals.getTransfersInFlight());
      assertEquals(1, totals.getTransfersFailed());
      assertEquals(4, totals.getTransfersRefused());
      Map<String, Long> byCode = new java.util.TreeMap<>(Map.of("ERR_INVALID_ARGS", 3L, "ERR_NOT_FOUND", 1L));
      byCode.merge(failed.code().name(), 1L, Long::sum);
      assertEquals(byCode, totals.getErrorsByCode());
      assertEquals(Map.of(BACKEND, 1L), totals.getConnections());
      assertTrue(totals.isRegistryBound());

      // close: the engine's meters leave the registry
      in.close();
      assertTrue(reg.find("mori4j.transfer.ops").tags("engine", in.key()).meters().isEmpty(), "meters of a closed engine stayed");
    }
  }

  private static String[] tags(String[] base, String... more) {
    String[] t = java.util.Arrays.copyOf(base, base.length + more.length);
    System.arraycopy(more, 0, t, base.length, more.length);
    return t;
  }

  /** Values in the timer's histogram: the last bucket of a cumulative histogram holds them all. */
  private static long bucketTotal(Timer t) {
    var buckets = t.takeSnapshot().histogramCounts();
    return (long) buckets[buckets.length - 1].count();
  }

  @Test
  void prometheusScrapeShowsTheMeters() {
    try (EnginePair p = new EnginePair(BUF)) {
      PrometheusMeterRegistry reg = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      p.initiator.bindMetrics(reg);
      for (int i = 0; i < 3; i++) ok(p.initiator.write(p.local, 0, p.remote, 0, 4096, p.initiator.allocateTransferUid()));
      done(p.initiator.write(p.local, 0, p.remote, BUF, 1, 1));
      String text = reg.scrape();
      String route = "backend=\"" + BACKEND + "\",engine=\"" + p.initiator.key() + "\",kind=\"single\",op=\"write\",peer=\"" + p.target.key() + "\"";
      assertTrue(text.contains("# TYPE mori4j_transfer_ops_total counter"), text);
      assertTrue(text.contains("mori4j_transfer_ops_total{" + route + "} 3.0\n"), text);
      assertTrue(text.contains("mori4j_transfer_bytes_total{" + route + "} 12288.0\n"), text);
      assertTrue(text.contains("# TYPE mori4j_transfer_latency_seconds histogram"), text);
      assertTrue(text.contains("mori4j_transfer_latency_seconds_count{" + route + "} 3\n"), text);
      assertTrue(text.contains("mori4j_transfer_latency_seconds_bucket{" + route + ",le=\"+Inf\"} 3\n"), text);
      assertFalse(text.contains("quantile="), "client-side percentiles are off by default");
      assertTrue(text.contains("mori4j_transfer_errors_total{backend=\"none\",code=\"ERR_INVALID_ARGS\",engine=\"" + p.initiator.key()
          + "\",kind=\"single\",op=\"write\",peer=\"none\"} 1.0\n"), text);
      assertTrue(text.contains("mori4j_connections{backend=\"" + BACKEND + "\",engine=\"" + p.initiator.key() + "\"} 1.0\n"), text);
      assertTrue(text.contains("mori4j_transfers_in_flight{backend=\"" + BACKEND + "\",engine=\"" + p.initiator.key() + "\",peer=\""
          + p.target.key() + "\"} 0.0\n"), text);
      // only the backends the engine has: no series for XGMI
      assertFalse(text.contains("backend=\"xgmi\""), text);
      assertTrue(text.contains("mori4j_registrations_seconds_count{backend=\"" + BACKEND + "\",engine=\"" + p.initiator.key() + "\"} 1"), text);
    }
  }

  @Test
  void jfrRecordingHoldsTransferRegistrationAndConnectionEvents() throws Exception {
    Path file = Files.createTempFile("mori4j-metrics", ".jfr");
    String initiatorKey, targetKey;
    int writes = 4;
    try (Recording rec = new Recording()) {
      rec.enable("org.mori4j.Transfer");
      rec.enable("org.mori4j.Registration");
      rec.enable("org.mori4j.Connection");
      rec.start();
      try (EnginePair p = new EnginePair(BUF)) {
        initiatorKey = p.initiator.key();
        targetKey = p.target.key();
        for (int i = 0; i < writes; i++) ok(p.initiator.write(p.local, 0, p.remote, 0, 4096, 100 + i));
        done(p.initiator.read(p.local, 0, p.remote, BUF, 1, 200));
      }
      rec.stop();
      rec.dump(file);
    }
    try {
      List<RecordedEvent> events = RecordingFile.readAllEvents(file);
      List<RecordedEvent> transfers = events.stream().filter(e -> e.getEventType().getName().equals("org.mori4j.Transfer")
          && initiatorKey.equals(e.getString("engine"))).toList();
      assertEquals(writes + 1, transfers.size(), "transfer events: " + transfers);
      List<RecordedEvent> ok = transfers.stream().filter(e -> e.getString("status").equals("SUCCESS")).toList();
      assertEquals(writes, ok.size());
      for (RecordedEvent e : ok) {
        assertEquals(targetKey, e.getString("peer"));
        assertEquals(BACKEND, e.getString("backend"));
        assertEquals("write", e.getString("op"));
        assertEquals(4096, e.getLong("bytes"));
        assertTrue(e.getLong("latency") > 0, "latency " + e.getLong("latency"));
      }
      assertEquals(List.of(100L, 101L, 102L, 103L), ok.stream().map(e -> e.getLong("uid")).sorted().toList());
      RecordedEvent refused = transfers.stream().filter(e -> !e.getString("status").equals("SUCCESS")).findFirst().orElseThrow();
      assertEquals("ERR_INVALID_ARGS", refused.getString("status"));
      assertEquals("none", refused.getString("backend"));
      List<RecordedEvent> regs = events.stream().filter(e -> e.getEventType().getName().equals("org.mori4j.Registration")
          && initiatorKey.equals(e.getString("engine"))).toList();
      assertEquals(1, regs.size(), "registration events: " + regs);
      assertTrue(regs.get(0).getBoolean("succeeded"));
      assertEquals(BUF, regs.get(0).getLong("bytes"));
      assertEquals("CPU", regs.get(0).getString("location"));
      assertTrue(events.stream().anyMatch(e -> e.getEventType().getName().equals("org.mori4j.Connection")
          && initiatorKey.equals(e.getString("engine")) && "connected".equals(e.getString("event")) && targetKey.equals(e.getString("peer"))),
          "no connection event");
    } finally {
      Files.deleteIfExists(file);
    }
  }

  @Test
  void mbeanExistsWhileTheEngineIsOpenAndGoesAwayOnClose() throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    ObjectName name;
    try (EnginePair p = new EnginePair(BUF)) {
      name = EngineMBean.objectName(p.initiator.key());
      assertEquals("org.mori4j:type=IoEngine,name=" + p.initiator.key(), name.toString());
      assertTrue(server.isRegistered(name));
      assertTrue(server.isRegistered(EngineMBean.objectName(p.target.key())));
      ok(p.initiator.write(p.local, 0, p.remote, 0, 4096, 1));
      assertEquals(1L, server.getAttribute(name, "TransfersStarted"));
      assertEquals(4096L, server.getAttribute(name, "TransferBytes"));
      assertEquals(0L, server.getAttribute(name, "TransfersInFlight"));
      assertEquals(1, server.getAttribute(name, "RegisteredRegions"));
      assertEquals(false, server.getAttribute(name, "RegistryBound"));
    }
    assertFalse(server.isRegistered(name), "the MBean outlived its engine");
    assertEquals("org.mori4j:type=IoEngine,name=\"a,b=c\"", EngineMBean.objectName("a,b=c").toString());
  }

  @Test
  void engineWithMetricsOffKeepsNoneAndRefusesARegistry() throws Exception {
    var config = ConfigFactory.parseString("mori4j.metrics.enabled = off").withFallback(ConfigFactory.load());
    ActorSystem<Void> app = ActorSystem.create(Behaviors.empty(), "metrics-off", config);
    try (Arena arena = Arena.ofShared()) {
      IoEngine a = IoEngine.create(app, "metrics-off-a", IoEngineConfig.loopback());
      IoEngine b = IoEngine.create(app, "metrics-off-b", IoEngineConfig.loopback());
      try {
        assertFalse(ManagementFactory.getPlatformMBeanServer().isRegistered(EngineMBean.objectName(a.key())));
        IoEngineException e = assertThrows(IoEngineException.class, () -> a.bindMetrics(new SimpleMeterRegistry()));
        assertEquals(StatusCode.ERR_BAD_STATE, e.code());
        assertTrue(e.getMessage().contains("mori4j.metrics.enabled"), e.getMessage());
        a.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
        b.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
        a.registerRemoteEngine(b.engineDesc());
        MemorySegment la = arena.allocate(8192, 8), lb = arena.allocate(8192, 8);
        MemoryDesc da = a.registerMemory(la), db = b.registerMemory(lb);
        ok(a.write(da, 0, db, 0, 4096, 1));
        done(a.write(da, 0, db, 0, -1, 2));
        assertEquals(0, a.metrics().getTransfersStarted());
        assertEquals(0, a.metrics().getTransfersRefused());
        assertEquals(0, a.metrics().getRegistrations());
      } finally {
        a.close();
        b.close();
      }
    } finally {
      app.terminate();
      app.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
