package org.mori4j.io.kv;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Draws the identity every {@link KvMigration} carries in its landing notices ({@link KvProtocol.LayersSent},
 * {@link KvProtocol.LayersLanded}, {@link KvProtocol.RequestAborted}), so that a receiver which forgot a request can
 * tell a late notice of a migration it had heard of from a new migration that reuses the request id. The ids of one
 * process are consecutive from a start drawn with {@link SecureRandom}, so they are distinct within it; two processes'
 * runs of k ids overlap with a probability of about 2k / 2^64. One draw per process rather than per migration:
 * {@code migrate()} is on the caller's latency path. Never 0, which the wire refuses.
 */
final class KvMigrationIds {
  private static final AtomicLong NEXT = new AtomicLong(new SecureRandom().nextLong());

  private KvMigrationIds() {}

  /** A new non-zero migration id, distinct from every other one this process drew. */
  static long next() {
    long v;
    do v = NEXT.incrementAndGet(); while (v == 0);
    return v;
  }
}
