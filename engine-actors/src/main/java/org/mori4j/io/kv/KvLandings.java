package org.mori4j.io.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiving side of one cache: which layers of which request have landed, the waiters for layer ranges, and
 * the subscribers. Requests are kept until {@link #forget} or until {@code maxRequests} newer ones push them out
 * (a receiver that never forgets must not grow without bound).
 *
 * <p>Every notice names the migration that sent it ({@link KvMigrationIds}), and each request keeps the ids it heard.
 * A range is told twice (the receiving engine's own record or landing board, and the sender's message), so the
 * second can arrive after the application forgot the request; {@link #forget} therefore moves the request's ids into
 * a bounded memory ({@link KvForgottenMigrations}, {@code maxForgotten} ids, the earliest leaving first) and notices
 * of those ids are dropped: no event, no waiter completed. A notice with an id not heard before (a new migration
 * under a reused request id, as vLLM's retries do) starts the request afresh. Only ids heard before the forget are
 * remembered: a migration whose first notice comes after its request was forgotten is taken as a new one.
 */
final class KvLandings {
  private static final Logger log = LoggerFactory.getLogger(KvLandings.class);

  private final String cacheName;
  private final int layers;
  private final Map<String, Req> requests;
  private final KvForgottenMigrations forgotten;
  private final CopyOnWriteArrayList<Consumer<KvLayersLanded>> listeners = new CopyOnWriteArrayList<>();

  private static final class Req {
    final BitSet landed = new BitSet();
    String failure;
    final List<Waiter> waiters = new ArrayList<>(2);
    /** The migrations heard for it; one unless the request id was reused while tracked. */
    long[] migrations = NONE;

    void heard(long migration) {
      for (long m : migrations) if (m == migration) return;
      migrations = Arrays.copyOf(migrations, migrations.length + 1);
      migrations[migrations.length - 1] = migration;
    }
  }

  private static final long[] NONE = {};

  private record Waiter(int from, int to, CompletableFuture<String> done) {}

  KvLandings(String cacheName, int layers, int maxRequests, int maxForgotten) {
    this.cacheName = cacheName;
    this.layers = layers;
    this.forgotten = new KvForgottenMigrations(maxForgotten);
    this.requests = new LinkedHashMap<>(16, 0.75f, false) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Req> e) {
        if (size() <= maxRequests) return false;
        for (Waiter w : e.getValue().waiters) w.done.complete("forgotten: more than " + maxRequests + " requests were tracked");
        return true;
      }
    };
  }

  /**
   * Records layers {@code [from, to)} of {@code requestId}, sent by migration {@code migration}, as landed and tells
   * waiters and subscribers, once; nothing if that migration's request was forgotten.
   */
  void landed(String requestId, long migration, int from, int to, String fromEngine) {
    if (requestId == null || from < 0 || to > layers || from >= to) {
      log.warn("cache '{}': ignoring landed layers [{}, {}) of request '{}' from '{}' (the cache has {} layers)", cacheName, from, to, requestId, fromEngine, layers);
      return;
    }
    List<CompletableFuture<String>> ready = new ArrayList<>(1);
    synchronized (this) {
      if (wasForgotten(requestId, migration, fromEngine)) return;
      Req r = requests.computeIfAbsent(requestId, k -> new Req());
      r.heard(migration);
      // told twice (this engine's backend first, the sender's message after): the second changes nothing
      if (r.landed.nextClearBit(from) >= to) return;
      r.landed.set(from, to);
      r.waiters.removeIf(w -> {
        if (r.landed.nextClearBit(w.from) < w.to) return false;
        ready.add(w.done);
        return true;
      });
    }
    for (CompletableFuture<String> f : ready) f.complete(null);
    publish(new KvLayersLanded(cacheName, requestId, from, to, fromEngine, null));
  }

  /**
   * {@code requestId} ended without its data (migration {@code migration} says): every waiter of it learns
   * {@code reason}; nothing if that migration's request was forgotten.
   */
  void aborted(String requestId, long migration, String fromEngine, String reason) {
    List<Waiter> ws;
    synchronized (this) {
      if (wasForgotten(requestId, migration, fromEngine)) return;
      Req r = requests.computeIfAbsent(requestId, k -> new Req());
      r.heard(migration);
      r.failure = reason;
      ws = new ArrayList<>(r.waiters);
      r.waiters.clear();
    }
    for (Waiter w : ws) w.done.complete(reason);
    publish(new KvLayersLanded(cacheName, requestId, 0, 0, fromEngine, reason));
  }

  /** Completes with null once layers {@code [from, to)} of {@code requestId} landed, or with the reason it never will. */
  CompletableFuture<String> whenLanded(String requestId, int from, int to) {
    if (from < 0 || to > layers || from >= to)
      return CompletableFuture.completedFuture("layer range [" + from + ", " + to + ") is empty or outside [0, " + layers + ")");
    synchronized (this) {
      Req r = requests.computeIfAbsent(requestId, k -> new Req());
      if (r.landed.nextClearBit(from) >= to) return CompletableFuture.completedFuture(null);
      if (r.failure != null) return CompletableFuture.completedFuture(r.failure);
      Waiter w = new Waiter(from, to, new CompletableFuture<>());
      r.waiters.add(w);
      return w.done;
    }
  }

  /** Drops {@code requestId}; its waiters learn it was forgotten and later notices of the migrations it heard are dropped. */
  synchronized void forget(String requestId) {
    Req r = requests.remove(requestId);
    if (r == null) return;
    for (long m : r.migrations) forgotten.add(m);
    for (Waiter w : r.waiters) w.done.complete("request '" + requestId + "' was forgotten");
  }

  /** Under the lock: whether {@code migration}'s request was forgotten (its notice is then dropped). */
  private boolean wasForgotten(String requestId, long migration, String fromEngine) {
    if (!forgotten.contains(migration)) return false;
    log.debug("cache '{}': dropping a late notice of request '{}' from '{}' (migration {}): the request was forgotten", cacheName, requestId,
        fromEngine, Long.toHexString(migration));
    return true;
  }

  /** Migration ids remembered for forgotten requests (tests). */
  synchronized int forgottenMigrations() {
    return forgotten.size();
  }

  void closeAll(String reason) {
    List<Waiter> ws = new ArrayList<>();
    synchronized (this) {
      for (Req r : requests.values()) ws.addAll(r.waiters);
      requests.clear();
    }
    for (Waiter w : ws) w.done.complete(reason);
  }

  AutoCloseable subscribe(Consumer<KvLayersLanded> listener) {
    listeners.add(listener);
    return () -> listeners.remove(listener);
  }

  private void publish(KvLayersLanded e) {
    for (Consumer<KvLayersLanded> l : listeners) {
      try {
        l.accept(e);
      } catch (RuntimeException ex) {
        log.warn("cache '{}': a landed-layers subscriber threw", cacheName, ex);
      }
    }
  }
}
