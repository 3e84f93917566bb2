package org.mori4j.shmem;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.IpcMapping;

/**
 * The native memory one PE holds for its group, opened together at init and closed together at finalize: its
 * heap on the GPU, its mappings of the peers' heaps (where {@link PeerPaths} finds a direct path), the
 * GPU-initiated endpoints to the peers without one ({@link RemotePeers}) and the buffers registered beside the
 * heap. {@link Shmem} keeps the PE's API and its collective bookkeeping; this class owns the handles, so that a
 * failed init and {@link Shmem#finalizeShmem()} release them in one place and in one order (endpoints before
 * the heap, whose region they name). Opening is collective: every PE learns whether every PE mapped its peers,
 * so that one that failed does not leave the others using a half-built group.
 */
final class GroupMemory implements AutoCloseable {
  private final DeviceBuffer heapMemory;
  private final PeerPaths paths;
  private final List<IpcMapping> heapMappings;
  private final long[] peerHeapBase;
  /** Every PE's init record (host, GPU), for {@link Shmem#sharesGpuWith}. */
  private final PeerInfo[] peers;
  /** The GPU-initiated endpoints to PEs without a direct path; null when every pair of PEs has one. */
  private final RemotePeers remote;
  /** Buffers registered beside the heap (bufferRegister). */
  private final RegisteredBuffers buffers;

  private GroupMemory(DeviceBuffer heapMemory, PeerPaths paths, List<IpcMapping> heapMappings, long[] peerHeapBase, PeerInfo[] peers, RemotePeers remote,
      RegisteredBuffers buffers) {
    this.heapMemory = heapMemory;
    this.paths = paths;
    this.heapMappings = heapMappings;
    this.peerHeapBase = peerHeapBase;
    this.peers = peers;
    this.remote = remote;
    this.buffers = buffers;
  }

  /**
   * Allocates and zeroes this PE's heap on {@code device}, exchanges the init records, maps the peers' heaps,
   * agrees through {@code checkAlike} that every PE did, and opens the endpoints (collective). On failure it
   * closes what it opened and throws; the bootstrap stays the caller's.
   */
  static GroupMemory open(ShmemConfig config, GpuRuntime gpu, int device, Bootstrap bootstrap, Function<CollectiveCall, CollectiveCall[]> checkAlike) {
    int rank = bootstrap.rank(), n = bootstrap.size();
    List<IpcMapping> heapMappings = new ArrayList<>();
    DeviceBuffer memory = null;
    RemotePeers remote = null;
    try {
      memory = gpu.allocDevice(device, config.heapSize());
      gpu.fill(memory.address(), (byte) 0, config.heapSize());
      PeerInfo mine = new PeerInfo(rank, PeerInfo.localHost(), ProcessHandle.current().pid(), gpu.pciBusId(device), device, config.heapSize(),
          memory.address(), gpu.ipcHandle(memory.address()));
      PeerInfo[] peers = PeerInfo.gather(bootstrap, mine);
      PeerPaths paths = new PeerPaths(gpu, device, peers, rank, config.disableP2p());
      long[] bases = new long[n];
      byte[][] handles = new byte[n][];
      for (int p = 0; p < n; p++) {
        bases[p] = peers[p].heapBase();
        handles[p] = peers[p].heapHandle();
      }
      String problem = null;
      long[] mapped = new long[n];
      try {
        mapped = paths.map(bases, new long[n], handles, heapMappings);
      } catch (RuntimeException e) {
        problem = "PE " + rank + " could not map the heaps of its peers: " + e.getMessage();
      }
      // every PE learns whether all mapped: one that failed must not leave the others using a half-built group
      checkAlike.apply(new CollectiveCall("init-mapped", new long[0], 0, problem, new byte[0]));
      paths.log();
      // collective on every PE; null when every pair has a direct path
      remote = RemotePeers.open(bootstrap, config, device, paths, memory.address(), config.heapSize());
      RegisteredBuffers buffers = new RegisteredBuffers(gpu, device, paths, remote, checkAlike);
      return new GroupMemory(memory, paths, heapMappings, mapped, peers, remote, buffers);
    } catch (RuntimeException e) {
      if (remote != null) remote.close();
      for (IpcMapping m : heapMappings) m.close();
      heapMappings.clear();
      if (memory != null) memory.close();
      throw e;
    }
  }

  /** This PE's heap in this process. */
  long heapBase() {
    return heapMemory.address();
  }

  /** Where each PE's heap is mapped in this process, indexed by rank (0: no direct path), for {@link GpuStates}. */
  long[] peerHeapBases() {
    return peerHeapBase;
  }

  /** Where PE {@code pe}'s heap is mapped in this process; 0 without a direct path. */
  long peerHeapBase(int pe) {
    return peerHeapBase[pe];
  }

  /** Whether PE {@code pe}'s heap is on PE {@code me}'s GPU: the same host and PCI location. */
  boolean sharesGpu(int pe, int me) {
    return peers[pe].host().equals(peers[me].host()) && peers[pe].pciBusId().equalsIgnoreCase(peers[me].pciBusId());
  }

  /** Endpoints per peer reached through them; 0 without endpoints. */
  int endpointsPerPeer() {
    return remote == null ? 0 : remote.numQpPerPe();
  }

  /** The endpoints' error completions, one line each; empty without endpoints. */
  List<String> endpointErrors() {
    return remote == null ? List.of() : remote.errors();
  }

  PeerPaths paths() {
    return paths;
  }

  /** The endpoints' tables for {@link GpuStates}; {@link GpuStates.Remote#NONE} without endpoints. */
  GpuStates.Remote endpointTables() {
    return remote == null ? GpuStates.Remote.NONE : remote.tables();
  }

  RegisteredBuffers buffers() {
    return buffers;
  }

  /** Endpoints first (their regions name the heap and the registered buffers), then the mappings, then the heap. */
  @Override
  public void close() {
    if (remote != null) remote.close();
    buffers.closeAll();
    for (IpcMapping m : heapMappings) m.close();
    heapMappings.clear();
    heapMemory.close();
  }
}
