package org.mori4j.transport;

/**
 * Registered regions by id, readable without locks or boxing from I/O threads (a {@link LongTable} keyed by
 * the region's id).
 */
public final class RegionTable extends LongTable<LocalRegion> {
  public void put(LocalRegion r) {
    put(r.id(), r);
  }
}
