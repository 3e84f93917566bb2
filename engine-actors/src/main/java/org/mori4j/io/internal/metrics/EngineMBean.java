package org.mori4j.io.internal.metrics;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.mori4j.io.BackendType;
import org.mori4j.io.internal.Routes;
import org.mori4j.io.metrics.IoEngineMetricsMXBean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's {@link IoEngineMetricsMXBean}: sums of {@link EngineMeters}' counters, computed when read. Also what
 * {@code IoEngine.metrics()} returns, registered in JMX or not.
 */
public final class EngineMBean implements IoEngineMetricsMXBean {
  private static final Logger log = LoggerFactory.getLogger(EngineMBean.class);

  private final EngineMeters m;
  private ObjectName name;

  public EngineMBean(EngineMeters meters) {
    this.m = meters;
  }

  /** The JMX name of engine {@code key}'s MBean (quoted when the key has characters a name cannot hold). */
  public static ObjectName objectName(String key) throws JMException {
    String plain = "org.mori4j:type=IoEngine,name=" + key;
    boolean safe = key.chars().noneMatch(ch -> ",=:\"*?\n".indexOf(ch) >= 0);
    return new ObjectName(safe ? plain : "org.mori4j:type=IoEngine,name=" + ObjectName.quote(key));
  }

  static EngineMBean register(EngineMeters meters) {
    EngineMBean b = new EngineMBean(meters);
    try {
      MBeanServer server = ManagementFactory.getPlatformMBeanServer();
      ObjectName n = objectName(meters.engineKey);
      server.registerMBean(b, n);
      b.name = n;
    } catch (JMException | RuntimeException e) {
      // metrics must never stop an engine from starting; the counters stay readable through IoEngine.metrics()
      log.warn("engine '{}': cannot register its MBean: {}", meters.engineKey, e.toString());
    }
    return b;
  }

  void unregister() {
    if (name == null) return;
    try {
      ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
    } catch (JMException e) {
      log.warn("engine '{}': cannot unregister its MBean {}: {}", m.engineKey, name, e.toString());
    }
    name = null;
  }

  private void routes(Consumer<RouteMeters> f) {
    for (PeerMeters p : m.peers.values()) p.forEach(f);
  }

  private long sumRoutes(java.util.function.ToLongFunction<RouteMeters> f) {
    long[] n = {0};
    routes(r -> n[0] += f.applyAsLong(r));
    return n[0];
  }

  private static long sum(LongAdder[] a) {
    long n = 0;
    for (LongAdder x : a) n += x.sum();
    return n;
  }

  @Override
  public String getEngineKey() {
    return m.engineKey;
  }

  @Override
  public long getTransfersStarted() {
    return sumRoutes(r -> r.started.sum());
  }

  @Override
  public long getTransferBytes() {
    return sumRoutes(r -> r.bytes.sum());
  }

  @Override
  public long getTransfersCompleted() {
    return sumRoutes(r -> r.completed.sum());
  }

  @Override
  public long getTransfersInFlight() {
    return sumRoutes(RouteMeters::inFlight);
  }

  @Override
  public long getTransfersFailed() {
    return sumRoutes(r -> sum(r.errors));
  }

  @Override
  public long getTransfersRefused() {
    long n = 0;
    for (RouteMeters r : m.refused) n += sum(r.errors);
    return n;
  }

  @Override
  public Map<String, Long> getErrorsByCode() {
    Map<String, Long> out = new TreeMap<>();
    Consumer<RouteMeters> add = r -> {
      for (int c = 0; c < r.errors.length; c++) {
        long n = r.errors[c].sum();
        if (n > 0) out.merge(RouteMeters.code(c).name(), n, Long::sum);
      }
    };
    routes(add);
    for (RouteMeters r : m.refused) add.accept(r);
    return out;
  }

  @Override
  public Map<String, Long> getConnections() {
    Map<String, Long> out = new TreeMap<>();
    Routes r = m.routes.get();
    for (BackendType b : EngineMeters.BACKENDS) {
      long n = 0;
      for (Routes.Peer p : r.peers().values()) if (p.handles().containsKey(b)) n++;
      if (n > 0 || r.backends().stream().anyMatch(x -> x.type() == b)) out.put(b.name().toLowerCase(java.util.Locale.ROOT), n);
    }
    return out;
  }

  @Override
  public Map<String, Long> getConnectionChanges() {
    Map<String, Long> out = new TreeMap<>();
    for (BackendType b : EngineMeters.BACKENDS) {
      for (EngineMeters.Change c : EngineMeters.Change.values()) {
        long n = m.connectionChanges[b.ordinal()][c.ordinal()].sum();
        if (n > 0) out.put(b.name().toLowerCase(java.util.Locale.ROOT) + "/" + c.tag(), n);
      }
    }
    return out;
  }

  @Override
  public long getReroutes() {
    long n = 0;
    for (LongAdder[] row : m.reroutes) n += sum(row);
    return n;
  }

  @Override
  public long getFallbacks() {
    return sum(m.fallbacks);
  }

  @Override
  public long getXgmiKernelLaunches() {
    return m.kernelLaunches.sum();
  }

  @Override
  public long getRegistrations() {
    return sum(m.registrations);
  }

  @Override
  public long getRegistrationMicros() {
    return sum(m.registrationNanos) / 1000;
  }

  @Override
  public int getRegisteredRegions() {
    return m.routes.get().locals().size();
  }

  @Override
  public boolean isRegistryBound() {
    return m.bound();
  }
}
