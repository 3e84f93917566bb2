package org.mori4j.io.metrics;

import java.util.Map;

/**
 * An engine's metrics as totals, for JMX ({@code org.mori4j:type=IoEngine,name=<engine key>}, registered while the
 * engine is open when {@code mori4j.metrics.jmx} is on) and for code ({@code IoEngine.metrics()}). They are the
 * same counters a bound Micrometer registry exports per backend, peer, op and kind (engine-actors/docs/metrics.md,
 * "Metrics"), summed here; they are kept with or without a registry. Latency percentiles are exported only through
 * a registry. Every value counts since the engine started.
 */
public interface IoEngineMetricsMXBean {
  /** The engine's key. */
  String getEngineKey();

  /** Transfers handed to a backend (reads, writes, batch entries, session transfers). */
  long getTransfersStarted();

  /** Bytes of the transfers handed to a backend. */
  long getTransferBytes();

  /** Transfers handed to a backend that have finished, with success or failure. */
  long getTransfersCompleted();

  /** Transfers started and not finished yet. */
  long getTransfersInFlight();

  /** Transfers that failed after they were handed to a backend. */
  long getTransfersFailed();

  /** Transfers refused before any backend saw them (bad arguments, unknown memory or engine, closed engine). */
  long getTransfersRefused();

  /** Failed and refused transfers by status code name (only codes that happened). */
  Map<String, Long> getErrorsByCode();

  /** Peer engines each backend is connected to now, by backend name (tcp, rdma, xgmi). */
  Map<String, Long> getConnections();

  /** Connection changes by "backend/change" (change: connected, failed, disconnected, lost, reconnect). */
  Map<String, Long> getConnectionChanges();

  /** Transfers a backend handed to another at transfer time (XGMI to TCP when an IPC handle does not open). */
  long getReroutes();

  /** Peers whose transfers other backends carry because a faster backend (XGMI, RDMA) could not connect. */
  long getFallbacks();

  /** XGMI gather/scatter kernel launches. */
  long getXgmiKernelLaunches();

  /** Memory registrations with backends (one per backend a region was registered with). */
  long getRegistrations();

  /** Total time the backends took to register memory, in microseconds. */
  long getRegistrationMicros();

  /** Memory regions registered with the engine now. */
  int getRegisteredRegions();

  /** Whether a Micrometer registry is bound ({@code IoEngine.bindMetrics}). */
  boolean isRegistryBound();
}
