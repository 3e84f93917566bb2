package org.mori4j.transport.xgmi;

import java.lang.foreign.MemorySegment;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.natives.gpu.PinnedBuffer;
import org.mori4j.transport.TransferOp;

/**
 * One device's streams and events, owned by the backend's worker thread. Each transfer on the GPU holds one
 * event slot from issue to completion, so {@code numEvents} bounds the transfers in flight per device; work is
 * spread round-robin over {@code numStreams} non-blocking streams. Streams and events are created on first use
 * (a backend that only ever copies small blocks on one device creates few). A slot that carries a batch also
 * owns that batch's block table: a pinned host buffer the issuing thread fills, which the kernel reads in place
 * where the runtime maps it into the device's address space ({@link XgmiSettings#mappedTable}: no upload call in
 * front of the launch), or else a device buffer it is copied into on the kernel's stream first. Both stay with the
 * slot (grown when a bigger batch comes) and are rewritten only after the slot's event has completed, so neither
 * the copy engine nor the kernel ever sees a table being rewritten.
 */
final class DevicePool implements AutoCloseable {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(DevicePool.class);
  private static final long MIN_TABLE_BYTES = 64 << 10;
  /** Streams, events and table buffers of every pool of the process (tests check it returns to 0). */
  static final java.util.concurrent.atomic.AtomicInteger LIVE = new java.util.concurrent.atomic.AtomicInteger();

  final int device;
  private final GpuRuntime gpu;
  private final GpuStream[] streams;
  private final GpuEvent[] events;
  /** The op each busy slot carries, and the remote region it touches. */
  final TransferOp[] ops;
  final RemoteRegion[] regions;
  /**
   * Where a slot carries one launch for several ops ({@link DeviceTransfers#issueFused}): all of them and their regions
   * ({@link #ops} then holds the first); null for a slot of one op.
   */
  final TransferOp[][] groupOps;
  final RemoteRegion[][] groupRegions;
  private final PinnedBuffer[] hostTables;
  /** Where the kernel reads each slot's host table in place; 0 where it is copied into {@link #deviceTables} instead. */
  private final long[] mappedTables;
  private final DeviceBuffer[] deviceTables;
  private final boolean mapTables;
  private final int[] free;
  private int freeCount;
  /** Busy slots, in no particular order (swap-removed). */
  final int[] busy;
  int busyCount;
  private int nextStream;
  /** {@link XgmiTrace} only (null when it is off): a timing event recorded in front of each slot's launch, and the window it was in. */
  private final GpuEvent[] startEvents;
  private final long[] startWindow;
  /** {@link XgmiTrace} only: recorded in front of a window's first launch on this device; GPU times are read against it. */
  private GpuEvent anchor;
  private long anchorWindow;

  DevicePool(GpuRuntime gpu, int device, int numStreams, int numEvents, boolean mapTables) {
    this.gpu = gpu;
    this.device = device;
    this.mapTables = mapTables;
    this.mappedTables = new long[numEvents];
    this.streams = new GpuStream[numStreams];
    this.events = new GpuEvent[numEvents];
    this.ops = new TransferOp[numEvents];
    this.regions = new RemoteRegion[numEvents];
    this.groupOps = new TransferOp[numEvents][];
    this.groupRegions = new RemoteRegion[numEvents][];
    this.hostTables = new PinnedBuffer[numEvents];
    this.deviceTables = new DeviceBuffer[numEvents];
    this.free = new int[numEvents];
    this.busy = new int[numEvents];
    for (int i = 0; i < numEvents; i++) free[i] = numEvents - 1 - i;
    this.freeCount = numEvents;
    this.startEvents = XgmiTrace.ON ? new GpuEvent[numEvents] : null;
    this.startWindow = XgmiTrace.ON ? new long[numEvents] : null;
  }

  /** A free slot, or -1 when every event is in use. */
  int acquire() {
    if (freeCount == 0) return -1;
    int slot = free[freeCount - 1];
    if (events[slot] == null) {
      // timing only for the trace: an event without it is cheaper to record
      events[slot] = gpu.createEvent(device, XgmiTrace.ON); // may throw: the slot stays free
      LIVE.incrementAndGet();
    }
    if (startEvents != null && startEvents[slot] == null) {
      if (anchor == null) {
        anchor = gpu.createEvent(device, true);
        LIVE.incrementAndGet();
      }
      startEvents[slot] = gpu.createEvent(device, true);
      LIVE.incrementAndGet();
    }
    freeCount--;
    busy[busyCount++] = slot;
    return slot;
  }

  /**
   * For an issue from a submitting thread, which creates no native resource: the free slot {@link #acquire} would
   * give when its event exists and its block table holds {@code tableBytes} (0: no table), else -1 and nothing taken.
   */
  int acquireReady(long tableBytes) {
    if (freeCount == 0) return -1;
    int slot = free[freeCount - 1];
    PinnedBuffer h = hostTables[slot];
    if (events[slot] == null || startEvents != null && startEvents[slot] == null || tableBytes > 0 && (h == null || h.size() < tableBytes)) return -1;
    freeCount--;
    busy[busyCount++] = slot;
    return slot;
  }

  /** Whether {@link #readyStream} would give a stream (the next one exists). */
  boolean hasReadyStream() {
    return streams[nextStream] != null;
  }

  /** The next stream, round-robin, when it exists; null (and the turn not taken) when the worker has yet to create it. */
  GpuStream readyStream() {
    GpuStream s = streams[nextStream];
    if (s != null) nextStream = nextStream + 1 == streams.length ? 0 : nextStream + 1;
    return s;
  }

  /** Returns the slot at {@code busyIndex} of {@link #busy}; the caller has cleared its op. */
  void releaseAt(int busyIndex) {
    int slot = busy[busyIndex];
    busy[busyIndex] = busy[--busyCount];
    ops[slot] = null;
    regions[slot] = null;
    groupOps[slot] = null;
    groupRegions[slot] = null;
    free[freeCount++] = slot;
  }

  /** Releases a slot that was acquired but whose op was never issued. */
  /** The event slot {@code op} holds alone (not as part of a fused group), or -1; among the busy slots only. */
  int slotOf(TransferOp op) {
    for (int i = 0; i < busyCount; i++) {
      int slot = busy[i];
      if (ops[slot] == op && groupOps[slot] == null) return slot;
    }
    return -1;
  }

  void releaseSlot(int slot) {
    for (int i = 0; i < busyCount; i++) {
      if (busy[i] == slot) {
        releaseAt(i);
        return;
      }
    }
  }

  GpuEvent event(int slot) {
    return events[slot];
  }

  /** The next stream, round-robin. */
  GpuStream stream() {
    int i = nextStream;
    nextStream = i + 1 == streams.length ? 0 : i + 1;
    GpuStream s = streams[i];
    if (s == null) {
      streams[i] = s = gpu.createStream(device);
      LIVE.incrementAndGet();
    }
    return s;
  }

  /** The pinned host side of slot {@code slot}'s block table, at least {@code bytes} long. */
  MemorySegment hostTable(int slot, long bytes) {
    PinnedBuffer h = hostTables[slot];
    if (h == null || h.size() < bytes) {
      long size = Math.max(MIN_TABLE_BYTES, Long.highestOneBit(Math.max(1, bytes - 1)) << 1);
      closeTables(slot);
      hostTables[slot] = h = gpu.allocPinned(size);
      LIVE.incrementAndGet();
      long mapped = mapTables ? mapped(h) : 0;
      if (mapped == 0) {
        deviceTables[slot] = gpu.allocDevice(device, size);
        LIVE.incrementAndGet();
      }
      mappedTables[slot] = mapped;
    }
    return h.segment();
  }

  /** Where the device's kernels read {@code h} in place, or 0 when the runtime cannot say (the table is copied then). */
  private long mapped(PinnedBuffer h) {
    try {
      return gpu.mappedPointer(h, device);
    } catch (RuntimeException e) {
      // a driver that refuses is not an error of the transfer: the table takes the copy, as before there was a choice
      log.debug("device {}: pinned block table not mapped, copying it instead: {}", device, e.getMessage());
      return 0;
    }
  }

  /** Whether slot {@code slot}'s table is read in place by the kernel (no upload). */
  boolean tableMapped(int slot) {
    return mappedTables[slot] != 0;
  }

  /**
   * The device address the kernel reads slot {@code slot}'s table at: the mapped host table itself, or its device copy,
   * which this call then enqueues on {@code stream} (the first {@code bytes}) before the launch that follows.
   */
  long kernelTable(int slot, long bytes, GpuStream stream) {
    long mapped = mappedTables[slot];
    if (mapped != 0) return mapped;
    gpu.copyHostToDeviceAsync(deviceTables[slot].address(), hostTables[slot].segment(), bytes, stream);
    return deviceTables[slot].address();
  }

  private void closeTables(int slot) {
    mappedTables[slot] = 0;
    RuntimeException failed = quietly(hostTables[slot], null);
    hostTables[slot] = null;
    failed = quietly(deviceTables[slot], failed);
    deviceTables[slot] = null;
    if (failed != null) throw failed;
  }

  /**
   * {@link XgmiTrace}: called right before slot {@code slot}'s launch (or copy) goes on {@code stream}; records the
   * window's anchor first when no device has yet, then the slot's start event.
   */
  void traceStart(int slot, GpuStream stream) {
    long w = XgmiTrace.window();
    if (w == 0) return;
    if (anchorWindow != w && XgmiTrace.claimAnchor()) {
      anchor.record(stream);
      anchorWindow = w;
      XgmiTrace.anchored(System.nanoTime());
    }
    startEvents[slot].record(stream);
    startWindow[slot] = w;
  }

  /** {@link XgmiTrace}: slot {@code slot}'s op left the GPU ({@code error} null: it succeeded); its GPU times when known. */
  void traceDone(int slot, String error) {
    long w = XgmiTrace.window();
    if (w == 0) return;
    double start = Double.NaN, end = Double.NaN;
    long r0 = System.nanoTime(); // the reads' own time is credited back to the "seen" stamps (XgmiTrace.done)
    if (error == null && anchorWindow == w && startWindow[slot] == w) {
      try {
        start = startEvents[slot].elapsedMillisSince(anchor);
        end = events[slot].elapsedMillisSince(anchor);
      } catch (RuntimeException e) {
        // a runtime without timing, or the anchor's stream behind: the host stamps still count
        start = end = Double.NaN;
      }
    }
    XgmiTrace.done(start, end, System.nanoTime() - r0);
  }

  /** Native objects this pool holds now (streams, events, table buffers), for leak checks. */
  int openResources() {
    int n = 0;
    for (Object o : streams) if (o != null) n++;
    for (Object o : events) if (o != null) n++;
    if (startEvents != null) for (Object o : startEvents) if (o != null) n++;
    if (anchor != null) n++;
    for (Object o : hostTables) if (o != null) n++;
    for (Object o : deviceTables) if (o != null) n++;
    return n;
  }

  /**
   * Waits for every stream, then destroys events, streams and tables; each one is given back even when another
   * fails (a stream with a failed copy refuses to synchronize), and the first failure is thrown at the end.
   */
  @Override
  public void close() {
    RuntimeException first = null;
    for (GpuStream s : streams) {
      if (s == null) continue;
      try {
        s.synchronize();
      } catch (RuntimeException e) {
        if (first == null) first = e;
      }
    }
    for (int i = 0; i < events.length; i++) {
      first = quietly(events[i], first);
      events[i] = null;
      if (startEvents != null) {
        first = quietly(startEvents[i], first);
        startEvents[i] = null;
      }
      mappedTables[i] = 0;
      first = quietly(hostTables[i], first);
      hostTables[i] = null;
      first = quietly(deviceTables[i], first);
      deviceTables[i] = null;
    }
    first = quietly(anchor, first);
    anchor = null;
    for (int i = 0; i < streams.length; i++) {
      first = quietly(streams[i], first);
      streams[i] = null;
    }
    if (first != null) throw first;
  }

  private static RuntimeException quietly(AutoCloseable c, RuntimeException first) {
    if (c == null) return first;
    LIVE.decrementAndGet();
    try {
      c.close();
    } catch (Exception e) {
      if (first == null) first = e instanceof RuntimeException r ? r : new IllegalStateException(e);
    }
    return first;
  }
}
