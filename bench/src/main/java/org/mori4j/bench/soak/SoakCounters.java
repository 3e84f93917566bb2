package org.mori4j.bench.soak;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one node's workload has done so far, cumulative for the life of its JVM: transfers that completed
 * and checked out (with their bytes), transfers that failed by status code, and the events that must never
 * happen: bytes that did not check out ({@code corrupted}) and transfers not complete within their bound
 * ({@code hung}). A successful write whose read-back failed is {@code unverified}, neither good nor bad.
 */
final class SoakCounters {
  final LongAdder done = new LongAdder();
  final LongAdder bytes = new LongAdder();
  final LongAdder corrupted = new LongAdder();
  final LongAdder hung = new LongAdder();
  final LongAdder unverified = new LongAdder();
  /** Workers that gave a hung transfer up after a second bound and stopped (their slot may still be written). */
  final LongAdder stuckWorkers = new LongAdder();
  private final ConcurrentHashMap<String, LongAdder> failed = new ConcurrentHashMap<>();

  void failed(String code) {
    failed.computeIfAbsent(code, c -> new LongAdder()).increment();
  }

  Map<String, Long> failedByCode() {
    Map<String, Long> m = new TreeMap<>();
    failed.forEach((k, v) -> m.put(k, v.sum()));
    return m;
  }

  /** The {@code STATS} line the driver parses ({@link SoakLines}). */
  String statsLine() {
    StringBuilder codes = new StringBuilder();
    failedByCode().forEach((k, v) -> codes.append(codes.isEmpty() ? "" : ",").append(k).append(':').append(v));
    return "STATS done=" + done.sum() + " bytes=" + bytes.sum() + " corrupted=" + corrupted.sum() + " hung=" + hung.sum()
        + " unverified=" + unverified.sum() + " stuck=" + stuckWorkers.sum() + " failed=" + (codes.isEmpty() ? "-" : codes);
  }
}
