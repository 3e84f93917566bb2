package org.mori4j.io;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What memory registration has cost one engine so far, readable from any thread (a metrics registry binds
 * its getters as gauges and counters): how many regions were registered and deregistered, the time the
 * engine spent on them (from the request reaching the engine to its answer, bulk calls counted once with
 * all their regions), the slowest call, how many regions were views of a region already registered (served
 * by the range cache: their backends shared the existing registration) and how many full registrations the
 * backends made ({@code registerMemory} calls, one per region and backend).
 */
public final class RegistrationStats {
  private final LongAdder regions = new LongAdder();
  private final LongAdder calls = new LongAdder();
  private final LongAdder nanos = new LongAdder();
  private final AtomicLong maxCallNanos = new AtomicLong();
  private final LongAdder views = new LongAdder();
  private final LongAdder backendRegistrations = new LongAdder();
  private final LongAdder deregistered = new LongAdder();

  /** For the engine: one registration call of {@code n} regions that took {@code elapsed} nanoseconds. */
  public void recordCall(int n, long elapsed, int viewsServed, int fullBackendRegistrations) {
    regions.add(n);
    calls.increment();
    nanos.add(elapsed);
    maxCallNanos.accumulateAndGet(elapsed, Math::max);
    views.add(viewsServed);
    backendRegistrations.add(fullBackendRegistrations);
  }

  /** For the engine: {@code n} regions were deregistered. */
  public void recordDeregistered(int n) {
    deregistered.add(n);
  }

  /** Regions registered (successful calls only). */
  public long regions() {
    return regions.sum();
  }

  /** Successful registration calls (a bulk call counts once). */
  public long calls() {
    return calls.sum();
  }

  /** Total time of the successful registration calls, in nanoseconds. */
  public long totalNanos() {
    return nanos.sum();
  }

  /** The slowest successful registration call, in nanoseconds. */
  public long maxCallNanos() {
    return maxCallNanos.get();
  }

  /** Mean time per registered region in nanoseconds (0 before the first). */
  public double nanosPerRegion() {
    long n = regions.sum();
    return n == 0 ? 0 : (double) nanos.sum() / n;
  }

  /** Regions registered as views of a live registration of this engine (range cache hits). */
  public long viewsFromCache() {
    return views.sum();
  }

  /** Full registrations the backends made ({@code registerMemory}: one per region not served by the cache, per backend). */
  public long backendRegistrations() {
    return backendRegistrations.sum();
  }

  /** Regions deregistered. */
  public long deregistered() {
    return deregistered.sum();
  }

  @Override
  public String toString() {
    return String.format(java.util.Locale.ROOT, "%d regions in %d calls, %.1f us per region (slowest call %.1f us), %d views from the cache,"
        + " %d backend registrations, %d deregistered", regions(), calls(), nanosPerRegion() / 1e3, maxCallNanos() / 1e3, viewsFromCache(),
        backendRegistrations(), deregistered());
  }
}
