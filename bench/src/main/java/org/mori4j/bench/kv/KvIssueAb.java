package org.mori4j.bench.kv;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.mori4j.bench.jmh.HostPathGpuRuntime;
import org.mori4j.bench.jmh.ThreadAllocation;
import org.mori4j.io.BackendType;
import org.mori4j.io.IoEngine;
import org.mori4j.io.IoEngineConfig;
import org.mori4j.io.MemoryLocationType;
import org.mori4j.io.XgmiBackendConfig;
import org.mori4j.io.kv.KvCache;
import org.mori4j.io.kv.KvCacheLayout;
import org.mori4j.io.kv.KvMigration;
import org.mori4j.natives.gpu.DeviceBuffer;
import org.mori4j.natives.gpu.GpuRuntimes;
import org.mori4j.transport.xgmi.XgmiTrace;

/**
 * The host time of a KV migration with {@code mori4j.kv.first-chunk-layers} 0 (one batch call) against N (calls of N,
 * 2N, 4N... layers), A/B interleaved in one JVM, without a GPU: three XGMI engines on {@link HostPathGpuRuntime}
 * (host memory; launches asynchronous, done by the runtime's "device" thread), a source cache on each of two sender
 * engines (their only difference is the setting) pushing the same scattered blocks of a Llama-3-70B-shaped layout (80
 * layers, K and V per layer buffer, 256 of 512 blocks: 40,960 slots) into one receiving cache, alternately. Blocks are
 * {@code blockBytes} small (64 by default) so that the runtime's Java gather does not drown the host stages. Prints
 * per arm the p50/p90 of the migration ({@code push()} to {@code await} returned) and, with {@code MORI4J_XGMI_TRACE=1},
 * of "plan built" (the first batch call starts), the first launch and the last call returned. Not a unit test: a
 * measuring tool (bench README, {@code bench/results/*-kv-host-2}). Arguments: {@code [iters] [warmup] [firstChunk]
 * [blockBytes]}, defaults 200 40 1 64; the fuse setting comes from {@code MORI_IO_XGMI_FUSE_BATCHES} as everywhere. Also
 * prints the bytes the calling thread allocated inside {@code push()} (p50; the plan-array pool is
 * {@code MORI4J_KV_PLAN_POOL_BYTES}, 0 = off).
 */
public final class KvIssueAb {
  private KvIssueAb() {}

  public static void main(String[] args) throws Exception {
    int iters = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 40;
    int first = args.length > 2 ? Integer.parseInt(args[2]) : 1;
    long blockBytes = args.length > 3 ? Long.parseLong(args[3]) : 64;
    if (iters < 1 || warmup < 0 || first < 1 || blockBytes < 1)
      throw new IllegalArgumentException("iters >= 1, warmup >= 0, firstChunk >= 1, blockBytes >= 1: " + Arrays.toString(args));
    HostPathGpuRuntime device = new HostPathGpuRuntime();
    GpuRuntimes.register("kv-issue-ab", device);
    System.setProperty("mori4j.gpu.runtime", "kv-issue-ab");
    KvCacheLayout layout = KvCacheLayout.perLayer(80, 2, 512, blockBytes);
    List<AutoCloseable> closing = new ArrayList<>();
    try {
      IoEngine rx = engine("kv-ab-rx", 0, closing);
      IoEngine one = engine("kv-ab-one-call", 0, closing);
      IoEngine chunked = engine("kv-ab-chunked", first, closing);
      for (IoEngine e : List.of(one, chunked)) e.registerRemoteEngine(rx.engineDesc());
      KvCache dst = cache(rx, "dst", layout, device, closing);
      KvCache[] src = {cache(one, "src-one", layout, device, closing), cache(chunked, "src-chunked", layout, device, closing)};
      int[] sb = pick(512, 256, 1), db = pick(512, 256, 2);
      String[] arm = {"first-chunk-layers=0 (one call)", "first-chunk-layers=" + first};
      long[][] alloc = new long[2][iters];
      long[][] total = new long[2][iters], planned = new long[2][iters], launch = new long[2][iters], returned = new long[2][iters];
      int seq = 0;
      for (int i = -warmup; i < iters; i++) {
        for (int k0 = 0; k0 < 2; k0++) {
          int k = (i & 1) == 0 ? k0 : 1 - k0; // alternate which arm goes first
          if (XgmiTrace.ON) XgmiTrace.begin();
          long a0 = ThreadAllocation.currentThreadBytes();
          long t0 = System.nanoTime();
          KvMigration m = src[k].push("r" + (seq++), sb, dst.desc(), db);
          long a = ThreadAllocation.currentThreadBytes() - a0;
          if (!m.await(Duration.ofSeconds(30)) || !m.succeeded()) throw new IllegalStateException(arm[k] + ": " + m);
          long t = System.nanoTime() - t0;
          XgmiTrace.Window w = XgmiTrace.ON ? XgmiTrace.end() : null;
          if (i < 0) continue;
          total[k][i] = t;
          alloc[k][i] = a * 1000; // pct() reads thousandths: KiB below are a / 1024
          if (w != null) {
            planned[k][i] = w.planned();
            launch[k][i] = w.firstLaunch();
            returned[k][i] = w.returned();
          }
        }
      }
      System.out.printf("kv-issue-ab: %d x %d B slots (80 layers x 2 tensors x 256 blocks), fuse-batches %s, %d interleaved pairs after %d%n",
          80 * 2 * 256, blockBytes, ConfigFactory.load().getString("mori4j.xgmi.fuse-batches"), iters, warmup);
      for (int k = 0; k < 2; k++) {
        System.out.printf("%-34s migration p50 %7.1f us p90 %7.1f | caller allocated in push() p50 %7.1f KiB", arm[k], pct(total[k], 50),
            pct(total[k], 90), pct(alloc[k], 50) / 1024);
        if (XgmiTrace.ON)
          System.out.printf(" | plan built p50 %6.1f | first launch p50 %6.1f p90 %6.1f | last call returned p50 %6.1f", pct(planned[k], 50),
              pct(launch[k], 50), pct(launch[k], 90), pct(returned[k], 50));
        System.out.println(" (us)");
      }
    } finally {
      Collections.reverse(closing);
      for (AutoCloseable c : closing) c.close();
      device.shutdown();
    }
  }

  private static IoEngine engine(String key, int firstChunk, List<AutoCloseable> closing) {
    System.setProperty("mori4j.kv.first-chunk-layers", Integer.toString(firstChunk));
    ConfigFactory.invalidateCaches();
    IoEngine e = IoEngine.create(key, IoEngineConfig.loopback());
    closing.add(e);
    e.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
    return e;
  }

  private static KvCache cache(IoEngine e, String name, KvCacheLayout layout, HostPathGpuRuntime device, List<AutoCloseable> closing) {
    long[] at = new long[layout.buffers()];
    for (int i = 0; i < at.length; i++) {
      DeviceBuffer b = device.allocDevice(0, layout.bufferBytes());
      at[i] = b.address();
    }
    KvCache c = KvCache.createAt(e, name, layout, at, layout.bufferBytes(), 0, MemoryLocationType.GPU);
    closing.add(c);
    return c;
  }

  private static int[] pick(int blocks, int n, long seed) {
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < blocks; i++) ids.add(i);
    Collections.shuffle(ids, new Random(seed));
    int[] out = new int[n];
    for (int i = 0; i < n; i++) out[i] = ids.get(i);
    return out;
  }

  private static double pct(long[] v, int p) {
    long[] s = v.clone();
    Arrays.sort(s);
    return s[Math.min(s.length - 1, s.length * p / 100)] / 1e3;
  }
}
