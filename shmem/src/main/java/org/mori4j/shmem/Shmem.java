package org.mori4j.shmem;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.apache.pekko.actor.typed.ActorSystem;
import org.mori4j.natives.gpu.GpuModule;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.natives.gpu.GpuStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One processing element (PE) of MORI shmem: this process's member of a group of PEs, one per GPU, that share
 * a symmetric heap. The host API mirrors MORI's ({@code shmem_get_unique_id}, {@code shmem_init_attr},
 * {@code shmem_mype}, {@code shmem_malloc}, {@code shmem_ptr_p2p}, {@code shmem_barrier_all},
 * {@code shmem_module_init}, {@code shmem_finalize}) as methods of an instance, so that tests may run several
 * PEs in one JVM. Start one with {@link #initWithUniqueId} (rank 0 calls {@link #getUniqueId()} and passes the
 * bytes to the others out of band) or {@link #initFromCluster} (the members of a Pekko Cluster with the
 * {@code shmem} role).
 *
 * <p>At init every PE allocates its heap ({@code MORI_SHMEM_HEAP_SIZE}) on its GPU and maps every other PE's
 * heap that it can reach directly (see {@link PeerPaths}). {@link #malloc} and the other allocation calls are
 * collective: every PE calls them in the same order with the same arguments and gets the same offset into its
 * own heap; a PE that asks for something else makes every PE's call fail with both values named. Kernels reach
 * the heap through the device library ({@link ShmemKernels}) after {@link #moduleInit}.
 *
 * <p>Failures: a PE that dies or disconnects makes every collective call the others are waiting in (or make
 * later) throw a {@link ShmemException} naming it; no call waits longer than {@code mori4j.shmem.timeout}.
 * Threads: collective calls of one PE are serialised; {@link #ptrP2p} and the queries may be called from any
 * thread. {@link #finalizeShmem()} frees the heap and closes every mapping this PE opened.
 */
public final class Shmem implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Shmem.class);

  private final ShmemConfig config;
  private final GpuRuntime gpu;
  private final int device;
  private final Bootstrap bootstrap;
  private final SymmetricHeap heap;
  /** The heap, the peers' mappings, the endpoints and the registered buffers: opened at init, closed at finalize. */
  private final GroupMemory group;
  /** Replaced when the registered-buffer table changes; modules initialised afterwards see the new one. */
  private volatile GpuStates states;
  private long history = 17;
  /** The kernel of {@link #barrierAll(GpuStream)} and the count of stream barriers queued. */
  private final StreamBarrier streamBarrier = new StreamBarrier(this);
  private volatile boolean finalized;

  private Shmem(ShmemConfig config, GpuRuntime gpu, Bootstrap bootstrap) {
    this.config = config;
    this.gpu = gpu;
    this.bootstrap = bootstrap;
    int rank = bootstrap.rank(), n = bootstrap.size();
    if (n > GpuStates.MAX_PES) throw new IllegalArgumentException("nPes " + n + " is above the device library's limit of " + GpuStates.MAX_PES);
    int count = gpu.deviceCount();
    this.device = config.device() >= 0 ? config.device() : rank % count;
    if (device >= count) throw new IllegalArgumentException("PE " + rank + ": device " + device + " does not exist (" + count + " GPUs visible)");
    this.heap = new SymmetricHeap(config.heapSize());
    GroupMemory opened = null;
    try {
      opened = GroupMemory.open(config, gpu, device, bootstrap, this::checkAlike);
      long flags = config.disableP2p() ? GpuStates.FLAG_P2P_DISABLED : 0;
      this.states = new GpuStates(rank, n, (int) flags, config.heapSize(), opened.heapBase(), 0, config.deviceWaitTimeout().toNanos(),
          opened.peerHeapBases(), opened.endpointTables());
      LOG.info("shmem PE {}/{} up on GPU {} ({}), heap {} bytes at 0x{}", rank, n, device, gpu.pciBusId(device), config.heapSize(),
          Long.toHexString(opened.heapBase()));
    } catch (RuntimeException e) {
      if (opened != null) opened.close();
      bootstrap.close();
      throw e;
    }
    this.group = opened;
  }

  // ---------------------------------------------------------------- init

  /** A unique id for a new group, listening on {@code mori4j.shmem.bootstrap-host} (MORI's {@code shmem_get_unique_id}). */
  public static byte[] getUniqueId() {
    return getUniqueId(ShmemConfig.load());
  }

  /**
   * A unique id for a new group: reserves a listening port on {@code config.bootstrapHost()} that rank 0's
   * {@link #initWithUniqueId} takes over when it runs in this process (otherwise rank 0 binds the id's
   * address itself). Returns the id's {@link UniqueId#BYTES} bytes, to be passed to every PE.
   */
  public static byte[] getUniqueId(ShmemConfig config) {
    return BootstrapRendezvous.reserve(config.bootstrapHost()).toBytes();
  }

  /** {@link #initWithUniqueId(int, int, byte[], ShmemConfig)} with the settings of reference.conf and the environment. */
  public static Shmem initWithUniqueId(int rank, int nPes, byte[] uniqueId) {
    return initWithUniqueId(rank, nPes, uniqueId, ShmemConfig.load());
  }

  /**
   * Joins the group of {@code nPes} PEs named by {@code uniqueId} as {@code rank} (MORI's
   * {@code shmem_init_attr(MORI_SHMEM_INIT_WITH_UNIQUEID, ...)}). Collective: returns when every PE has joined
   * and mapped its peers' heaps, or throws after at most {@code config.timeout()}.
   */
  public static Shmem initWithUniqueId(int rank, int nPes, byte[] uniqueId, ShmemConfig config) {
    UniqueId id = UniqueId.fromBytes(uniqueId);
    if (nPes < 1 || nPes > GpuStates.MAX_PES) throw new IllegalArgumentException("nPes " + nPes + " is out of range 1.." + GpuStates.MAX_PES);
    if (rank < 0 || rank >= nPes) throw new IllegalArgumentException("rank " + rank + " is out of range 0.." + (nPes - 1));
    GpuRuntime gpu = GpuRuntimes.select(config.gpuRuntime());
    // rank 0 listens on the reserved socket; any other rank of this process gives it up, so that a rank 0
    // elsewhere can bind the id's address
    Bootstrap b = TcpBootstrap.join(id, rank, nPes, config.timeout(), BootstrapRendezvous.takeReserved(id));
    return new Shmem(config, gpu, b);
  }

  /** {@link #initFromCluster(ActorSystem, int, ShmemConfig)} with the settings of reference.conf and the environment. */
  public static Shmem initFromCluster(ActorSystem<?> system, int nPes) {
    return initFromCluster(system, nPes, ShmemConfig.load());
  }

  /**
   * Joins the group formed by the members of {@code system}'s cluster that have the role
   * {@code config.clusterRole()} (the JVM analogue of MORI's torch process group): waits until {@code nPes}
   * of them are up, ranks them by address (sorted, so every member computes the same ranks) and exchanges
   * through cluster messages. A member that becomes unreachable, leaves or is removed fails the others' calls.
   */
  public static Shmem initFromCluster(ActorSystem<?> system, int nPes, ShmemConfig config) {
    if (nPes < 1 || nPes > GpuStates.MAX_PES) throw new IllegalArgumentException("nPes " + nPes + " is out of range 1.." + GpuStates.MAX_PES);
    GpuRuntime gpu = GpuRuntimes.select(config.gpuRuntime());
    Bootstrap b = ClusterBootstrap.join(system, nPes, config.clusterRole(), config.timeout());
    return new Shmem(config, gpu, b);
  }

  // ---------------------------------------------------------------- queries

  public int myPe() {
    return bootstrap.rank();
  }

  public int nPes() {
    return bootstrap.size();
  }

  /**
   * GPU-initiated endpoints (queue pairs) per peer that this PE reaches through them
   * ({@code mori4j.shmem.num-qp-per-pe}); 1 when it reaches every peer directly (P2P has no queue pairs and
   * ignores qpId), so that code spreading work over {@code qpId % numQpPerPe} works either way.
   */
  public int numQpPerPe() {
    return group.endpointsPerPeer() == 0 ? 1 : group.endpointsPerPeer();
  }

  /** Whether PE {@code pe}'s heap is mapped here (P2P); false means device calls to it go through endpoints. */
  public boolean hasDirectPath(int pe) {
    if (pe < 0 || pe >= nPes()) throw new IllegalArgumentException("hasDirectPath: pe " + pe + " is out of range 0.." + (nPes() - 1));
    return group.peerHeapBase(pe) != 0;
  }

  /** Whether PE {@code pe}'s heap is on this PE's GPU (the same host and PCI location), whatever the path. */
  public boolean sharesGpuWith(int pe) {
    if (pe < 0 || pe >= nPes()) throw new IllegalArgumentException("sharesGpuWith: pe " + pe + " is out of range 0.." + (nPes() - 1));
    return group.sharesGpu(pe, myPe());
  }

  /**
   * Error completions that this PE's GPU-initiated endpoints saw (wrong key, bounds, a lost peer), one line
   * each; empty when there were none or the PE has no endpoints.
   */
  public List<String> endpointErrors() {
    return group.endpointErrors();
  }

  /**
   * Collective host exchange of a few numbers: every PE passes an array of the same length and gets every PE's,
   * indexed by rank (for agreements between PEs that cannot read each other's memory).
   */
  public synchronized long[][] exchangeLongs(long[] mine) {
    checkLive();
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(8 * mine.length);
    for (long v : mine) b.putLong(v);
    CollectiveCall[] all = checkAlike(new CollectiveCall("exchangeLongs", new long[] {mine.length}, history).withExtra(b.array()));
    long[][] out = new long[all.length][mine.length];
    for (int p = 0; p < all.length; p++) {
      java.nio.ByteBuffer r = java.nio.ByteBuffer.wrap(all[p].extra());
      for (int k = 0; k < mine.length; k++) out[p][k] = r.getLong();
    }
    return out;
  }

  /** The GPU ordinal (in this process) of this PE's heap. */
  public int device() {
    return device;
  }

  public GpuRuntime gpu() {
    return gpu;
  }

  public ShmemConfig config() {
    return config;
  }

  /** This PE's heap in this process. */
  public long heapBase() {
    checkLive();
    return group.heapBase();
  }

  public long heapSize() {
    return config.heapSize();
  }

  /** What {@link #moduleInit} writes into a module's {@code globalGpuStates}. */
  public GpuStates gpuStates() {
    return states;
  }

  public boolean isFinalized() {
    return finalized;
  }

  // ---------------------------------------------------------------- symmetric heap

  /** {@code size} bytes of the symmetric heap, 256-byte aligned; collective. Returns this PE's address. */
  public long malloc(long size) {
    return allocate("malloc", size, SymmetricHeap.DEFAULT_ALIGNMENT, 0);
  }

  /** {@code size} bytes aligned to {@code alignment} (a power of two); collective. */
  public long mallocAlign(long alignment, long size) {
    return allocate("mallocAlign", size, alignment, 0);
  }

  /**
   * {@code size} bytes with MORI's allocation {@code flags} (HIP's {@code hipDeviceMallocUncached} and the
   * like); collective, and the flags must match on every PE. The heap is allocated once at init, so the flags
   * do not change how this memory behaves; they are checked and recorded for parity with MORI.
   */
  public long extMallocWithFlags(long size, int flags) {
    return allocate("extMallocWithFlags", size, SymmetricHeap.DEFAULT_ALIGNMENT, flags);
  }

  private synchronized long allocate(String op, long size, long alignment, int flags) {
    checkLive();
    String problem = size <= 0 ? op + ": size " + size + " must be positive"
        : alignment <= 0 || Long.bitCount(alignment) != 1 ? op + ": alignment " + alignment + " is not a power of two"
        : flags < 0 ? op + ": flags " + flags + " must not be negative" : null;
    CollectiveCall mine = new CollectiveCall(op, new long[] {size, alignment, flags}, history);
    checkAlike(problem == null ? mine : mine.withProblem(problem));
    long offset = heap.allocate(size, alignment);
    if (offset < 0) {
      throw new ShmemException(op + "(" + size + " bytes, alignment " + alignment + "): the symmetric heap of " + heap.size() + " bytes has no room (in use "
          + heap.usedBytes() + ", largest free range " + heap.largestFree() + "); raise MORI_SHMEM_HEAP_SIZE");
    }
    history = history * 31 + offset;
    return group.heapBase() + offset;
  }

  /** Gives back what {@link #malloc} returned; collective. {@code 0} is allowed and does nothing (still collective). */
  public synchronized void free(long ptr) {
    checkLive();
    long offset = ptr == 0 ? -1 : ptr - group.heapBase();
    String problem = ptr != 0 && (offset < 0 || heap.allocationAt(offset) == null || heap.allocationAt(offset)[0] != offset)
        ? "free(0x" + Long.toHexString(ptr) + "): not the start of a symmetric allocation of PE " + myPe() : null;
    CollectiveCall mine = new CollectiveCall("free", new long[] {offset}, history);
    checkAlike(problem == null ? mine : mine.withProblem(problem));
    if (offset >= 0) {
      heap.free(offset);
      history = history * 31 - offset;
    }
  }

  /**
   * Makes {@code size} bytes of device memory at {@code ptr} (allocated elsewhere, e.g. by a framework, on this
   * PE's GPU) reachable from the other PEs; collective, with the same size on every PE. Afterwards
   * {@link #ptrP2p} translates addresses inside it, and with GPU-initiated endpoints it is a memory region the
   * device may use as the local side of puts and gets (modules initialised after the call see it). Returns 0
   * (MORI's status code); errors throw.
   */
  public synchronized int bufferRegister(long ptr, long size) {
    checkLive();
    states = group.buffers().register(ptr, size, group.heapBase(), heap.size(), myPe(), nPes(), history, states);
    return 0;
  }

  /** Undoes {@link #bufferRegister} (same pointer and size); collective. Closes the peers' mappings of it here. */
  public synchronized int bufferDeregister(long ptr, long size) {
    checkLive();
    states = group.buffers().deregister(ptr, size, myPe(), history, states);
    return 0;
  }

  /**
   * The address, in this process, of the object at {@code ptr} (in this PE's heap or a registered buffer) on
   * PE {@code destPe}: {@code ptr} itself for this PE, 0 where {@code destPe} has no direct path (another host,
   * {@code MORI_DISABLE_P2P}) or {@code ptr} is not symmetric memory. {@code myPe} must be this PE.
   */
  public long ptrP2p(long ptr, int myPe, int destPe) {
    if (myPe != myPe()) throw new IllegalArgumentException("ptrP2p: myPe " + myPe + " is not this PE (" + myPe() + ")");
    if (destPe < 0 || destPe >= nPes()) throw new IllegalArgumentException("ptrP2p: destPe " + destPe + " is out of range 0.." + (nPes() - 1));
    if (finalized) return 0;
    long offset = ptr - group.heapBase();
    if (offset >= 0 && offset < heap.size()) return group.peerHeapBase(destPe) == 0 ? 0 : group.peerHeapBase(destPe) + offset;
    synchronized (this) {
      return group.buffers().translate(ptr, destPe);
    }
  }

  // ---------------------------------------------------------------- synchronisation

  /** Returns when every PE has called it (host threads only: synchronize your streams first to order GPU work). */
  public synchronized void barrierAll() {
    checkLive();
    checkAlike(new CollectiveCall("barrierAll", new long[0], history));
  }

  /**
   * Queues a barrier on {@code stream} (on this PE's GPU): work queued after it on the stream starts once
   * every PE's stream has reached its barrier, and work before it is visible to the other PEs. The kernel
   * adds to a word in every PE's heap and waits for its own words (device-wait-timeout bounds the wait).
   * Every PE must queue the same number of stream barriers.
   */
  public synchronized void barrierAll(GpuStream stream) {
    checkLive();
    if (stream.device() != device) throw new IllegalArgumentException("barrierAll: the stream is on GPU " + stream.device() + ", this PE on GPU " + device);
    streamBarrier.queue(stream, group);
  }

  /**
   * Compiles and loads the kernel of {@link #barrierAll(GpuStream)} now rather than at the first stream barrier:
   * CUDA may hold a module load until the kernels running on the device end, so PEs sharing a GPU in one
   * process should load it before any of them spins in a barrier.
   */
  synchronized void loadBarrierKernel() {
    checkLive();
    streamBarrier.load();
  }

  /**
   * Copies this PE's state into {@code module}'s {@code globalGpuStates} (MORI's {@code shmem_module_init}),
   * so that the device library's calls in that module know the PE, the group and the heaps. The module must
   * be loaded on this PE's GPU and compiled with this library's {@code mori_shmem.cuh}.
   */
  public void moduleInit(GpuModule module) {
    checkLive();
    if (module.device() != device) throw new IllegalArgumentException("moduleInit: the module is loaded on GPU " + module.device() + ", this PE is on GPU " + device);
    GpuModule.GlobalSymbol g = module.global(GpuStates.SYMBOL);
    if (g.size() != GpuStates.LAYOUT.byteSize())
      throw new ShmemException("moduleInit: the module's " + GpuStates.SYMBOL + " is " + g.size() + " bytes, this library's is " + GpuStates.LAYOUT.byteSize()
          + " (compiled against another mori_shmem.cuh?)");
    byte[] bytes = states.toBytes();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment host = arena.allocate(bytes.length, 8);
      MemorySegment.copy(bytes, 0, host, ValueLayout.JAVA_BYTE, 0, bytes.length);
      gpu.copyHostToDevice(g.address(), host, bytes.length);
    }
  }

  // ---------------------------------------------------------------- end

  /**
   * Leaves the group (MORI's {@code shmem_finalize}): collective while the group is healthy (every PE stops
   * using the others' heaps before any heap goes away), then frees the heap, closes every mapping of the
   * peers' memory and the bootstrap. After a PE was lost it only frees this PE's resources. Idempotent.
   */
  public synchronized void finalizeShmem() {
    if (finalized) return;
    try {
      if (bootstrap.failure() == null) bootstrap.allGather(new CollectiveCall("finalize", new long[0], history).toBytes(), true);
    } catch (ShmemException e) {
      LOG.warn("shmem PE {}: finalize without the others: {}", myPe(), e.getMessage());
    } finally {
      finalized = true;
      streamBarrier.close();
      group.close();
      bootstrap.close();
    }
  }

  @Override
  public void close() {
    finalizeShmem();
  }

  /** Exchanges {@code mine} and fails alike on every PE unless every PE made the same call with no problem. */
  private CollectiveCall[] checkAlike(CollectiveCall mine) {
    byte[][] raw = bootstrap.allGather(mine.toBytes(), false);
    CollectiveCall[] all = new CollectiveCall[raw.length];
    for (int p = 0; p < raw.length; p++) all[p] = CollectiveCall.fromBytes(raw[p], p);
    CollectiveCall.requireAlike(mine, all, myPe());
    return all;
  }

  private void checkLive() {
    if (finalized) throw new IllegalStateException("shmem PE " + myPe() + " is finalized");
  }
}
