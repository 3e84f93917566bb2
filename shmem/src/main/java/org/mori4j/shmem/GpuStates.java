package org.mori4j.shmem;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;

/**
 * One PE's state as kernels see it: the bytes that {@link Shmem#moduleInit} copies into a module's
 * {@code globalGpuStates} ({@code MoriShmemGpuStates} in {@code mori_shmem.cuh}; the two layouts change
 * together, and {@code GpuStatesTest} checks the header's offsets against {@link #LAYOUT}).
 *
 * @param rank this PE
 * @param nPes PEs in the group
 * @param flags {@link #FLAG_P2P_DISABLED}
 * @param heapSize bytes of every PE's heap
 * @param heapBase this PE's heap in this process
 * @param internalOffset where the library's own words start in the heap
 * @param waitTimeoutNs device waits trap after this long; 0 waits for ever
 * @param peerHeapBase PE i's heap as mapped in this process, 0 where there is no direct path
 * @param remote how the device reaches the PEs without a direct path (GPU-initiated endpoints through the
 *     host proxy); {@link Remote#NONE} when every peer has a direct path
 */
public record GpuStates(int rank, int nPes, int flags, long heapSize, long heapBase, long internalOffset, long waitTimeoutNs, long[] peerHeapBase,
                        Remote remote) {
  /** {@code MORI_SHMEM_MAX_PES}: the most PEs a group may have. */
  public static final int MAX_PES = 64;
  /** {@code MORI_SHMEM_MAX_QP_PER_PE}: the most endpoints per peer that the table has room for. */
  public static final int MAX_QP_PER_PE = 4;
  /** {@code MORI_SHMEM_MAX_REGISTERED}: the most {@code bufferRegister} buffers the device table holds. */
  public static final int MAX_REGISTERED = 64;
  /** {@code MORI_SHMEM_FLAG_P2P_DISABLED}. */
  public static final int FLAG_P2P_DISABLED = 1;
  /** {@code MORI_SHMEM_STATES_VERSION}: device calls trap when the module's copy says otherwise (never initialised). */
  public static final int VERSION = 2;
  /** The name of the module global that {@link Shmem#moduleInit} fills. */
  public static final String SYMBOL = "globalGpuStates";

  /** {@code MoriShmemRegisteredBuffer}: one registered buffer as the device looks up its lkey. */
  public static final StructLayout REGISTERED_LAYOUT = MemoryLayout.structLayout(
      ValueLayout.JAVA_LONG.withName("base"),
      ValueLayout.JAVA_LONG.withName("size"),
      ValueLayout.JAVA_INT.withName("lkey"),
      ValueLayout.JAVA_INT.withName("reserved")).withName("MoriShmemRegisteredBuffer");

  /** {@code MoriShmemGpuStates}, little-endian as on every GPU. */
  public static final StructLayout LAYOUT = MemoryLayout.structLayout(
      ValueLayout.JAVA_INT.withName("rank"),
      ValueLayout.JAVA_INT.withName("nPes"),
      ValueLayout.JAVA_INT.withName("flags"),
      ValueLayout.JAVA_INT.withName("version"),
      ValueLayout.JAVA_LONG.withName("heapSize"),
      ValueLayout.JAVA_LONG.withName("heapBase"),
      ValueLayout.JAVA_LONG.withName("internalOffset"),
      ValueLayout.JAVA_LONG.withName("waitTimeoutNs"),
      MemoryLayout.sequenceLayout(MAX_PES, ValueLayout.JAVA_LONG).withName("peerHeapBase"),
      ValueLayout.JAVA_INT.withName("numQpPerPe"),
      ValueLayout.JAVA_INT.withName("heapLkey"),
      ValueLayout.JAVA_INT.withName("numRegistered"),
      ValueLayout.JAVA_INT.withName("reserved"),
      MemoryLayout.sequenceLayout(MAX_PES, ValueLayout.JAVA_LONG).withName("peerHeapRemoteBase"),
      MemoryLayout.sequenceLayout(MAX_PES, ValueLayout.JAVA_INT).withName("peerHeapRkey"),
      MemoryLayout.sequenceLayout((long) MAX_PES * MAX_QP_PER_PE, ValueLayout.JAVA_LONG).withName("endpoints"),
      MemoryLayout.sequenceLayout(MAX_REGISTERED, REGISTERED_LAYOUT).withName("registered")).withName("MoriShmemGpuStates");

  /**
   * One buffer registered with {@link Shmem#bufferRegister}: the device finds the lkey of a put's source or a
   * get's destination outside the heap here.
   */
  public record RegisteredBuffer(long base, long size, int lkey) {}

  /**
   * The device's view of the PEs without a direct path: their heaps as RDMA targets and the endpoints that
   * reach them. Arrays are indexed by PE; {@code endpoints[pe * numQpPerPe + q]} is the address of endpoint
   * {@code q}'s control block ({@code MoriRdmaEndpoint*}), 0 for a PE reached directly (or this PE).
   *
   * @param numQpPerPe endpoints per peer without a direct path (0: none, nothing goes through the proxy)
   * @param heapLkey the lkey of this PE's heap
   * @param peerHeapRemoteBase PE i's heap in PE i's own process: the remote address of RDMA work requests
   * @param peerHeapRkey the rkey of PE i's heap
   * @param endpoints control-block addresses, {@code nPes * numQpPerPe} of them
   * @param registered buffers registered with {@code bufferRegister}, at most {@link #MAX_REGISTERED}
   */
  public record Remote(int numQpPerPe, int heapLkey, long[] peerHeapRemoteBase, int[] peerHeapRkey, long[] endpoints, List<RegisteredBuffer> registered) {
    /** Every peer reached directly: no endpoints. */
    public static final Remote NONE = new Remote(0, 0, new long[0], new int[0], new long[0], List.of());

    public Remote {
      if (numQpPerPe < 0 || numQpPerPe > MAX_QP_PER_PE) throw new IllegalArgumentException("numQpPerPe " + numQpPerPe + " is out of range 0.." + MAX_QP_PER_PE);
      peerHeapRemoteBase = peerHeapRemoteBase.clone();
      peerHeapRkey = peerHeapRkey.clone();
      endpoints = endpoints.clone();
      registered = List.copyOf(registered);
      if (registered.size() > MAX_REGISTERED)
        throw new IllegalArgumentException(registered.size() + " registered buffers; the device table holds " + MAX_REGISTERED);
      if (peerHeapRemoteBase.length != peerHeapRkey.length || endpoints.length != peerHeapRkey.length * numQpPerPe)
        throw new IllegalArgumentException("remote tables disagree: " + peerHeapRemoteBase.length + " heap bases, " + peerHeapRkey.length + " rkeys, "
            + endpoints.length + " endpoints for " + numQpPerPe + " per PE");
    }

    @Override
    public long[] peerHeapRemoteBase() {
      return peerHeapRemoteBase.clone();
    }

    @Override
    public int[] peerHeapRkey() {
      return peerHeapRkey.clone();
    }

    @Override
    public long[] endpoints() {
      return endpoints.clone();
    }

    /** The same tables with {@code buffers} as the registered-buffer table. */
    public Remote withRegistered(List<RegisteredBuffer> buffers) {
      return new Remote(numQpPerPe, heapLkey, peerHeapRemoteBase, peerHeapRkey, endpoints, buffers);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Remote r && numQpPerPe == r.numQpPerPe && heapLkey == r.heapLkey && Arrays.equals(peerHeapRemoteBase, r.peerHeapRemoteBase)
          && Arrays.equals(peerHeapRkey, r.peerHeapRkey) && Arrays.equals(endpoints, r.endpoints) && registered.equals(r.registered);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(endpoints) * 31 + registered.hashCode();
    }

    @Override
    public String toString() {
      return "Remote[numQpPerPe=" + numQpPerPe + ", heapLkey=" + heapLkey + ", peerHeapRemoteBase=" + Arrays.toString(peerHeapRemoteBase) + ", peerHeapRkey="
          + Arrays.toString(peerHeapRkey) + ", endpoints=" + Arrays.toString(endpoints) + ", registered=" + registered + "]";
    }
  }

  /** A PE whose peers are all reached directly. */
  public GpuStates(int rank, int nPes, int flags, long heapSize, long heapBase, long internalOffset, long waitTimeoutNs, long[] peerHeapBase) {
    this(rank, nPes, flags, heapSize, heapBase, internalOffset, waitTimeoutNs, peerHeapBase, Remote.NONE);
  }

  public GpuStates {
    if (nPes < 1 || nPes > MAX_PES) throw new IllegalArgumentException("nPes " + nPes + " is out of range 1.." + MAX_PES);
    if (rank < 0 || rank >= nPes) throw new IllegalArgumentException("rank " + rank + " is out of range 0.." + (nPes - 1));
    if (peerHeapBase == null || peerHeapBase.length != nPes)
      throw new IllegalArgumentException("peerHeapBase has " + (peerHeapBase == null ? 0 : peerHeapBase.length) + " entries for " + nPes + " PEs");
    peerHeapBase = peerHeapBase.clone();
    if (remote == null) remote = Remote.NONE;
    if (remote.numQpPerPe() > 0 && remote.peerHeapRkey.length != nPes)
      throw new IllegalArgumentException("the remote tables have " + remote.peerHeapRkey.length + " PEs, the group " + nPes);
  }

  @Override
  public long[] peerHeapBase() {
    return peerHeapBase.clone();
  }

  /** The same state with {@code r} as its remote tables. */
  public GpuStates withRemote(Remote r) {
    return new GpuStates(rank, nPes, flags, heapSize, heapBase, internalOffset, waitTimeoutNs, peerHeapBase, r);
  }

  /** Offset of a field of {@link #LAYOUT} (for tests and the device-side checks). */
  public static long offsetOf(String field) {
    return LAYOUT.byteOffset(groupElement(field));
  }

  /** The struct's bytes, ready to copy into {@code globalGpuStates}; entries past {@code nPes} are 0. */
  public byte[] toBytes() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(LAYOUT);
      putInt(s, "rank", rank);
      putInt(s, "nPes", nPes);
      putInt(s, "flags", flags);
      putInt(s, "version", VERSION);
      putLong(s, "heapSize", heapSize);
      putLong(s, "heapBase", heapBase);
      putLong(s, "internalOffset", internalOffset);
      putLong(s, "waitTimeoutNs", waitTimeoutNs);
      for (int i = 0; i < nPes; i++) s.set(ValueLayout.JAVA_LONG, offsetOf("peerHeapBase") + 8L * i, peerHeapBase[i]);
      int q = remote.numQpPerPe();
      putInt(s, "numQpPerPe", q);
      putInt(s, "heapLkey", remote.heapLkey());
      putInt(s, "numRegistered", remote.registered().size());
      if (q > 0) {
        for (int i = 0; i < nPes; i++) {
          s.set(ValueLayout.JAVA_LONG, offsetOf("peerHeapRemoteBase") + 8L * i, remote.peerHeapRemoteBase[i]);
          s.set(ValueLayout.JAVA_INT, offsetOf("peerHeapRkey") + 4L * i, remote.peerHeapRkey[i]);
          // the device indexes endpoints[pe * MAX_QP_PER_PE + qp]: the table keeps its stride whatever numQpPerPe is
          for (int k = 0; k < q; k++) s.set(ValueLayout.JAVA_LONG, offsetOf("endpoints") + 8L * ((long) i * MAX_QP_PER_PE + k), remote.endpoints[i * q + k]);
        }
      }
      long reg = offsetOf("registered");
      for (RegisteredBuffer b : remote.registered()) {
        s.set(ValueLayout.JAVA_LONG, reg, b.base());
        s.set(ValueLayout.JAVA_LONG, reg + 8, b.size());
        s.set(ValueLayout.JAVA_INT, reg + 16, b.lkey());
        reg += REGISTERED_LAYOUT.byteSize();
      }
      return s.toArray(ValueLayout.JAVA_BYTE);
    }
  }

  /** Reads the struct back from {@code bytes} (what a module's global holds). */
  public static GpuStates fromBytes(byte[] bytes) {
    if (bytes.length != LAYOUT.byteSize()) throw new IllegalArgumentException("globalGpuStates is " + LAYOUT.byteSize() + " bytes, got " + bytes.length);
    MemorySegment s = MemorySegment.ofArray(bytes.clone());
    // a heap segment of bytes has alignment 1: read unaligned copies of the fields
    int n = getInt(s, "nPes");
    int np = Math.max(0, Math.min(n, MAX_PES));
    long[] peers = new long[np];
    for (int i = 0; i < np; i++) peers[i] = s.get(ValueLayout.JAVA_LONG_UNALIGNED, offsetOf("peerHeapBase") + 8L * i);
    int q = getInt(s, "numQpPerPe");
    Remote remote = Remote.NONE;
    int regs = Math.max(0, Math.min(getInt(s, "numRegistered"), MAX_REGISTERED));
    List<RegisteredBuffer> buffers = new java.util.ArrayList<>();
    for (int k = 0; k < regs; k++) {
      long at = offsetOf("registered") + k * REGISTERED_LAYOUT.byteSize();
      buffers.add(new RegisteredBuffer(s.get(ValueLayout.JAVA_LONG_UNALIGNED, at), s.get(ValueLayout.JAVA_LONG_UNALIGNED, at + 8),
          s.get(ValueLayout.JAVA_INT_UNALIGNED, at + 16)));
    }
    if (q > 0 && q <= MAX_QP_PER_PE) {
      long[] bases = new long[np], eps = new long[np * q];
      int[] rkeys = new int[np];
      for (int i = 0; i < np; i++) {
        bases[i] = s.get(ValueLayout.JAVA_LONG_UNALIGNED, offsetOf("peerHeapRemoteBase") + 8L * i);
        rkeys[i] = s.get(ValueLayout.JAVA_INT_UNALIGNED, offsetOf("peerHeapRkey") + 4L * i);
        for (int k = 0; k < q; k++) eps[i * q + k] = s.get(ValueLayout.JAVA_LONG_UNALIGNED, offsetOf("endpoints") + 8L * ((long) i * MAX_QP_PER_PE + k));
      }
      remote = new Remote(q, getInt(s, "heapLkey"), bases, rkeys, eps, buffers);
    } else if (!buffers.isEmpty()) {
      remote = Remote.NONE.withRegistered(buffers);
    }
    return new GpuStates(getInt(s, "rank"), n, getInt(s, "flags"), getLong(s, "heapSize"), getLong(s, "heapBase"), getLong(s, "internalOffset"),
        getLong(s, "waitTimeoutNs"), peers, remote);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof GpuStates g && Arrays.equals(toBytes(), g.toBytes());
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(toBytes());
  }

  private static void putInt(MemorySegment s, String field, int v) {
    s.set(ValueLayout.JAVA_INT, offsetOf(field), v);
  }

  private static void putLong(MemorySegment s, String field, long v) {
    s.set(ValueLayout.JAVA_LONG, offsetOf(field), v);
  }

  private static int getInt(MemorySegment s, String field) {
    return s.get(ValueLayout.JAVA_INT_UNALIGNED, offsetOf(field));
  }

  private static long getLong(MemorySegment s, String field) {
    return s.get(ValueLayout.JAVA_LONG_UNALIGNED, offsetOf(field));
  }
}
