package org.mori4j.io.kv;

/**
 * The migration ids of the requests a receiver forgot ({@link KvLandings#forget}), so that notices of those migrations
 * arriving late are dropped instead of re-creating the request. Bounded: at most {@code capacity} ids, the earliest
 * forgotten leave first; a notice of an id that left re-creates its request, as every late notice did before ids.
 * A ring keeps the ids in the order they came and an open-addressing table (linear probing; 0 marks an empty slot,
 * ids are never 0) answers the lookup every notice makes without boxing; both are allocated on the first id, so a
 * receiver that never forgets pays nothing, and at 65,536 ids they take 1.5 MiB. Not thread-safe: {@link KvLandings}
 * calls it under its lock.
 */
final class KvForgottenMigrations {
  /** Fibonacci hashing: one sender's ids are consecutive, and the multiply spreads them over the table. */
  private static final long SPREAD = 0x9e3779b97f4a7c15L;
  static final int MAX_CAPACITY = 1 << 24;

  private final int capacity;
  private long[] ring;
  private int oldest;
  private int size;
  private long[] table;
  private int mask;
  private int shift;

  KvForgottenMigrations(int capacity) {
    if (capacity < 1 || capacity > MAX_CAPACITY)
      throw new IllegalArgumentException("capacity must be 1.." + MAX_CAPACITY + ": " + capacity);
    this.capacity = capacity;
  }

  int capacity() {
    return capacity;
  }

  /** Ids remembered now. */
  int size() {
    return size;
  }

  boolean contains(long id) {
    if (table == null || id == 0) return false;
    for (int i = slot(id); ; i = (i + 1) & mask) {
      long v = table[i];
      if (v == id) return true;
      if (v == 0) return false;
    }
  }

  /** Remembers {@code id} (non-zero); when full, the id remembered longest ago is let go first. */
  void add(long id) {
    if (id == 0) throw new IllegalArgumentException("migration id 0 is never drawn");
    if (table == null) {
      ring = new long[capacity];
      int slots = Integer.highestOneBit(2 * capacity - 1) << 1; // at least twice the ids: probes stay short
      table = new long[slots];
      mask = slots - 1;
      shift = 64 - Integer.numberOfTrailingZeros(slots);
    } else if (contains(id)) {
      return;
    }
    if (size == capacity) {
      remove(ring[oldest]);
      oldest = (oldest + 1) % capacity;
      size--;
    }
    ring[(oldest + size) % capacity] = id;
    size++;
    int i = slot(id);
    while (table[i] != 0) i = (i + 1) & mask;
    table[i] = id;
  }

  /** Takes {@code id} out of the table, moving later entries of its probe run back so no lookup stops early. */
  private void remove(long id) {
    int hole = slot(id);
    while (table[hole] != id) hole = (hole + 1) & mask;
    table[hole] = 0;
    for (int j = (hole + 1) & mask; table[j] != 0; j = (j + 1) & mask) {
      int home = slot(table[j]);
      // the entry at j may fill the hole only if the hole lies on its probe path, from its home slot to j
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        table[hole] = table[j];
        table[j] = 0;
        hole = j;
      }
    }
  }

  private int slot(long id) {
    return (int) ((id * SPREAD) >>> shift); // shift <= 63: the table has at least 2 slots
  }
}
