package org.mori4j.io;

import java.io.BufferedReader;
import java.io.PrintWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link XgmiTransferTests} and its subclasses build their cases from, kept apart from the cases: batches of
 * blocks (random and 4 KiB ones) with the image they must produce, descriptors altered for the forgery checks, and
 * the line protocol with the child target process ({@link XgmiTargetProcessMain}): a command, its answer, the
 * child's memory once it is ready.
 */
final class XgmiTransferSupport {
  private XgmiTransferSupport() {}

  /** Under the tests' own logger name, so the child's lines read as before. */
  private static final Logger LOG = LoggerFactory.getLogger(XgmiTransferTests.class);

  /** One batch: blocks in slots of {@code stride} bytes, destinations scattered, some misaligned against their source. */
  record Batch(long[] lo, long[] ro, long[] sizes) {
    static Batch random(int n, long stride, long seed) {
      SplittableRandom r = new SplittableRandom(seed);
      long[] lo = new long[n], ro = new long[n], sizes = new long[n];
      int[] perm = new int[n];
      for (int i = 0; i < n; i++) perm[i] = i;
      for (int i = n - 1; i > 0; i--) {
        int j = r.nextInt(i + 1);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
      for (int i = 0; i < n; i++) {
        int kind = r.nextInt(4);
        // 0: a whole aligned 4 KiB block (the KV-cache case); 1: same misalignment both sides; 2: different; 3: tiny
        long size = kind == 0 ? 4096 : kind == 3 ? 1 + r.nextInt(15) : 1 + r.nextLong(stride - 16);
        long mis = kind == 0 ? 0 : r.nextInt(16);
        long misDst = kind == 2 ? r.nextInt(16) : mis;
        lo[i] = (long) perm[i] * stride + mis;
        ro[i] = (long) i * stride + misDst;
        sizes[i] = size;
      }
      return new Batch(lo, ro, sizes);
    }

    /** The destination image: zeros with each block's source bytes in place. */
    MemorySegment expected(Arena arena, MemorySegment source, long length, boolean write) {
      MemorySegment e = arena.allocate(length, 64);
      for (int i = 0; i < sizes.length; i++) {
        long from = write ? lo[i] : ro[i], to = write ? ro[i] : lo[i];
        MemorySegment.copy(source, from, e, to, sizes[i]);
      }
      return e;
    }

    long bytes() {
      long t = 0;
      for (long s : sizes) t += s;
      return t;
    }
  }

  /** Registers the child that answered {@code ready} ("READY host port") with {@code x}; its GPU memory, published as "gpu". */
  static MemoryDesc childMemory(IoEngine x, String ready) {
    String[] hp = ready.split(" ");
    EngineDesc remoteEngine = x.discover(hp[1], Integer.parseInt(hp[2]));
    x.registerRemoteEngine(remoteEngine);
    return x.lookupMemory(remoteEngine, "gpu").orElseThrow();
  }

  static Batch fourKiB(int n, long stride) {
    long[] lo = new long[n], ro = new long[n], sizes = new long[n];
    for (int i = 0; i < n; i++) {
      lo[i] = (long) ((i * 7919) % n) * stride; // scattered source, so nothing merges
      ro[i] = (long) i * stride;
      sizes[i] = 4096;
    }
    return new Batch(lo, ro, sizes);
  }

  static MemoryDesc with(MemoryDesc d, long address, long size, long accessKey, byte[] xgmi) {
    Map<BackendType, byte[]> data = new EnumMap<>(BackendType.class);
    data.put(BackendType.XGMI, xgmi);
    return new MemoryDesc(d.engineKey(), d.id(), d.deviceId(), address, size, d.location(), accessKey, data, d.ownerIncarnation());
  }

  static String ask(PrintWriter cmd, BufferedReader out, String line) throws java.io.IOException {
    cmd.println(line);
    return answer(out, line);
  }

  /** The child's next answer; its log lines in between are passed on to this log. */
  static String answer(BufferedReader out, String during) throws java.io.IOException {
    for (String l; (l = out.readLine()) != null; ) {
      if (l.startsWith(XgmiTargetProcessMain.ANSWER)) return l.substring(XgmiTargetProcessMain.ANSWER.length());
      LOG.info("[child] {}", l);
    }
    throw new AssertionError("child exited during '" + during + "'");
  }
}
