package org.mori4j.transport.rdma;

import static org.mori4j.natives.verbs.VerbsConstants.*;

import java.util.HashMap;
import java.util.Map;
import org.mori4j.transport.LocalRegion;
import org.mori4j.transport.LongTable;
import org.mori4j.transport.rdma.verbs.MemoryRegion;
import org.mori4j.transport.rdma.verbs.PortInfo;
import org.mori4j.transport.rdma.verbs.ProtectionDomain;
import org.mori4j.transport.rdma.verbs.VerbsDevice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One opened RDMA device as the backend uses it: its first active port and the GID it is addressed by, one
 * protection domain, the memory regions of every registered region (with a registration cache: a range
 * registered again, by another registration of the same memory, shares the existing memory region instead of
 * pinning it twice), and its workers. Owns all of these; {@link #close()} frees them after the workers closed.
 */
final class RdmaDevice implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RdmaDevice.class);
  static final int ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

  /** A memory region shared by every registration of one range. */
  private static final class Cached {
    final MemoryRegion mr;
    int users;

    Cached(MemoryRegion mr) {
      this.mr = mr;
    }
  }

  private record Range(long address, long size, boolean gpu, int deviceId) {}

  final int index;
  final VerbsDevice device;
  final PortInfo port;
  final byte[] gid;
  final int gidIndex;
  final ProtectionDomain pd;
  final RdmaWorker[] workers;
  /** Region id to its memory region here (read by workers without locks). */
  private final LongTable<MemoryRegion> byRegion = new LongTable<>();
  private final Map<Range, Cached> cache = new HashMap<>();
  private final Map<Long, Range> rangeOf = new HashMap<>();
  private long cacheHits;

  RdmaDevice(int index, VerbsDevice device, RdmaWorker[] workers) {
    this.index = index;
    this.device = device;
    this.port = firstActivePort(device);
    this.gidIndex = chooseGid(device, port);
    this.gid = device.queryGid(port.port(), gidIndex);
    this.pd = device.allocateProtectionDomain();
    this.workers = workers;
  }

  private static PortInfo firstActivePort(VerbsDevice d) {
    StringBuilder seen = new StringBuilder();
    for (int p = 1; p <= d.portCount(); p++) {
      PortInfo info = d.queryPort(p);
      if (info.active()) return info;
      seen.append(seen.isEmpty() ? "" : ", ").append("port ").append(p).append(" state ").append(info.state());
    }
    throw new IllegalStateException("RDMA device " + d.name() + " has no active port (" + seen + ")");
  }

  /**
   * The GID this device is addressed by: on Ethernet (RoCE) the first IPv4-mapped GID (RoCEv2 over IPv4, what
   * MORI's default selection finds on common NICs), else the first non-zero one; on InfiniBand index 0.
   */
  private static int chooseGid(VerbsDevice d, PortInfo port) {
    if (!port.ethernet()) return 0;
    int firstNonZero = -1;
    for (int i = 0; i < Math.max(1, port.gidTableLength()); i++) {
      byte[] g;
      try {
        g = d.queryGid(port.port(), i);
      } catch (RuntimeException e) {
        break;
      }
      boolean zero = true;
      for (byte b : g) zero &= b == 0;
      if (zero) continue;
      if (firstNonZero < 0) firstNonZero = i;
      if (g[10] == (byte) 0xff && g[11] == (byte) 0xff) return i;
    }
    return Math.max(firstNonZero, 0);
  }

  /** Registers {@code region} here (or shares the memory region of the same range); returns its rkey. Control thread. */
  synchronized int register(LocalRegion region) {
    Range r = new Range(region.address(), region.size(), region.gpu(), region.deviceId());
    Cached c = cache.get(r);
    if (c == null) {
      MemoryRegion mr = region.gpu()
          ? pd.registerGpuMemory(region.address(), region.size(), region.deviceId(), ACCESS)
          : pd.registerMemory(region.segment(), ACCESS);
      c = new Cached(mr);
      cache.put(r, c);
    } else {
      cacheHits++;
    }
    c.users++;
    rangeOf.put(region.id(), r);
    byRegion.put(region.id(), c.mr);
    return c.mr.rkey();
  }

  /**
   * Registers {@code view}, which lies inside the already registered region {@code parentId}, with the parent's
   * memory region (one more user of it, no new registration with the device); the parent's rkey. When the
   * parent is not registered here it is registered as a region of its own.
   */
  synchronized int registerView(LocalRegion view, long parentId) {
    Range r = rangeOf.get(parentId);
    Cached c = r == null ? null : cache.get(r);
    if (c == null) return register(view);
    cacheHits++;
    c.users++;
    rangeOf.put(view.id(), r);
    byRegion.put(view.id(), c.mr);
    return c.mr.rkey();
  }

  /** Drops the registration of region {@code id}; its memory region is closed when no registration uses it. */
  synchronized void deregister(long id) {
    byRegion.remove(id);
    Range r = rangeOf.remove(id);
    if (r == null) return;
    Cached c = cache.get(r);
    if (c != null && --c.users == 0) {
      cache.remove(r);
      c.mr.close();
    }
  }

  /** The memory region of a registered region, or null (any thread, no allocation). */
  MemoryRegion region(long id) {
    return byRegion.get(id);
  }

  synchronized int openMemoryRegions() {
    return cache.size();
  }

  synchronized long cacheHits() {
    return cacheHits;
  }

  RdmaWorker worker(int i) {
    return workers[Math.floorMod(i, workers.length)];
  }

  /** After the workers closed: every memory region, the protection domain, the device. */
  @Override
  public synchronized void close() {
    for (Cached c : cache.values()) closeQuietly(c.mr, "memory region");
    cache.clear();
    rangeOf.clear();
    closeQuietly(pd, "protection domain");
    closeQuietly(device, "device");
  }

  private void closeQuietly(AutoCloseable c, String what) {
    try {
      c.close();
    } catch (Exception e) {
      log.warn("RDMA device {}: closing its {} failed: {}", device.name(), what, e.toString());
    }
  }
}
