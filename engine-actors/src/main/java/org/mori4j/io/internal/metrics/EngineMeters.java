package org.mori4j.io.internal.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngineException;
import org.mori4j.io.StatusCode;
import org.mori4j.io.internal.Routes;
import org.mori4j.transport.TransferOp;

/**
 * One engine's metrics: the transfer routes' counters ({@link RouteMeters}), connection changes, reroutes and
 * fall-backs, XGMI kernel launches and registrations, all as {@code LongAdder}s that cost the same with or without
 * a registry; the Micrometer binding ({@link #bind}) that exports them; the JFR events; and the MBean. Made by the
 * engine's {@code TransferPath}; hooks in the engine, backend actors and the transfer path call it. With
 * {@code mori4j.metrics.enabled = off} every hook returns at once and {@link #route} gives null, so the transfer
 * path does no metrics work at all.
 */
public final class EngineMeters implements AutoCloseable {
  /** Connection changes a backend reports for a peer. */
  public enum Change {
    CONNECTED, FAILED, DISCONNECTED, LOST, RECONNECT;

    String tag() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  static final BackendType[] BACKENDS = BackendType.values();

  final String engineKey;
  final MetricsSettings settings;
  /** Whether JFR events are emitted at all (they still cost nothing while no recording enables them). */
  final boolean jfr;
  final Supplier<Routes> routes;
  final ConcurrentHashMap<String, PeerMeters> peers = new ConcurrentHashMap<>();
  /** Transfers refused before a route existed, per (op, kind); errors only. */
  final RouteMeters[] refused = new RouteMeters[2 * RouteMeters.KINDS.length];
  final LongAdder[][] connectionChanges = adders(BACKENDS.length, Change.values().length);
  final LongAdder[][] reroutes = adders(BACKENDS.length, BACKENDS.length);
  final LongAdder[] fallbacks = adders(1, BACKENDS.length)[0];
  final LongAdder kernelLaunches = new LongAdder();
  final LongAdder[] registrations = adders(1, BACKENDS.length)[0];
  final LongAdder[] registrationNanos = adders(1, BACKENDS.length)[0];
  final LongAdder[] registrationFailures = adders(1, BACKENDS.length)[0];
  final LongAdder[] deregistrations = adders(1, BACKENDS.length)[0];
  /** The registry binding; null until {@link #bind}. Guarded by this. */
  private MicrometerBinding binding;
  private EngineMBean mbean;
  /** Backends this engine has started at least once, in start order. Guarded by this. */
  private final java.util.List<BackendType> backendsSeen = new java.util.ArrayList<>();
  private boolean closed;

  public EngineMeters(String engineKey, MetricsSettings settings, Supplier<Routes> routes) {
    this.engineKey = engineKey;
    this.settings = settings;
    this.jfr = settings.jfr();
    this.routes = routes;
    for (int i = 0; i < refused.length; i++)
      refused[i] = new RouteMeters(this, null, "none", i < RouteMeters.KINDS.length ? TransferOp.READ : TransferOp.WRITE,
          i % RouteMeters.KINDS.length);
  }

  private static LongAdder[][] adders(int n, int m) {
    LongAdder[][] a = new LongAdder[n][m];
    for (LongAdder[] row : a) for (int j = 0; j < m; j++) row[j] = new LongAdder();
    return a;
  }

  public boolean enabled() {
    return settings.enabled();
  }

  /**
   * The route of transfers of kind {@code kind} ({@link RouteMeters#SINGLE}, {@code BATCH}, {@code SESSION}) and
   * direction {@code op} to engine {@code peer} over {@code backend}; null when metrics are off. A session resolves
   * its routes once; an engine-level transfer pays one lookup in a concurrent map by the peer's key (its hash is
   * cached in the string; no allocation) and an array read.
   */
  public RouteMeters route(String peer, BackendType backend, byte op, int kind) {
    if (!settings.enabled()) return null;
    PeerMeters p = peers.get(peer);
    if (p == null) p = peers.computeIfAbsent(peer, PeerMeters::new);
    int slot = PeerMeters.slot(backend, op, kind);
    RouteMeters r = p.get(slot);
    return r != null ? r : newRoute(p, slot, backend, op, kind);
  }

  private synchronized RouteMeters newRoute(PeerMeters p, int slot, BackendType backend, byte op, int kind) {
    RouteMeters r = p.install(slot, new RouteMeters(this, backend, p.peer, op, kind));
    if (binding != null) binding.route(r, p);
    return r;
  }

  /** A transfer of kind {@code kind} was refused with {@code code} before a route was chosen (bad input, unknown peer). */
  public void refused(byte op, int kind, StatusCode code) {
    if (!settings.enabled()) return;
    RouteMeters r = refused[(op == TransferOp.READ ? 0 : RouteMeters.KINDS.length) + kind];
    r.error(code);
    if (jfr && JfrState.recording) r.emit(code, 0, null);
  }

  /** First error of {@code code} on {@code r}: from now on the registry (if any) shows its counter. */
  synchronized void errorSeen(RouteMeters r, StatusCode code) {
    if (r.errorSeen[code.ordinal()]) return;
    r.errorSeen[code.ordinal()] = true;
    if (binding != null) binding.error(r, code);
  }

  /** Backend {@code backend}'s connection to {@code peer} changed ({@code reason}: why, or null). */
  public void connection(BackendType backend, String peer, Change change, String reason) {
    if (!settings.enabled()) return;
    connectionChanges[backend.ordinal()][change.ordinal()].increment();
    connectionEvent(backend, peer, change.tag(), reason);
  }

  /** An op to {@code peer} that {@code from} could not carry went to {@code to} ({@code why}). */
  public void rerouted(BackendType from, BackendType to, String why) {
    if (!settings.enabled()) return;
    reroutes[from.ordinal()][to.ordinal()].increment();
    connectionEvent(from, "", "reroute to " + to.name().toLowerCase(java.util.Locale.ROOT), why);
  }

  /** {@code backend}, a faster path, could not connect to {@code peer} ({@code why}); the other backends carry it. */
  public void fallback(BackendType backend, String peer, String why) {
    if (!settings.enabled()) return;
    fallbacks[backend.ordinal()].increment();
    connectionEvent(backend, peer, "fallback", why);
  }

  private void connectionEvent(BackendType backend, String peer, String event, String reason) {
    if (!jfr || !JfrState.recording) return;
    ConnectionEvent e = new ConnectionEvent();
    if (!e.shouldCommit()) return;
    e.engine = engineKey;
    e.backend = backend.name().toLowerCase(java.util.Locale.ROOT);
    e.peer = peer;
    e.event = event;
    e.reason = reason;
    e.commit();
  }

  /** The engine started a backend of type {@code b}: from now on the registry (if any) shows that backend's meters. */
  public synchronized void backendStarted(BackendType b) {
    if (!settings.enabled() || backendsSeen.contains(b)) return;
    if (binding != null) binding.backend(b, backendsSeen);
    backendsSeen.add(b);
  }

  public void kernelLaunched() {
    if (settings.enabled()) kernelLaunches.increment();
  }

  /** Starts timing the registration of region {@code memoryId} with {@code backend}; {@link Registration#end} ends it. */
  public Registration beginRegistration(BackendType backend, long memoryId, boolean gpu, long bytes) {
    return new Registration(backend, memoryId, gpu, bytes);
  }

  /** One registration with one backend being timed. */
  public final class Registration {
    private final BackendType backend;
    private final long start = System.nanoTime();
    private final RegistrationEvent event;

    private Registration(BackendType backend, long memoryId, boolean gpu, long bytes) {
      this.backend = backend;
      RegistrationEvent e = null;
      if (jfr && JfrState.recording) {
        e = new RegistrationEvent();
        e.engine = engineKey;
        e.backend = backend.name().toLowerCase(java.util.Locale.ROOT);
        e.memoryId = memoryId;
        e.location = gpu ? "GPU" : "CPU";
        e.bytes = bytes;
        e.begin();
      }
      this.event = e;
    }

    /** The backend registered the region ({@code failure} null) or refused it. */
    public void end(String failure) {
      if (!settings.enabled()) return;
      int b = backend.ordinal();
      if (failure == null) {
        registrations[b].increment();
        registrationNanos[b].add(System.nanoTime() - start);
      } else {
        registrationFailures[b].increment();
      }
      if (event != null && event.shouldCommit()) {
        event.succeeded = failure == null;
        event.failure = failure;
        event.commit();
      }
    }
  }

  public void deregistered(BackendType backend) {
    if (settings.enabled()) deregistrations[backend.ordinal()].increment();
  }

  /**
   * Exports this engine's meters through {@code registry} from now on (meters of routes made later join it as
   * they appear). One registry per engine: bind a {@code CompositeMeterRegistry} to feed several.
   */
  public synchronized void bind(MeterRegistry registry) {
    if (registry == null) throw new IoEngineException(StatusCode.ERR_INVALID_ARGS, "registry must not be null");
    if (!settings.enabled())
      throw new IoEngineException(StatusCode.ERR_BAD_STATE, "metrics of engine '" + engineKey
          + "' are off (mori4j.metrics.enabled = off, env MORI4J_METRICS): there is nothing to bind");
    if (closed) throw new IoEngineException(StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' is closed");
    if (binding != null) {
      if (binding.registry == registry) return;
      throw new IoEngineException(StatusCode.ERR_BAD_STATE, "engine '" + engineKey + "' already exports its metrics to "
          + binding.registry + "; bind a CompositeMeterRegistry to feed several");
    }
    binding = new MicrometerBinding(this, registry);
    binding.engine();
    for (int i = 0; i < backendsSeen.size(); i++) binding.backend(backendsSeen.get(i), backendsSeen.subList(0, i));
    for (RouteMeters r : refused) for (int c = 0; c < r.errorSeen.length; c++) if (r.errorSeen[c]) binding.error(r, RouteMeters.code(c));
    for (PeerMeters p : peers.values()) {
      p.forEach(r -> {
        binding.route(r, p);
        for (int c = 0; c < r.errorSeen.length; c++) if (r.errorSeen[c]) binding.error(r, RouteMeters.code(c));
      });
    }
  }

  synchronized boolean bound() {
    return binding != null;
  }

  /** The engine's totals (what its MBean shows), registered in JMX or not. */
  public org.mori4j.io.metrics.IoEngineMetricsMXBean totals() {
    return new EngineMBean(this);
  }

  /** Registers the engine's MBean (when {@code mori4j.metrics.jmx} is on); {@link #close} unregisters it. */
  public synchronized void registerMBean() {
    if (!settings.jmx() || closed || mbean != null) return;
    mbean = EngineMBean.register(this);
  }

  /** The engine closed: its meters leave the registry (a new engine may reuse the key) and its MBean goes. */
  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    if (binding != null) binding.close();
    if (mbean != null) mbean.unregister();
  }
}
