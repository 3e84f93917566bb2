package org.mori4j.shmem;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.mori4j.io.BackendType;
import org.mori4j.io.EngineDesc;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.RdmaBackendConfig;
import org.mori4j.io.TcpBackendConfig;
import org.mori4j.io.gpuinit.GpuQueueLayout;
import org.mori4j.io.gpuinit.RdmaDeviceContext;
import org.mori4j.io.gpuinit.RdmaEndpoint;
import org.mori4j.io.gpuinit.RdmaEndpointConfig;
import org.mori4j.io.gpuinit.RdmaMemoryRegion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How one PE reaches the PEs it has no direct path to (another host, {@code MORI_DISABLE_P2P}): through
 * GPU-initiated endpoints ({@code org.mori4j.io.gpuinit}) whose work requests a host proxy executes with this
 * PE's own {@link IoEngine} (TCP on the bootstrap host, plus RDMA when {@code MORI_RDMA_DEVICES} names devices
 * and a provider opens). Built at init by {@link #open}, a collective step of every PE (PEs that need no
 * endpoint still take part, so the exchanges stay in step): every pair of PEs where either side lacks a direct
 * path gets {@code numQpPerPe} connected endpoints each way. The heap is one memory region (all access rights);
 * {@link Shmem#bufferRegister} adds regions for the device's lkey table.
 *
 * <p>It owns an ActorSystem (remoting on the bootstrap host, {@code mori4j.gpu.runtime} set to the PE's GPU
 * runtime, so the proxy and the engine use the PE's GPU), the engine, the context, the regions and the
 * endpoints; {@link #close} releases them in reverse order. Everything the proxy moves is emulation of a NIC ("host proxy" in logs).
 */
final class RemotePeers implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RemotePeers.class);

  private final int rank;
  private final int numQp;
  private final ActorSystem<Void> system;
  private final IoEngine engine;
  private final RdmaDeviceContext context;
  private final RdmaMemoryRegion heapRegion;
  private final RdmaEndpoint[][] endpoints;
  private final GpuStates.Remote tables;
  private final Map<Long, RdmaMemoryRegion> buffers = new HashMap<>();
  private boolean closed;

  private RemotePeers(int rank, int numQp, ActorSystem<Void> system, IoEngine engine, RdmaDeviceContext context, RdmaMemoryRegion heapRegion, RdmaEndpoint[][] endpoints,
                      GpuStates.Remote tables) {
    this.rank = rank;
    this.numQp = numQp;
    this.system = system;
    this.engine = engine;
    this.context = context;
    this.heapRegion = heapRegion;
    this.endpoints = endpoints;
    this.tables = tables;
  }

  /** Which peers this PE has no direct path to, as a bit mask (nPes is at most 64). */
  static long noPathMask(PeerPaths paths, int nPes) {
    long mask = 0;
    for (int p = 0; p < nPes; p++) if (paths.kind(p) == PeerPaths.Kind.NONE) mask |= 1L << p;
    return mask;
  }

  /**
   * Collective. Returns null on every PE when every pair of PEs has a direct path (nothing is opened), else the
   * endpoints of this PE (possibly none of its own, when only other pairs lack a path).
   */
  static RemotePeers open(Bootstrap bootstrap, ShmemConfig config, int device, PeerPaths paths, long heapBase, long heapSize) {
    int rank = bootstrap.rank(), n = bootstrap.size();
    byte[][] masks = bootstrap.allGather(longBytes(noPathMask(paths, n)), false);
    boolean[] pair = new boolean[n];
    boolean any = false;
    for (int p = 0; p < n; p++) {
      long theirs = bytesLong(masks[p]);
      if (theirs != 0) any = true;
      if (p != rank) pair[p] = (bytesLong(masks[rank]) & (1L << p)) != 0 || (theirs & (1L << rank)) != 0;
    }
    if (!any) return null;
    int numQp = config.numQpPerPe();
    boolean mine = false;
    for (boolean b : pair) mine |= b;

    ActorSystem<Void> system = null;
    IoEngine engine = null;
    RdmaDeviceContext context = null;
    RdmaMemoryRegion heapRegion = null;
    RdmaEndpoint[][] eps = new RdmaEndpoint[n][];
    String problem = null;
    byte[] record = new byte[0];
    try {
      if (mine) {
        system = startSystem(config);
        engine = IoEngine.create(system, "mori4j-shmem-" + UUID.randomUUID() + "-pe" + rank, new IoEngineConfig(config.bootstrapHost(), 0));
        engine.createBackend(BackendType.TCP, TcpBackendConfig.defaults());
        if (!config.rdmaDevices().isBlank()) {
          try {
            engine.createBackend(BackendType.RDMA, RdmaBackendConfig.defaults());
          } catch (RuntimeException e) {
            LOG.info("shmem PE {}: no RDMA backend for the host proxy ({}); TCP moves the bytes", rank, e.getMessage());
          }
        }
        context = RdmaDeviceContext.open(engine);
        heapRegion = context.registerMemoryRegion(heapBase, heapSize, device, MemoryLocationType.GPU, GpuQueueLayout.ACCESS_ALL);
        for (int p = 0; p < n; p++) {
          if (!pair[p]) continue;
          eps[p] = new RdmaEndpoint[numQp];
          for (int q = 0; q < numQp; q++) eps[p][q] = context.createEndpoint(RdmaEndpointConfig.gpu(device));
        }
        record = RemotePeerRecord.of(engine.engineDesc(), heapRegion, eps).toBytes();
      }
    } catch (RuntimeException e) {
      problem = "PE " + rank + " could not open its GPU-initiated endpoints: " + e;
    }
    byte[][] all = bootstrap.allGather(RemotePeerRecord.withProblem(problem, record), false);
    String failure = null;
    RemotePeerRecord[] records = new RemotePeerRecord[n];
    for (int p = 0; p < n && failure == null; p++) {
      try {
        records[p] = RemotePeerRecord.fromBytes(all[p], n);
        if (records[p].problem() != null) failure = records[p].problem();
      } catch (RuntimeException e) {
        failure = "PE " + p + " sent an unreadable endpoint record: " + e.getMessage();
      }
    }
    try {
      if (failure == null && mine) {
        for (int p = 0; p < n; p++) {
          if (!pair[p]) continue;
          engine.registerRemoteEngine(records[p].engine());
          for (int q = 0; q < numQp; q++) context.connectEndpoint(eps[p][q], records[p].handles()[rank][q]);
        }
      }
    } catch (RuntimeException e) {
      failure = "PE " + rank + " could not connect its endpoints: " + e;
    }
    // nobody posts before every PE has connected its side
    byte[][] connected = bootstrap.allGather(RemotePeerRecord.withProblem(failure, new byte[0]), false);
    for (int p = 0; p < n && failure == null; p++) {
      String theirs = RemotePeerRecord.problemOf(connected[p]);
      if (theirs != null) failure = theirs;
    }
    if (failure == null && mine) {
      try {
        for (int p = 0; p < n; p++) if (pair[p]) warmUpAtomic(eps[p][0], records[p].heap(), config.timeout().toNanos());
      } catch (RuntimeException e) {
        failure = "PE " + rank + ": the first atomic through its endpoints failed: " + e.getMessage();
      }
    }
    // and no kernel starts before every PE's target side has its atomic kernel loaded
    byte[][] warm = bootstrap.allGather(RemotePeerRecord.withProblem(failure, new byte[0]), false);
    for (int p = 0; p < n && failure == null; p++) {
      String theirs = RemotePeerRecord.problemOf(warm[p]);
      if (theirs != null) failure = theirs;
    }
    if (failure != null) {
      closeAll(eps, context, heapRegion, engine, system);
      throw new ShmemException(failure);
    }
    long[] remoteBase = new long[n], epAddresses = new long[n * numQp];
    int[] rkeys = new int[n];
    for (int p = 0; p < n; p++) {
      if (records[p].heap() != null) {
        remoteBase[p] = records[p].heap().address();
        rkeys[p] = records[p].heap().rkey();
      }
      if (eps[p] != null) for (int q = 0; q < numQp; q++) epAddresses[p * numQp + q] = eps[p][q].address();
    }
    GpuStates.Remote tables = new GpuStates.Remote(mine ? numQp : 0, heapRegion == null ? 0 : heapRegion.lkey(), remoteBase, rkeys, epAddresses,
        List.of());
    RemotePeers r = new RemotePeers(rank, numQp, system, engine, context, heapRegion, eps, tables);
    if (mine) {
      StringBuilder who = new StringBuilder();
      for (int p = 0; p < n; p++) if (pair[p]) who.append(who.isEmpty() ? "" : ", ").append(p);
      LOG.info("shmem PE {}: PEs [{}] through {} GPU-initiated endpoint(s) each (host proxy: emulation of a NIC, engine {})", rank, who, numQp,
          engine.key());
    }
    return r;
  }

  /** Offset in the heap's internal area of the word the init's warm-up atomic adds 0 to (unused otherwise). */
  static final long WARM_UP_WORD = 2048;

  /**
   * One FETCH_ADD of 0 on the peer's warm-up word, posted from the host by the queue layout (no kernel runs yet)
   * and waited for. The proxy runs GPU-memory atomics at the target with a kernel that its context loads on
   * first use, and CUDA may hold a module load until the kernels running on the device end: a first atomic
   * issued while the target's kernels spin (a barrier) would never complete. Doing it here loads it in time.
   */
  private static void warmUpAtomic(RdmaEndpoint ep, RdmaMemoryRegion peerHeap, long timeoutNanos) {
    java.lang.foreign.MemorySegment c = java.lang.foreign.MemorySegment.ofAddress(ep.address()).reinterpret(GpuQueueLayout.CTRL_BYTES);
    java.lang.invoke.VarHandle word = java.lang.foreign.ValueLayout.JAVA_LONG.varHandle();
    long idx = (long) word.getVolatile(c, (long) GpuQueueLayout.CTRL_SQ_POST_IDX);
    word.setVolatile(c, (long) GpuQueueLayout.CTRL_SQ_POST_IDX, idx + 1);
    int depth = c.get(java.lang.foreign.ValueLayout.JAVA_INT, GpuQueueLayout.CTRL_SQ_DEPTH);
    long cell = c.get(java.lang.foreign.ValueLayout.JAVA_LONG, GpuQueueLayout.CTRL_ATOMIC_RESULTS) + 8L * (idx & (depth - 1));
    java.lang.foreign.MemorySegment w = java.lang.foreign.MemorySegment.ofAddress(c.get(java.lang.foreign.ValueLayout.JAVA_LONG, GpuQueueLayout.CTRL_SQ_RING)
        + (long) GpuQueueLayout.WQE_BYTES * (idx & (depth - 1))).reinterpret(GpuQueueLayout.WQE_BYTES);
    w.fill((byte) 0);
    w.set(java.lang.foreign.ValueLayout.JAVA_BYTE, GpuQueueLayout.WQE_OPCODE, (byte) GpuQueueLayout.OP_ATOMIC_FETCH_AND_ADD);
    w.set(java.lang.foreign.ValueLayout.JAVA_LONG, GpuQueueLayout.WQE_WR_ID, idx);
    w.set(java.lang.foreign.ValueLayout.JAVA_LONG, GpuQueueLayout.WQE_LOCAL_ADDR, cell);
    w.set(java.lang.foreign.ValueLayout.JAVA_INT, GpuQueueLayout.WQE_LKEY, c.get(java.lang.foreign.ValueLayout.JAVA_INT, GpuQueueLayout.CTRL_INTERNAL_LKEY));
    w.set(java.lang.foreign.ValueLayout.JAVA_INT, GpuQueueLayout.WQE_LENGTH, 8);
    w.set(java.lang.foreign.ValueLayout.JAVA_LONG, GpuQueueLayout.WQE_REMOTE_ADDR, peerHeap.address() + WARM_UP_WORD);
    w.set(java.lang.foreign.ValueLayout.JAVA_INT, GpuQueueLayout.WQE_RKEY, peerHeap.rkey());
    java.lang.invoke.VarHandle.fullFence();
    word.setVolatile(c, (long) GpuQueueLayout.CTRL_SQ_DBR_RECORD, idx + 1);
    word.setVolatile(c, (long) GpuQueueLayout.CTRL_SQ_DOORBELL, idx + 1);
    long deadline = System.nanoTime() + timeoutNanos;
    while ((long) word.getVolatile(c, (long) GpuQueueLayout.CTRL_SQ_RETIRED) <= idx) {
      if (System.nanoTime() > deadline) throw new ShmemException("endpoint qpn " + ep.qpn() + ": the warm-up atomic did not complete in " + timeoutNanos / 1_000_000 + " ms");
      java.util.concurrent.locks.LockSupport.parkNanos(50_000);
    }
    if (!ep.errors().isEmpty()) throw new ShmemException("endpoint qpn " + ep.qpn() + ": " + ep.errors());
  }

  /** The device's tables (without registered buffers: {@link Shmem} adds those). */
  GpuStates.Remote tables() {
    return tables;
  }

  int numQpPerPe() {
    return tables.numQpPerPe();
  }

  /** Registers a {@code bufferRegister} buffer for the device's lkey table; null when this PE has no endpoints. */
  GpuStates.RegisteredBuffer register(long address, long size, int device) {
    if (context == null) return null;
    RdmaMemoryRegion mr = context.registerMemoryRegion(address, size, device, MemoryLocationType.GPU,
        GpuQueueLayout.ACCESS_LOCAL_WRITE | GpuQueueLayout.ACCESS_REMOTE_READ | GpuQueueLayout.ACCESS_REMOTE_WRITE);
    buffers.put(address, mr);
    return new GpuStates.RegisteredBuffer(address, size, mr.lkey());
  }

  void deregister(long address) {
    RdmaMemoryRegion mr = buffers.remove(address);
    if (mr != null) context.deregisterMemoryRegion(mr);
  }

  /** Error completions seen by this PE's endpoints, one line each (empty when none). */
  List<String> errors() {
    List<String> out = new ArrayList<>();
    for (int p = 0; p < endpoints.length; p++) {
      if (endpoints[p] == null) continue;
      for (RdmaEndpoint ep : endpoints[p]) for (Object e : ep.errors()) out.add("PE " + rank + " -> PE " + p + " qpn " + ep.qpn() + ": " + e);
    }
    return out;
  }

  /** Closes the endpoints, the regions, the context and the engine. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) return;
    closed = true;
    for (RdmaMemoryRegion mr : buffers.values()) {
      try {
        context.deregisterMemoryRegion(mr);
      } catch (RuntimeException e) {
        LOG.warn("shmem PE {}: deregistering a buffer's region failed: {}", rank, e.getMessage());
      }
    }
    buffers.clear();
    closeAll(endpoints, context, heapRegion, engine, system);
  }

  /** Remoting on the bootstrap host (any port), and the PE's GPU runtime for the engine and the proxy. */
  private static ActorSystem<Void> startSystem(ShmemConfig config) {
    Config base = ConfigFactory.load();
    Config cfg = ConfigFactory.empty()
        .withValue("pekko.actor.provider", ConfigValueFactory.fromAnyRef("remote"))
        .withValue("pekko.remote.artery.canonical.hostname", ConfigValueFactory.fromAnyRef(config.bootstrapHost()))
        .withValue("pekko.remote.artery.canonical.port", ConfigValueFactory.fromAnyRef(0))
        .withValue("mori4j.gpu.runtime", ConfigValueFactory.fromAnyRef(config.gpuRuntime()))
        .withFallback(base);
    return ActorSystem.create(Behaviors.empty(), "mori4j-shmem", cfg);
  }

  private static void closeAll(RdmaEndpoint[][] eps, RdmaDeviceContext context, RdmaMemoryRegion heap, IoEngine engine, ActorSystem<Void> system) {
    for (RdmaEndpoint[] row : eps) {
      if (row == null) continue;
      for (RdmaEndpoint ep : row) {
        if (ep == null) continue;
        try {
          ep.close();
        } catch (RuntimeException e) {
          LOG.warn("shmem: closing endpoint qpn {} failed: {}", ep.qpn(), e.getMessage());
        }
      }
    }
    try {
      if (context != null && heap != null) context.deregisterMemoryRegion(heap);
    } catch (RuntimeException e) {
      LOG.warn("shmem: deregistering the heap's region failed: {}", e.getMessage());
    }
    try {
      if (context != null) context.close();
    } finally {
      try {
        if (engine != null) engine.close();
      } finally {
        if (system != null) {
          system.terminate();
          try {
            system.getWhenTerminated().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
          } catch (Exception e) {
            LOG.warn("shmem: the host proxy's actor system did not stop within 30 s: {}", e.toString());
          }
        }
      }
    }
  }

  private static byte[] longBytes(long v) {
    return java.nio.ByteBuffer.allocate(8).putLong(v).array();
  }

  private static long bytesLong(byte[] b) {
    if (b.length != 8) throw new ShmemException("a PE sent a path mask of " + b.length + " bytes");
    return java.nio.ByteBuffer.wrap(b).getLong();
  }
}
