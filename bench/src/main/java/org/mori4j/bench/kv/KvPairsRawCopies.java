package org.mori4j.bench.kv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import org.mori4j.bench.baseline.XgmiCopyBaseline;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntime;
import org.mori4j.natives.gpu.GpuStream;

/**
 * The path's limit for a multi-pair XGMI run: every pair's bytes as one contiguous copy by the driver alone
 * ({@code cuMemcpyPeerAsync} between two GPUs, {@code cuMemcpyDtoDAsync} within one), all pairs released together
 * as the migrations are, each pair's copy on a stream of its own on its prefill device, timed to its stream's
 * synchronize. Its own buffers (a source on the prefill GPU, a destination on the decode GPU, per pair), allocated
 * per request length and freed on {@link #close}; after the timed copies the first and last 4 KiB of every
 * destination are compared with the source's pattern, so a copy that moved nothing is seen (not every byte: the
 * engines' migrations are the ones checked in full).
 */
final class KvPairsRawCopies implements AutoCloseable {
  private static final long PROBE = 4096;

  private final GpuRuntime gpu;
  private final KvPairs pairs;
  private final long bytes;
  private final List<DeviceBuffer> buffers = new ArrayList<>();
  private final List<GpuStream> streams = new ArrayList<>();
  private final long[] src, dst;

  KvPairsRawCopies(GpuRuntime gpu, KvPairs pairs, long bytes) {
    this.gpu = gpu;
    this.pairs = pairs;
    this.bytes = bytes;
    int n = pairs.size();
    src = new long[n];
    dst = new long[n];
    try {
      Set<String> enabled = new HashSet<>();
      for (KvPairs.Pair p : pairs.pairs()) {
        if (p.prefill() != p.decode() && enabled.add(p.prefill() + ">" + p.decode())) {
          gpu.enablePeerAccess(p.prefill(), p.decode());
          gpu.enablePeerAccess(p.decode(), p.prefill());
        }
        DeviceBuffer s = gpu.allocDevice(p.prefill(), bytes), d = gpu.allocDevice(p.decode(), bytes);
        buffers.add(s);
        buffers.add(d);
        src[p.index()] = s.address();
        dst[p.index()] = d.address();
        gpu.fill(s.address(), pattern(p.index()), bytes);
        gpu.fill(d.address(), (byte) 0, bytes);
        streams.add(gpu.createStream(p.prefill()));
      }
    } catch (RuntimeException | Error e) {
      close();
      throw e;
    }
  }

  private static byte pattern(int pair) {
    return (byte) (0x5a + pair);
  }

  /** "raw cuMemcpyPeerAsync GPU0->GPU2 + ..." : the driver calls of the pairs, each distinct one once. */
  String series() {
    Set<String> s = new LinkedHashSet<>();
    for (KvPairs.Pair p : pairs.pairs()) s.add(XgmiCopyBaseline.copySeries(gpu, p.prefill(), p.decode()));
    return "raw " + String.join(" + ", s);
  }

  /** {@code warmup} untimed and {@code iters} timed rounds of every pair's copy at once: times by [iteration][pair] (ns). */
  long[][] run(ExecutorService pool, int warmup, int iters) throws Exception {
    long[][] out = new long[iters][];
    for (int i = -warmup; i < iters; i++) {
      long[] t = KvPairsRun.together(pool, pairs.size(), k -> {
        KvPairs.Pair p = pairs.pairs().get(k);
        GpuStream st = streams.get(k);
        if (p.prefill() == p.decode()) gpu.copyDeviceToDeviceAsync(dst[k], src[k], bytes, st);
        else gpu.copyPeerAsync(dst[k], p.decode(), src[k], p.prefill(), bytes, st);
        st.synchronize();
        return System.nanoTime();
      });
      if (i >= 0) out[i] = t;
    }
    return out;
  }

  /** Null when the probed bytes of every destination hold its pair's pattern, else which pair and where not. */
  String check() {
    try (Arena a = Arena.ofConfined()) {
      MemorySegment h = a.allocate(PROBE);
      for (KvPairs.Pair p : pairs.pairs()) {
        for (long at : new long[] {0, Math.max(0, bytes - PROBE)}) {
          long len = Math.min(PROBE, bytes);
          gpu.copyDeviceToHost(h, dst[p.index()] + at, len);
          for (long i = 0; i < len; i++)
            if (h.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) != pattern(p.index()))
              return "raw copy of pair " + p.index() + " (" + p.route() + "): byte " + (at + i) + " is not the source's";
        }
      }
    }
    return null;
  }

  @Override
  public void close() {
    for (GpuStream s : streams) s.close();
    streams.clear();
    for (DeviceBuffer b : buffers) b.close();
    buffers.clear();
  }
}
