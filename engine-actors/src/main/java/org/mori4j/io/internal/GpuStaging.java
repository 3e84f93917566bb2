package org.mori4j.io.internal;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.mori4j.natives.gpu.GpuEvent;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;
import org.mori4j.transport.DeviceStaging;
import org.mori4j.transport.StagingTuning;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One engine's GPU runtime and the staging buffers its backends move GPU memory through. The runtime is
 * selected once, on first need ({@code mori4j.gpu.runtime}: auto, cuda or hip), because opening it loads the
 * driver and initialises it (hundreds of milliseconds), which only engines that register GPU memory should
 * pay. A staging slot is a page-locked host buffer ({@link StagingMemory}: the runtime's {@code allocPinned}, or ordinary
 * memory registered with {@code registerHost}, per {@code mori4j.tcp.gpu-staging-memory}; portable to every device) with, per
 * device, its own non-blocking stream and a timing-free event: copies go on that stream, {@link Slot#mark()}
 * records the event, and {@link Slot#done()} asks the event, which never blocks. The runtime makes each
 * device's context current on the calling thread itself, so the I/O threads may call it.
 *
 * <p>Slots come from a pool that {@link #prewarm(int)} fills when GPU memory is registered
 * ({@code mori4j.tcp.gpu-staging-prewarm} idle slots of {@code gpu-staging-chunk} bytes, each with the
 * device's stream and event already created), and a closed slot goes back to it. The reason is GPU-initiated
 * work: page-locked allocation, and on some drivers stream and event creation, wait for work already running
 * on the device, so a kernel that spins until the host proxy completes its transfer would deadlock against a
 * staging buffer opened on the data path. A slot still opened on the data path (pool empty) is allocated, so
 * nothing breaks, with one WARN per engine. {@link #close()} frees the pool (the engine's close).
 */
public final class GpuStaging implements DeviceStaging {
  private static final Logger LOG = LoggerFactory.getLogger(GpuStaging.class);
  private static final AtomicInteger OPEN_SLOTS = new AtomicInteger();

  private final String mode;
  private final int slotBytes;
  private final int prewarmSlots;
  private final StagingTuning tuning;
  private volatile GpuRuntime runtime;
  /** Idle slots, returned or prewarmed; guarded by itself, as is {@link #closed}. */
  private final ArrayList<PinnedSlot> idle = new ArrayList<>();
  /** Every slot not freed yet, idle or in use: a device prewarmed later gets its stream in each. */
  private final Set<PinnedSlot> live = ConcurrentHashMap.newKeySet();
  /** Devices prewarmed so far (registered GPU memory). */
  private final Set<Integer> devices = ConcurrentHashMap.newKeySet();
  private boolean closed;
  /** Set when the engine gets a backend that stages (TCP): only then does prewarming pin memory. */
  private volatile boolean enabled;
  private final AtomicLong dataPathAllocations = new AtomicLong();
  private final AtomicLong dataPathStreams = new AtomicLong();
  private final AtomicBoolean warnedAlloc = new AtomicBoolean();
  private final AtomicBoolean warnedStream = new AtomicBoolean();

  /** Staging without a pool (every slot allocated when opened): for engines that never stage over TCP. */
  public GpuStaging(String mode) {
    this(mode, 0, 0);
  }

  /**
   * @param slotBytes size of the slots {@link #prewarm(int)} prepares (the TCP backend's staging chunk)
   * @param prewarmSlots idle slots {@link #prewarm(int)} keeps ready; 0 turns the pool off
   */
  public GpuStaging(String mode, int slotBytes, int prewarmSlots) {
    this(mode, slotBytes, prewarmSlots, StagingTuning.DEFAULT);
  }

  /** @param tuning how the TCP backend cuts staged transfers and waits for their copies ({@link #tuning()}) */
  public GpuStaging(String mode, int slotBytes, int prewarmSlots, StagingTuning tuning) {
    if (tuning == null) throw new IllegalArgumentException("tuning must not be null");
    this.tuning = tuning;
    if (prewarmSlots < 0) throw new IllegalArgumentException("prewarmSlots must not be negative: " + prewarmSlots);
    if (prewarmSlots > 0 && slotBytes <= 0) throw new IllegalArgumentException("slotBytes must be positive with a pool: " + slotBytes);
    this.mode = mode;
    this.slotBytes = slotBytes;
    this.prewarmSlots = prewarmSlots;
  }

  /** The runtime for this engine's mode; the stand-in that fails every call when none could be opened. */
  public GpuRuntime runtime() {
    GpuRuntime r = runtime;
    if (r == null) {
      synchronized (this) {
        r = runtime;
        if (r == null) runtime = r = GpuRuntimes.select(mode);
      }
    }
    return r;
  }

  @Override
  public boolean available() {
    return runtime().available();
  }

  @Override
  public String unavailableReason() {
    GpuRuntime r = runtime();
    return r.available() ? "" : r.version();
  }

  /** Staging buffers open now in this process, over every engine, pooled ones included (tests check that closing frees them all). */
  public static int openSlotsInProcess() {
    return OPEN_SLOTS.get();
  }

  /** Slots of this engine allocated on the data path because the pool was empty (0 when prewarming sufficed). */
  public long dataPathAllocations() {
    return dataPathAllocations.get();
  }

  /** Streams and events of this engine created on the data path because their device was not prewarmed. */
  public long dataPathStreams() {
    return dataPathStreams.get();
  }

  /** Idle slots in the pool now. */
  public int idleSlots() {
    synchronized (idle) {
      return idle.size();
    }
  }

  /** Devices whose GPU memory was registered ({@link #prewarm(int)} called). */
  public Set<Integer> prewarmedDevices() {
    return Set.copyOf(devices);
  }

  /**
   * Blocking (pinned allocation, stream creation): call it off the engine actor, when GPU memory of
   * {@code device} is registered, never on the data path. Tops the pool up to the configured idle slots and
   * gives every live slot, idle or in use, a stream and an event on {@code device}. No-op without a pool.
   */
  public void prewarm(int device) {
    if (prewarmSlots == 0) return;
    devices.add(device);
    if (!enabled) return;
    GpuRuntime r = runtime();
    while (true) {
      synchronized (idle) {
        if (closed || idle.size() >= prewarmSlots) break;
      }
      PinnedSlot s = allocate(r, slotBytes);
      synchronized (idle) {
        if (closed) {
          s.free();
          return;
        }
        idle.add(s);
      }
    }
    for (PinnedSlot s : live) s.prepare(device);
  }

  /**
   * The engine now has a backend that stages GPU memory: from here on {@link #prewarm(int)} fills the pool.
   * Cheap; the caller then runs {@link #prewarmRegistered()} off the engine actor for memory registered before.
   */
  public void enable() {
    enabled = true;
  }

  /** {@link #prewarm(int)} for every device whose memory was registered so far. Blocking, like it. */
  public void prewarmRegistered() {
    for (int d : prewarmedDevices()) prewarm(d);
  }

  /** {@code mori4j.tcp.gpu-staging-pieces} and {@code gpu-copy-spin}, for the TCP backend's stagers. */
  @Override
  public StagingTuning tuning() {
    return tuning;
  }

  /** With a pool, a closed slot goes back to it: stagers borrow their extra buffers per transfer (GpuStager). */
  @Override
  public boolean pooled() {
    return prewarmSlots > 0;
  }

  @Override
  public Slot tryOpenSlot(long bytes) {
    if (prewarmSlots == 0) return openSlot(bytes);
    return takeIdle(bytes);
  }

  /** An idle slot of {@code bytes} bytes whose last copies finished, taken out of the pool; null if there is none. */
  private PinnedSlot takeIdle(long bytes) {
    synchronized (idle) {
      for (int i = idle.size() - 1; i >= 0; i--) {
        PinnedSlot s = idle.get(i);
        if (s.size != bytes) continue;
        boolean ready;
        try {
          ready = s.done();
        } catch (RuntimeException e) {
          // its last copy failed after it came back: not reusable
          idle.remove(i);
          s.free();
          continue;
        }
        if (!ready) continue; // a copy of its previous user still runs: the next one
        idle.remove(i);
        s.inUse = true;
        return s;
      }
    }
    return null;
  }

  @Override
  public Slot openSlot(long bytes) {
    PinnedSlot taken = takeIdle(bytes);
    if (taken != null) return taken;
    GpuRuntime r = runtime();
    PinnedSlot s = allocate(r, bytes);
    s.inUse = true;
    if (prewarmSlots > 0) {
      dataPathAllocations.incrementAndGet();
      if (warnedAlloc.compareAndSet(false, true)) {
        LOG.warn("GPU staging: a {}-byte pinned host buffer was allocated on the data path (the pool of {} prewarmed slots had none of "
            + "that size free). Page-locked allocation waits for work running on the GPU, so a kernel that spins until this "
            + "transfer completes (GPU-initiated endpoints, shmem over the proxy) can stall; raise mori4j.tcp.gpu-staging-prewarm "
            + "(MORI_IO_TCP_GPU_STAGING_PREWARM). Logged once per engine.", bytes, prewarmSlots);
      }
    }
    for (int d : devices) s.prepare(d);
    return s;
  }

  private PinnedSlot allocate(GpuRuntime r, long bytes) {
    StagingMemory memory = StagingMemory.allocate(r, bytes, tuning.registeredMemory());
    OPEN_SLOTS.incrementAndGet();
    PinnedSlot s = new PinnedSlot(r, memory, bytes);
    live.add(s);
    return s;
  }

  /** Frees the idle slots (after their copies) and makes slots still in use free themselves when closed. Idempotent. */
  public void close() {
    ArrayList<PinnedSlot> free;
    synchronized (idle) {
      closed = true;
      free = new ArrayList<>(idle);
      idle.clear();
    }
    for (PinnedSlot s : free) s.free();
  }

  /** A slot's stream was needed for a device no prewarm prepared; counted and warned about once. */
  private void streamOnDataPath(int device) {
    if (prewarmSlots == 0) return;
    dataPathStreams.incrementAndGet();
    if (warnedStream.compareAndSet(false, true)) {
      LOG.warn("GPU staging: a copy stream and event for device {} were created on the data path (no GPU memory of that device "
          + "was registered before). Stream creation can wait for work running on the GPU, so a kernel that spins until this "
          + "transfer completes can stall. Logged once per engine.", device);
    }
  }

  private final class PinnedSlot implements Slot {
    private final GpuRuntime runtime;
    private final StagingMemory memory;
    private final MemorySegment buffer;
    final long size;
    /** Per device; replaced whole (never written in place) so the loop thread reads them without a lock. */
    private volatile GpuStream[] streams = new GpuStream[0];
    private volatile GpuEvent[] events = new GpuEvent[0];
    private int lastDevice = -1;
    private volatile GpuEvent marked;
    /** Handed out by openSlot and not closed yet; guarded by the pool's lock once returned. */
    boolean inUse;
    private boolean freed;

    PinnedSlot(GpuRuntime runtime, StagingMemory memory, long size) {
      this.runtime = runtime;
      this.memory = memory;
      this.buffer = memory.segment();
      this.size = size;
    }

    @Override
    public MemorySegment buffer() {
      return buffer;
    }

    /** Creates this slot's stream and event on {@code device} unless it has them. */
    synchronized void prepare(int device) {
      if (freed) return;
      GpuStream[] st = streams;
      if (device < st.length && st[device] != null) return;
      GpuStream[] ns = Arrays.copyOf(st, Math.max(st.length, device + 1));
      GpuEvent[] ne = Arrays.copyOf(events, ns.length);
      ns[device] = runtime.createStream(device);
      try {
        ne[device] = runtime.createEvent(device, false);
      } catch (RuntimeException e) {
        ns[device].close();
        throw e;
      }
      events = ne;
      streams = ns;
    }

    private GpuStream stream(int device) {
      GpuStream[] st = streams;
      if (device >= st.length || st[device] == null) {
        streamOnDataPath(device);
        prepare(device);
        st = streams;
      }
      lastDevice = device;
      return st[device];
    }

    @Override
    public void toDevice(int device, long dst, long bufferOffset, long size) {
      runtime.copyHostToDeviceAsync(dst, buffer.asSlice(bufferOffset, size), size, stream(device));
    }

    @Override
    public void fromDevice(int device, long src, long bufferOffset, long size) {
      runtime.copyDeviceToHostAsync(buffer.asSlice(bufferOffset, size), src, size, stream(device));
    }

    @Override
    public void mark() {
      if (lastDevice < 0) return;
      GpuEvent e = events[lastDevice];
      e.record(streams[lastDevice]);
      marked = e;
    }

    @Override
    public boolean done() {
      GpuEvent m = marked;
      return m == null || m.isComplete();
    }

    /** Back to the pool (freed without one): its copies may still run (the next user's openSlot waits for them by event, never blocking). */
    @Override
    public void close() {
      synchronized (idle) {
        if (!inUse) return;
        inUse = false;
        if (!closed && prewarmSlots > 0) {
          idle.add(this);
          return;
        }
      }
      free();
    }

    /** Waits for copies still running, then frees the streams, events and buffer. Idempotent. */
    synchronized void free() {
      if (freed) return;
      freed = true;
      live.remove(this);
      try {
        // the copy engines may still be reading or writing the buffer: free it only after them
        for (GpuStream s : streams) {
          if (s != null) {
            try {
              s.synchronize();
            } catch (RuntimeException e) {
              LOG.warn("GPU staging stream failed while closing: {}", e.getMessage());
            }
          }
        }
        for (GpuEvent e : events) if (e != null) e.close();
        for (GpuStream s : streams) if (s != null) s.close();
      } finally {
        memory.close();
        OPEN_SLOTS.decrementAndGet();
      }
    }
  }
}
