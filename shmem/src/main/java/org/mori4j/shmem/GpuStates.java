package org.mori4j.shmem;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.MemoryLayout.PathElement.sequenceElement;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

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
 */
public record GpuStates(int rank, int nPes, int flags, long heapSize, long heapBase, long internalOffset, long waitTimeoutNs, long[] peerHeapBase) {
  /** {@code MORI_SHMEM_MAX_PES}: the most PEs a group may have. */
  public static final int MAX_PES = 64;
  /** {@code MORI_SHMEM_FLAG_P2P_DISABLED}. */
  public static final int FLAG_P2P_DISABLED = 1;
  /** {@code MORI_SHMEM_STATES_VERSION}: device calls trap when the module's copy says otherwise (never initialised). */
  public static final int VERSION = 1;
  /** The name of the module global that {@link Shmem#moduleInit} fills. */
  public static final String SYMBOL = "globalGpuStates";

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
      MemoryLayout.sequenceLayout(MAX_PES, ValueLayout.JAVA_LONG).withName("peerHeapBase")).withName("MoriShmemGpuStates");

  private static final VarHandle RANK = field("rank");
  private static final VarHandle N_PES = field("nPes");
  private static final VarHandle FLAGS = field("flags");
  private static final VarHandle VERSION_FIELD = field("version");
  private static final VarHandle HEAP_SIZE = field("heapSize");
  private static final VarHandle HEAP_BASE = field("heapBase");
  private static final VarHandle INTERNAL_OFFSET = field("internalOffset");
  private static final VarHandle WAIT_TIMEOUT = field("waitTimeoutNs");
  private static final VarHandle PEER_HEAP_BASE = LAYOUT.varHandle(groupElement("peerHeapBase"), sequenceElement());

  public GpuStates {
    if (nPes < 1 || nPes > MAX_PES) throw new IllegalArgumentException("nPes " + nPes + " is out of range 1.." + MAX_PES);
    if (rank < 0 || rank >= nPes) throw new IllegalArgumentException("rank " + rank + " is out of range 0.." + (nPes - 1));
    if (peerHeapBase == null || peerHeapBase.length != nPes)
      throw new IllegalArgumentException("peerHeapBase has " + (peerHeapBase == null ? 0 : peerHeapBase.length) + " entries for " + nPes + " PEs");
    peerHeapBase = peerHeapBase.clone();
  }

  @Override
  public long[] peerHeapBase() {
    return peerHeapBase.clone();
  }

  /** Offset of a field of {@link #LAYOUT} (for tests and the device-side checks). */
  public static long offsetOf(String field) {
    return LAYOUT.byteOffset(groupElement(field));
  }

  /** The struct's bytes, ready to copy into {@code globalGpuStates}; entries past {@code nPes} are 0. */
  public byte[] toBytes() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment s = arena.allocate(LAYOUT);
      RANK.set(s, 0L, rank);
      N_PES.set(s, 0L, nPes);
      FLAGS.set(s, 0L, flags);
      VERSION_FIELD.set(s, 0L, VERSION);
      HEAP_SIZE.set(s, 0L, heapSize);
      HEAP_BASE.set(s, 0L, heapBase);
      INTERNAL_OFFSET.set(s, 0L, internalOffset);
      WAIT_TIMEOUT.set(s, 0L, waitTimeoutNs);
      for (int i = 0; i < nPes; i++) PEER_HEAP_BASE.set(s, 0L, (long) i, peerHeapBase[i]);
      return s.toArray(ValueLayout.JAVA_BYTE);
    }
  }

  /** Reads the struct back from {@code bytes} (what a module's global holds). */
  public static GpuStates fromBytes(byte[] bytes) {
    if (bytes.length != LAYOUT.byteSize()) throw new IllegalArgumentException("globalGpuStates is " + LAYOUT.byteSize() + " bytes, got " + bytes.length);
    MemorySegment s = MemorySegment.ofArray(bytes.clone());
    // a heap segment of bytes has alignment 1: read unaligned copies of the fields
    int n = s.get(ValueLayout.JAVA_INT_UNALIGNED, offsetOf("nPes"));
    long[] peers = new long[Math.max(0, Math.min(n, MAX_PES))];
    long base = offsetOf("peerHeapBase");
    for (int i = 0; i < peers.length; i++) peers[i] = s.get(ValueLayout.JAVA_LONG_UNALIGNED, base + 8L * i);
    return new GpuStates(s.get(ValueLayout.JAVA_INT_UNALIGNED, offsetOf("rank")), n, s.get(ValueLayout.JAVA_INT_UNALIGNED, offsetOf("flags")),
        s.get(ValueLayout.JAVA_LONG_UNALIGNED, offsetOf("heapSize")), s.get(ValueLayout.JAVA_LONG_UNALIGNED, offsetOf("heapBase")),
        s.get(ValueLayout.JAVA_LONG_UNALIGNED, offsetOf("internalOffset")), s.get(ValueLayout.JAVA_LONG_UNALIGNED, offsetOf("waitTimeoutNs")), peers);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof GpuStates g && java.util.Arrays.equals(toBytes(), g.toBytes());
  }

  @Override
  public int hashCode() {
    return java.util.Arrays.hashCode(toBytes());
  }

  private static VarHandle field(String name) {
    return LAYOUT.varHandle(groupElement(name));
  }
}
