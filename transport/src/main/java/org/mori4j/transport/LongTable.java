package org.mori4j.transport;

import java.util.ArrayList;
import java.util.List;

/**
 * A map from {@code long} keys to values, readable without locks, boxing or allocation from I/O and worker
 * threads. Writers (rare: registration, deregistration) copy the open-addressed arrays under a lock and
 * publish them through a volatile field; readers see either the old or the new table, never a torn one.
 */
public class LongTable<V> {
  private record Table(long[] keys, Object[] values, int count) {}

  private volatile Table table = new Table(new long[16], new Object[16], 0);

  /** The value under {@code key}, or null. */
  @SuppressWarnings("unchecked")
  public final V get(long key) {
    Table t = table;
    int mask = t.keys.length - 1;
    for (int i = mix(key) & mask; ; i = (i + 1) & mask) {
      Object v = t.values[i];
      if (v == null) return null;
      if (t.keys[i] == key) return (V) v;
    }
  }

  /** Puts {@code value} under {@code key}, replacing what was there. */
  public final synchronized void put(long key, V value) {
    if (value == null) throw new IllegalArgumentException("value must not be null");
    Table t = table;
    int cap = t.keys.length;
    while ((t.count + 1) * 2 > cap) cap *= 2;
    long[] keys = new long[cap];
    Object[] values = new Object[cap];
    int n = 0;
    for (int i = 0; i < t.keys.length; i++) if (t.values[i] != null && t.keys[i] != key) n += insert(keys, values, t.keys[i], t.values[i]);
    n += insert(keys, values, key, value);
    table = new Table(keys, values, n);
  }

  /** Removes and returns the value under {@code key}, or null. */
  @SuppressWarnings("unchecked")
  public final synchronized V remove(long key) {
    Table t = table;
    Object found = null;
    long[] keys = new long[t.keys.length];
    Object[] values = new Object[t.keys.length];
    int n = 0;
    for (int i = 0; i < t.keys.length; i++) {
      if (t.values[i] == null) continue;
      if (t.keys[i] == key) found = t.values[i];
      else n += insert(keys, values, t.keys[i], t.values[i]);
    }
    table = new Table(keys, values, n);
    return (V) found;
  }

  public final int size() {
    return table.count;
  }

  /** A snapshot of the values. */
  @SuppressWarnings("unchecked")
  public final List<V> values() {
    Table t = table;
    List<V> out = new ArrayList<>(t.count);
    for (Object v : t.values) if (v != null) out.add((V) v);
    return out;
  }

  private static int insert(long[] keys, Object[] values, long key, Object value) {
    int mask = keys.length - 1;
    int i = mix(key) & mask;
    while (values[i] != null) i = (i + 1) & mask;
    keys[i] = key;
    values[i] = value;
    return 1;
  }

  private static int mix(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32));
  }
}
