package org.mori4j.bench.kv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32C;
import org.mori4j.io.kv.KvCacheLayout;

/**
 * kv-bench's byte check, the same code in both processes: block contents are written from a seed (every
 * (layer, tensor, block) slot gets bytes of its own, so a block landing in the wrong slot or a slot not moved is
 * seen), and a CRC32C over the slots of a block list, taken in list order, compares a source's blocks with the
 * destination's: {@code sum(src, srcBlocks) == sum(dst, dstBlocks)} exactly when every slot arrived in its place
 * (up to CRC collisions, 2^-32 per check).
 */
final class KvBenchCheck {
  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

  private KvBenchCheck() {}

  /** Writes fresh bytes, derived from {@code seed}, into every slot of {@code blocks}. */
  static void fill(KvBenchMemory mem, int[] blocks, long seed) {
    KvCacheLayout layout = mem.layout;
    long bytes = layout.blockBytes(), words = bytes / 8;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment slot = arena.allocate(bytes, 8);
      for (int l = 0; l < layout.layers(); l++)
        for (int t = 0; t < layout.tensorsPerLayer(); t++)
          for (int b : blocks) {
            long x = mix(seed ^ ((long) l << 40) ^ ((long) t << 32) ^ b);
            for (long w = 0; w < words; w++) {
              x += 0x9e3779b97f4a7c15L;
              slot.set(LONG, w * 8, mix(x));
            }
            for (long i = words * 8; i < bytes; i++) slot.set(ValueLayout.JAVA_BYTE, i, (byte) x);
            mem.write(layout.bufferOf(l, t), layout.offset(l, t, b), slot, bytes);
          }
    }
  }

  /** CRC32C over every slot of {@code blocks}, block by block in list order, layers and tensors inside. */
  static long sum(KvBenchMemory mem, int[] blocks) {
    KvCacheLayout layout = mem.layout;
    CRC32C crc = new CRC32C();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment slot = arena.allocate(layout.blockBytes(), 8);
      for (int b : blocks)
        for (int l = 0; l < layout.layers(); l++)
          for (int t = 0; t < layout.tensorsPerLayer(); t++) {
            mem.read(layout.bufferOf(l, t), layout.offset(l, t, b), slot, layout.blockBytes());
            crc.update(slot.asByteBuffer());
          }
    }
    return crc.getValue();
  }

  static String csv(int[] blocks) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < blocks.length; i++) s.append(i == 0 ? "" : ",").append(blocks[i]);
    return s.toString();
  }

  static int[] parseCsv(String s) {
    String[] f = s.split(",");
    int[] out = new int[f.length];
    for (int i = 0; i < f.length; i++) out[i] = Integer.parseInt(f[i]);
    return out;
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }
}
