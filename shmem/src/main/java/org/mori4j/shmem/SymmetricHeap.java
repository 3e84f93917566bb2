package org.mori4j.shmem;

import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The allocator of the symmetric heap: which offsets are taken. Every PE runs the same sequence of
 * {@link #allocate}/{@link #free} calls (they are collective and checked before they get here) on an
 * allocator in the same state, and the allocator is deterministic (first fit by lowest offset, free ranges
 * merged with their neighbours), so every PE gets the same offset without exchanging it. It knows nothing of
 * GPU memory: offsets only.
 *
 * <p>The first {@link #INTERNAL_BYTES} of the heap belong to the library itself (the barrier words that
 * {@code mori_shmem.cuh} uses); user allocations start after them.
 */
final class SymmetricHeap {
  /** Bytes at the start of every heap kept for the device library (see {@code MORI_SHMEM_*_OFFSET}). */
  static final long INTERNAL_BYTES = 4096;
  /** Alignment of {@code malloc}: what MORI's allocator and CUDA's both give (room for 256-byte vector loads). */
  static final long DEFAULT_ALIGNMENT = 256;

  private final long size;
  /** Free ranges: offset to length, never adjacent (merged on free). */
  private final TreeMap<Long, Long> free = new TreeMap<>();
  /** Live allocations: offset to length as reserved (alignment padding excluded: it returns to the free list). */
  private final TreeMap<Long, Long> used = new TreeMap<>();

  SymmetricHeap(long size) {
    if (size <= INTERNAL_BYTES) throw new IllegalArgumentException("heap size " + size + " leaves no room after the library's " + INTERNAL_BYTES + " bytes");
    this.size = size;
    free.put(INTERNAL_BYTES, size - INTERNAL_BYTES);
  }

  long size() {
    return size;
  }

  /**
   * The lowest offset, a multiple of {@code alignment}, where {@code bytes} fit; -1 when no free range has
   * room. The length is rounded up to a multiple of 256 so that the next allocation keeps the default
   * alignment without padding.
   */
  long allocate(long bytes, long alignment) {
    if (bytes <= 0) throw new IllegalArgumentException("size " + bytes + " must be positive");
    if (alignment <= 0 || Long.bitCount(alignment) != 1) throw new IllegalArgumentException("alignment " + alignment + " is not a power of two");
    long length = roundUp(bytes, DEFAULT_ALIGNMENT);
    for (Map.Entry<Long, Long> e : free.entrySet()) {
      long start = e.getKey(), end = start + e.getValue();
      long at = roundUp(start, Math.max(alignment, DEFAULT_ALIGNMENT));
      if (at < start || at + length > end || at + length < at) continue;
      free.remove(start);
      if (at > start) free.put(start, at - start);
      if (at + length < end) free.put(at + length, end - at - length);
      used.put(at, length);
      return at;
    }
    return -1;
  }

  /** Gives back the allocation at {@code offset}; false when no allocation starts there. */
  boolean free(long offset) {
    Long length = used.remove(offset);
    if (length == null) return false;
    long start = offset, end = offset + length;
    Map.Entry<Long, Long> before = free.floorEntry(start);
    if (before != null && before.getKey() + before.getValue() == start) {
      start = before.getKey();
      free.remove(start);
    }
    Long after = free.get(end);
    if (after != null) {
      free.remove(end);
      end += after;
    }
    free.put(start, end - start);
    return true;
  }

  /** The allocation containing {@code offset}: {offset, length}, or null. */
  long[] allocationAt(long offset) {
    Map.Entry<Long, Long> e = used.floorEntry(offset);
    return e != null && offset < e.getKey() + e.getValue() ? new long[] {e.getKey(), e.getValue()} : null;
  }

  /** Bytes in live allocations. */
  long usedBytes() {
    return used.values().stream().mapToLong(Long::longValue).sum();
  }

  int allocations() {
    return used.size();
  }

  /** Free ranges in offset order (for tests and messages). */
  NavigableMap<Long, Long> freeRanges() {
    return java.util.Collections.unmodifiableNavigableMap(free);
  }

  /** The largest free range: what the error of a failed allocation reports. */
  long largestFree() {
    return free.values().stream().mapToLong(Long::longValue).max().orElse(0);
  }

  private static long roundUp(long value, long alignment) {
    return (value + alignment - 1) & -alignment;
  }
}
