package org.mori4j.bench.soak;

/**
 * Where the soak's bytes live. Every node publishes one host buffer, {@value #PUBLISHED_NAME}: a read area
 * that holds the soak seed's fixed pattern (any node reads any range of it and checks it), then a write
 * area with one region per initiating node and in it one slot per worker, so that no two writers ever share
 * a byte and a read-back finds exactly what its writer put there. The initiator's own buffer has, per peer
 * and worker, a source half (what it writes) and a destination half (what it reads into).
 */
final class SoakLayout {
  static final String PUBLISHED_NAME = "soak-buffer";
  static final int NODES = 3;
  static final int WORKERS_PER_PEER = 2;
  static final long SLOT = 1L << 20;
  static final long READ_AREA = 4L << 20;
  static final long TARGET_BYTES = READ_AREA + (long) NODES * WORKERS_PER_PEER * SLOT;
  static final long LOCAL_BYTES = (long) NODES * WORKERS_PER_PEER * 2 * SLOT;
  /** Transfer sizes, small ones more often (the KV-cache block mix: many 4-64 KiB, some large). */
  static final long[] SIZES = {4096, 4096, 16384, 65536, 65536, 262144, SLOT};
  /** Blocks per batch transfer. */
  static final int BATCH_BLOCKS = 4;

  private SoakLayout() {}

  /** Offset in a target's buffer of the slot that worker {@code worker} of node {@code initiator} writes. */
  static long targetSlot(int initiator, int worker) {
    return READ_AREA + ((long) initiator * WORKERS_PER_PEER + worker) * SLOT;
  }

  /** Offset in the initiator's buffer of the source half for {@code peer}, {@code worker}; the destination half follows it. */
  static long localSource(int peer, int worker) {
    return ((long) peer * WORKERS_PER_PEER + worker) * 2 * SLOT;
  }

  static long localDestination(int peer, int worker) {
    return localSource(peer, worker) + SLOT;
  }

  /** The engine key of node {@code index}: the same for every incarnation, as a restarted service keeps its name. */
  static String engineKey(int index) {
    return "soak-" + index;
  }

  /** The node index of an engine key of the soak, or -1. */
  static int indexOf(String key) {
    if (!key.startsWith("soak-")) return -1;
    try {
      int i = Integer.parseInt(key.substring(5));
      return i >= 0 && i < NODES ? i : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
