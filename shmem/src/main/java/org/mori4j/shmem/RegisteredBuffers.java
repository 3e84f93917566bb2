package org.mori4j.shmem;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.IpcMapping;
import org.mori4j.natives.gpu.PointerInfo;

/**
 * The device buffers a PE registered with {@link Shmem#bufferRegister} beside its symmetric heap: for each,
 * where every PE's copy is mapped in this process (for {@link Shmem#ptrP2p}), the mappings it owns, and, when
 * the PE has GPU-initiated endpoints, its entry in the device's table of registered buffers. Not thread-safe:
 * {@link Shmem} calls it under its own lock.
 */
final class RegisteredBuffers {
  private final GpuRuntime gpu;
  private final int device;
  private final PeerPaths paths;
  /** The GPU-initiated endpoints to PEs without a direct path; null when every pair of PEs has one. */
  private final RemotePeers remote;
  /** Exchanges a collective call and fails alike on every PE unless all made the same one with no problem. */
  private final Function<CollectiveCall, CollectiveCall[]> checkAlike;
  /** Registered buffers by local address. */
  private final TreeMap<Long, Registration> registrations = new TreeMap<>();

  RegisteredBuffers(GpuRuntime gpu, int device, PeerPaths paths, RemotePeers remote, Function<CollectiveCall, CollectiveCall[]> checkAlike) {
    this.gpu = gpu;
    this.device = device;
    this.paths = paths;
    this.remote = remote;
    this.checkAlike = checkAlike;
  }

  /**
   * {@link Shmem#bufferRegister}'s work: checks the buffer, agrees with every PE, maps the peers' copies and
   * returns {@code states} with the buffer in its registered table (unchanged without endpoints).
   */
  GpuStates register(long ptr, long size, long heapBase, long heapSize, int myPe, int nPes, long history, GpuStates states) {
    String problem = null;
    byte[] handle = new byte[0];
    long base = 0;
    GpuStates.RegisteredBuffer proxyBuffer = null;
    try {
      PointerInfo info = gpu.requireDeviceMemory(ptr, size, device);
      if (ptr < heapBase + heapSize && ptr + size > heapBase) problem = "it overlaps the symmetric heap, which is symmetric already";
      Map.Entry<Long, Registration> before = registrations.floorEntry(ptr + size - 1);
      if (before != null && before.getKey() + before.getValue().size > ptr) problem = "it overlaps the registered buffer at 0x" + Long.toHexString(before.getKey());
      base = info.rangeStart();
      if (problem == null) handle = gpu.ipcHandle(base);
      if (problem == null && remote != null && states.remote().registered().size() >= GpuStates.MAX_REGISTERED)
        problem = "the device's table of registered buffers is full (" + GpuStates.MAX_REGISTERED + ")";
      if (problem == null && remote != null) proxyBuffer = remote.register(ptr, size, device);
    } catch (RuntimeException e) {
      problem = e.getMessage();
    }
    CollectiveCall mine = new CollectiveCall("bufferRegister", new long[] {size}, history, problem == null ? null
        : "bufferRegister(0x" + Long.toHexString(ptr) + ", " + size + ") on PE " + myPe + ": " + problem, handle);
    ByteBuffer extra = ByteBuffer.allocate(16 + handle.length).putLong(ptr).putLong(ptr - base).put(handle);
    CollectiveCall[] all;
    try {
      all = checkAlike.apply(mine.withExtra(extra.array()));
    } catch (RuntimeException e) {
      if (proxyBuffer != null) remote.deregister(ptr);
      throw e;
    }
    long[] addresses = new long[nPes], offsets = new long[nPes];
    byte[][] handles = new byte[nPes][];
    for (int p = 0; p < nPes; p++) {
      ByteBuffer b = ByteBuffer.wrap(all[p].extra());
      addresses[p] = b.getLong();
      offsets[p] = b.getLong();
      handles[p] = new byte[b.remaining()];
      b.get(handles[p]);
    }
    List<IpcMapping> owned = new ArrayList<>();
    long[] mapped = paths.map(addresses, offsets, handles, owned);
    registrations.put(ptr, new Registration(ptr, size, mapped, owned));
    if (proxyBuffer == null) return states;
    List<GpuStates.RegisteredBuffer> table = new ArrayList<>(states.remote().registered());
    table.add(proxyBuffer);
    return states.withRemote(states.remote().withRegistered(table));
  }

  /** {@link Shmem#bufferDeregister}'s work: agrees with every PE, closes the mappings, returns the new {@code states}. */
  GpuStates deregister(long ptr, long size, int myPe, long history, GpuStates states) {
    Registration r = registrations.get(ptr);
    String problem = r == null ? "bufferDeregister(0x" + Long.toHexString(ptr) + "): not a registered buffer of PE " + myPe
        : r.size != size ? "bufferDeregister(0x" + Long.toHexString(ptr) + ", " + size + "): it was registered with " + r.size + " bytes" : null;
    CollectiveCall mine = new CollectiveCall("bufferDeregister", new long[] {size}, history);
    checkAlike.apply(problem == null ? mine : mine.withProblem(problem));
    registrations.remove(ptr).close();
    if (remote == null) return states;
    remote.deregister(ptr);
    List<GpuStates.RegisteredBuffer> table = new ArrayList<>(states.remote().registered());
    table.removeIf(b -> b.base() == ptr);
    return states.withRemote(states.remote().withRegistered(table));
  }

  /** The address of {@code ptr} (inside a registered buffer) on PE {@code destPe} in this process; 0 if it has none. */
  long translate(long ptr, int destPe) {
    Map.Entry<Long, Registration> e = registrations.floorEntry(ptr);
    if (e == null || ptr >= e.getKey() + e.getValue().size) return 0;
    long base = e.getValue().peers[destPe];
    return base == 0 ? 0 : base + (ptr - e.getKey());
  }

  /** Closes every registered buffer's mappings of the peers' copies. */
  void closeAll() {
    for (Registration r : registrations.values()) r.close();
    registrations.clear();
  }

  /** A registered buffer: where each PE's copy is mapped here, and the mappings it owns. */
  private record Registration(long address, long size, long[] peers, List<IpcMapping> mappings) {
    void close() {
      for (IpcMapping m : mappings) m.close();
    }
  }
}
