package org.mori4j.transport;

/**
 * Registered regions by id, readable without locks or boxing from I/O threads. Writers (registration and
 * deregistration, rare) copy the open-addressed arrays under a lock and publish them through a volatile
 * field; readers see either the old or the new table, never a torn one.
 */
public final class RegionTable {
  private record Table(long[] ids, LocalRegion[] regions, int count) {}

  private volatile Table table = new Table(new long[16], new LocalRegion[16], 0);

  /** The live region with this id, or null. */
  public LocalRegion get(long id) {
    Table t = table;
    int mask = t.ids.length - 1;
    for (int i = mix(id) & mask; ; i = (i + 1) & mask) {
      LocalRegion r = t.regions[i];
      if (r == null) return null;
      if (t.ids[i] == id) return r;
    }
  }

  public synchronized void put(LocalRegion r) {
    Table t = table;
    int cap = t.ids.length;
    while ((t.count + 1) * 2 > cap) cap *= 2;
    long[] ids = new long[cap];
    LocalRegion[] regions = new LocalRegion[cap];
    int n = 0;
    for (int i = 0; i < t.ids.length; i++) if (t.regions[i] != null && t.ids[i] != r.id()) n += insert(ids, regions, t.regions[i]);
    n += insert(ids, regions, r);
    table = new Table(ids, regions, n);
  }

  public synchronized LocalRegion remove(long id) {
    Table t = table;
    LocalRegion found = null;
    long[] ids = new long[t.ids.length];
    LocalRegion[] regions = new LocalRegion[t.ids.length];
    int n = 0;
    for (int i = 0; i < t.ids.length; i++) {
      if (t.regions[i] == null) continue;
      if (t.ids[i] == id) found = t.regions[i];
      else n += insert(ids, regions, t.regions[i]);
    }
    table = new Table(ids, regions, n);
    return found;
  }

  public int size() {
    return table.count;
  }

  private static int insert(long[] ids, LocalRegion[] regions, LocalRegion r) {
    int mask = ids.length - 1;
    int i = mix(r.id()) & mask;
    while (regions[i] != null) i = (i + 1) & mask;
    ids[i] = r.id();
    regions[i] = r;
    return 1;
  }

  private static int mix(long id) {
    long h = id * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32));
  }
}
