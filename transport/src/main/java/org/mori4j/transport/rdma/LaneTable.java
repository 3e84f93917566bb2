package org.mori4j.transport.rdma;

import java.util.List;

/**
 * A worker's queue pairs by queue-pair number, for the completion loop: each completion names only its queue pair's
 * number, and a boxed map lookup per completion would allocate on the hot path. Open addressing over two parallel
 * arrays, rebuilt from the worker's lane list when a lane leaves (rare: a disconnect or a replacement). Worker thread
 * only.
 */
final class LaneTable {
  private int[] keys = new int[16];
  private RdmaLane[] values = new RdmaLane[16];
  private int count;

  int size() {
    return count;
  }

  RdmaLane get(int qpn) {
    int mask = keys.length - 1;
    for (int i = (qpn * 0x9E3779B9) >>> 8 & mask; values[i] != null; i = (i + 1) & mask) if (keys[i] == qpn) return values[i];
    return null;
  }

  void add(RdmaLane lane, List<RdmaLane> all) {
    if ((count + 1) * 2 > keys.length) rebuild(all, keys.length * 2);
    put(lane);
  }

  /** Rebuilds the table from {@code all} (the lanes still in service), at least {@code capacity} slots (a power of two). */
  void rebuild(List<RdmaLane> all, int capacity) {
    keys = new int[capacity];
    values = new RdmaLane[capacity];
    count = 0;
    for (RdmaLane l : all) put(l);
  }

  int capacity() {
    return keys.length;
  }

  private void put(RdmaLane l) {
    int mask = keys.length - 1;
    int i = (l.qpNumber * 0x9E3779B9) >>> 8 & mask;
    while (values[i] != null && keys[i] != l.qpNumber) i = (i + 1) & mask;
    if (values[i] == null) count++;
    keys[i] = l.qpNumber;
    values[i] = l;
  }
}
