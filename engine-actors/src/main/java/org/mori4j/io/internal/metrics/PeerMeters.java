package org.mori4j.io.internal.metrics;

import java.util.concurrent.atomic.AtomicReferenceArray;
import org.mori4j.io.BackendType;
import org.mori4j.transport.TransferOp;

/**
 * The routes of one peer engine, one slot per (backend, op, kind), made on first use: a peer that only ever
 * sees session writes over TCP has one route, and a registry sees only meters that counted something.
 */
final class PeerMeters {
  private static final int KINDS = RouteMeters.KINDS.length;
  private static final int PER_BACKEND = 2 * KINDS;

  final String peer;
  private final AtomicReferenceArray<RouteMeters> routes = new AtomicReferenceArray<>(BackendType.values().length * PER_BACKEND);

  PeerMeters(String peer) {
    this.peer = peer;
  }

  static int slot(BackendType backend, byte op, int kind) {
    return backend.ordinal() * PER_BACKEND + (op == TransferOp.READ ? 0 : KINDS) + kind;
  }

  RouteMeters get(int slot) {
    return routes.get(slot);
  }

  /** Installs {@code r} in {@code slot} unless another thread was first; returns the one that stays. */
  RouteMeters install(int slot, RouteMeters r) {
    return routes.compareAndExchange(slot, null, r) == null ? r : routes.get(slot);
  }

  /** Transfers of this peer in flight on {@code backend}. */
  long inFlight(BackendType backend) {
    long n = 0;
    for (int i = backend.ordinal() * PER_BACKEND, end = i + PER_BACKEND; i < end; i++) {
      RouteMeters r = routes.get(i);
      if (r != null) n += r.inFlight();
    }
    return n;
  }

  void forEach(java.util.function.Consumer<RouteMeters> f) {
    for (int i = 0; i < routes.length(); i++) {
      RouteMeters r = routes.get(i);
      if (r != null) f.accept(r);
    }
  }
}
