package org.mori4j.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.Locale;
import java.util.function.IntToLongFunction;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.PinnedBuffer;

/**
 * The bytes of {@code xgmi-pairs} buffers, seen from the CPU: every source gets its own {@link DataPattern}
 * (seeded per row and per source engine), destinations are zeroed before a row, and after the measured iterations
 * every block of every route into a destination is read back and compared, whole, with the pattern its source
 * had at the block's source offset. Device memory is reached through one pinned chunk with the runtime's
 * synchronous copies, which from pinned memory return once done, so they never race the copies of the row.
 * Shared by the engines' buffers and the raw copies' buffers; the chunk is this object's and freed by close.
 */
final class XgmiPairsBytes implements AutoCloseable {
  static final long CHUNK = 8L << 20;

  private final GpuRuntime gpu;
  private final PinnedBuffer pinned;
  private final MemorySegment expected;
  private final Arena arena = Arena.ofShared();

  XgmiPairsBytes(GpuRuntime gpu) {
    this.gpu = gpu;
    this.pinned = gpu.allocPinned(CHUNK);
    this.expected = arena.allocate(CHUNK, 8);
  }

  /** Puts the pattern of {@code seed} over {@code [0, length)} of device memory at {@code address}. */
  void fill(long address, long length, long seed) {
    MemorySegment chunk = pinned.segment();
    for (long off = 0; off < length; off += CHUNK) {
      long n = Math.min(CHUNK, length - off);
      DataPattern.fillAt(chunk, off, n, seed);
      gpu.copyHostToDevice(address + off, chunk, n);
    }
  }

  /** Sets {@code [0, length)} of device memory at {@code address} to zero. */
  void zero(long address, long length) {
    MemorySegment chunk = pinned.segment();
    chunk.fill((byte) 0);
    for (long off = 0; off < length; off += CHUNK) gpu.copyHostToDevice(address + off, chunk, Math.min(CHUNK, length - off));
  }

  /**
   * Compares every block of {@code routes} (all landing in the destination buffer at {@code address}) with its
   * source's pattern; {@code seeds} gives the seed of a source engine. Returns null when every byte matches,
   * otherwise the first wrong byte: route, block, offsets, value found and expected.
   */
  String check(long address, List<XgmiPairsLayout.Route> routes, IntToLongFunction seeds, String where) {
    MemorySegment chunk = pinned.segment();
    for (XgmiPairsLayout.Route r : routes) {
      long seed = seeds.applyAsLong(r.source());
      for (int b = 0; b < r.sizes().length; b++) {
        for (long done = 0; done < r.sizes()[b]; done += CHUNK) {
          long n = Math.min(CHUNK, r.sizes()[b] - done);
          long dst = r.destinationOffsets()[b] + done, src = r.sourceOffsets()[b] + done;
          gpu.copyDeviceToHost(chunk, address + dst, n);
          DataPattern.fillAt(expected, src, n, seed);
          long bad = MemorySegment.mismatch(chunk, 0, n, expected, 0, n);
          if (bad >= 0) {
            return String.format(Locale.ROOT, "%s: engine %d -> engine %d, block %d: byte at destination offset %d is 0x%02x, expected 0x%02x "
                + "(source offset %d of engine %d)", where, r.source(), r.destination(), b, dst + bad, chunk.get(ValueLayout.JAVA_BYTE, bad),
                expected.get(ValueLayout.JAVA_BYTE, bad), src + bad, r.source());
          }
        }
      }
    }
    return null;
  }

  @Override
  public void close() {
    try {
      pinned.close();
    } finally {
      arena.close();
    }
  }
}
