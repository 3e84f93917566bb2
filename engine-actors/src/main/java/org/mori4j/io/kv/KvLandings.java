package org.mori4j.io.kv;

import java.util.ArrayList;
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
 */
final class KvLandings {
  private static final Logger log = LoggerFactory.getLogger(KvLandings.class);

  private final String cacheName;
  private final int layers;
  private final Map<String, Req> requests;
  private final CopyOnWriteArrayList<Consumer<KvLayersLanded>> listeners = new CopyOnWriteArrayList<>();

  private static final class Req {
    final BitSet landed = new BitSet();
    String failure;
    final List<Waiter> waiters = new ArrayList<>(2);
  }

  private record Waiter(int from, int to, CompletableFuture<String> done) {}

  KvLandings(String cacheName, int layers, int maxRequests) {
    this.cacheName = cacheName;
    this.layers = layers;
    this.requests = new LinkedHashMap<>(16, 0.75f, false) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Req> e) {
        if (size() <= maxRequests) return false;
        for (Waiter w : e.getValue().waiters) w.done.complete("forgotten: more than " + maxRequests + " requests were tracked");
        return true;
      }
    };
  }

  /** Records layers {@code [from, to)} of {@code requestId} as landed and tells waiters and subscribers, once. */
  void landed(String requestId, int from, int to, String fromEngine) {
    if (requestId == null || from < 0 || to > layers || from >= to) {
      log.warn("cache '{}': ignoring landed layers [{}, {}) of request '{}' from '{}' (the cache has {} layers)", cacheName, from, to, requestId, fromEngine, layers);
      return;
    }
    List<CompletableFuture<String>> ready = new ArrayList<>(1);
    synchronized (this) {
      Req r = requests.computeIfAbsent(requestId, k -> new Req());
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

  /** {@code requestId} ended without its data: every waiter of it learns {@code reason}. */
  void aborted(String requestId, String fromEngine, String reason) {
    List<Waiter> ws;
    synchronized (this) {
      Req r = requests.computeIfAbsent(requestId, k -> new Req());
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

  synchronized void forget(String requestId) {
    Req r = requests.remove(requestId);
    if (r != null) for (Waiter w : r.waiters) w.done.complete("request '" + requestId + "' was forgotten");
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
