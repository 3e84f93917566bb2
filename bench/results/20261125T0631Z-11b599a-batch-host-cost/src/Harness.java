package h4p;
import com.typesafe.config.ConfigFactory;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import org.mori4j.io.*;
import org.mori4j.natives.gpu.*;
import org.mori4j.transport.Probe;
/**
 * Stage probe harness (not committed as code): 4,096 x 4 KiB session batchWrite + await, stamps of the probe build per
 * stage. Between calls (after the await, before the next call) it runs one of four things in turn, and the call's
 * stages are reported per what ran before it: nothing; a scalar loop (calibration: the core's speed, no memory); the
 * engine's scan twice on the caller's arrays (scan1 cold, scan2 hot); a 2 x 32 KiB copy of the caller's array into a
 * pinned buffer of the harness's own that no GPU reads, twice (copy1, copy2).
 */
public class Harness {
  static long sink;
  /** xorshift steps: a dependent chain of shifts and xors the JIT cannot fold, no memory (the core's speed). */
  static long calib(int n) { long x = n | 1; for (int i = 0; i < n; i++) { x ^= x << 13; x ^= x >>> 7; x ^= x << 17; } return x; }
  static final java.lang.invoke.MethodHandle GETCPU = java.lang.foreign.Linker.nativeLinker().downcallHandle(
      java.lang.foreign.Linker.nativeLinker().defaultLookup().find("sched_getcpu").orElseThrow(), java.lang.foreign.FunctionDescriptor.of(ValueLayout.JAVA_INT));
  static int cpu() { try { return (int) GETCPU.invokeExact(); } catch (Throwable e) { throw new IllegalStateException(e); } }
  /** Copies of the scan's two loops (76aa49d's bounds loop; the equal-size join pass), timed apart after the await. */
  static long bounds(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    long bad = 0;
    for (int i = 0; i < lo.length; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
    }
    return bad;
  }
  static int joins(long[] lo, long[] ro, long s0) {
    int joined = 0; long endLo = lo[0] + s0, endRo = ro[0] + s0;
    for (int i = 1; i < lo.length; i++) { long a = lo[i], b = ro[i]; if (a == endLo && b == endRo) joined++; endLo = a + s0; endRo = b + s0; }
    return joined;
  }
  public static void main(String[] a) throws Exception {
    int blocks = 4096; long BLOCK = 4096;
    boolean cuda = System.getProperty("rt", "host-path").equals("cuda");
    org.mori4j.bench.jmh.HostPathGpuRuntime hp = cuda ? null : new org.mori4j.bench.jmh.HostPathGpuRuntime();
    GpuRuntime device = hp != null ? hp : GpuRuntimes.select("cuda");
    GpuRuntimes.register("h", device); System.setProperty("mori4j.gpu.runtime", "h"); ConfigFactory.invalidateCaches();
    long bytes = 2L * blocks * BLOCK;
    DeviceBuffer src = device.allocDevice(0, bytes), dst = device.allocDevice(0, bytes);
    PinnedBuffer own = device.allocPinned(16L * blocks);
    MemorySegment ownSeg = own.segment();
    IoEngine ini = IoEngine.create("h-i", IoEngineConfig.loopback()), tgt = IoEngine.create("h-t", IoEngineConfig.loopback());
    ini.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults()); tgt.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
    ini.registerRemoteEngine(tgt.engineDesc());
    MemoryDesc l = ini.registerMemory(src.address(), bytes, 0, MemoryLocationType.GPU), r = tgt.registerMemory(dst.address(), bytes, 0, MemoryLocationType.GPU);
    IoEngineSession s = ini.createSession(l, r).orElseThrow();
    long[] off = new long[blocks], sz = new long[blocks];
    for (int i = 0; i < blocks; i++) { off[i] = (long) (blocks - 1 - i) * 2 * BLOCK; sz[i] = BLOCK; }
    int N = Integer.getInteger("n", 4000), W = 800;
    String[] names = {"entry","checked","scanned","status","turn","issuechecks","tablecopied","tableready","launched","issued","woken","return","tablegot"};
    int[] order = {0, 1, 2, 3, 4, 5, 12, 6, 7, 8, 9, 10, 11};
    long[][][] d = new long[4][13][N]; int[] cnt = new int[4]; int taken = 0;
    long[][] diag = new long[8][N]; int[] dc = new int[8];
    long[] round = new long[N];
    int prev = 0; int migrated = 0, lastCpu = -1; String await = System.getProperty("await", "engine");
    int awaitMode = switch (await) { case "engine" -> 0; case "pause" -> 1; case "busy" -> 2; default -> throw new IllegalArgumentException("-Dawait must be engine, pause or busy: " + await); };
    for (int k = 0; k < N + W; k++) {
      Arrays.fill(Probe.T, 0);
      int c0 = cpu();
      if (k >= W && c0 != lastCpu) migrated++;
      long t = System.nanoTime();
      TransferStatus st = s.batchWrite(off, off, sz, ini.allocateTransferUid());
      lastCpu = cpu();
      if (awaitMode == 1) { while (st.inProgress()) Thread.onSpinWait(); }
      else if (awaitMode == 2) { while (st.inProgress()) { } }
      st.await(); if (!st.succeeded()) throw new IllegalStateException(st.message());
      long done = System.nanoTime();
      if (k >= W) {
        int j = k - W; round[j] = done - t;
        if (Probe.T[10] != 0) {
          taken++;
          int c = cnt[prev]++;
          for (int i = 0; i < 13; i++) d[prev][i][c] = Probe.T[i] == 0 ? -1 : Probe.T[i] - t;
        }
      }
      int what = k % 4;
      if (what == 1) {
        long a0 = System.nanoTime(); sink += calib(2000); long a1 = System.nanoTime(); sink += calib(2000); long a2 = System.nanoTime();
        if (k >= W) { diag[0][dc[0]++] = a1 - a0; diag[1][dc[1]++] = a2 - a1; }
      } else if (what == 2) {
        long a0 = System.nanoTime(); String e1 = new org.mori4j.io.internal.BatchBlocks().scan(off, off, sz, bytes, bytes, "a", "b"); long a1 = System.nanoTime();
        String e2 = new org.mori4j.io.internal.BatchBlocks().scan(off, off, sz, bytes, bytes, "a", "b"); long a2 = System.nanoTime();
        if (e1 != null || e2 != null) throw new IllegalStateException(e1 + e2);
        sink += bounds(off, off, sz, bytes, bytes); long a3 = System.nanoTime(); sink += joins(off, off, BLOCK); long a4 = System.nanoTime();
        if (k >= W) { diag[2][dc[2]++] = a1 - a0; diag[3][dc[3]++] = a2 - a1; diag[6][dc[6]++] = a3 - a2; diag[7][dc[7]++] = a4 - a3; }
      } else if (what == 3) {
        long a0 = System.nanoTime();
        MemorySegment.copy(off, 0, ownSeg, ValueLayout.JAVA_LONG, 0, blocks); MemorySegment.copy(off, 0, ownSeg, ValueLayout.JAVA_LONG, 8L * blocks, blocks);
        long a1 = System.nanoTime();
        MemorySegment.copy(off, 0, ownSeg, ValueLayout.JAVA_LONG, 0, blocks); MemorySegment.copy(off, 0, ownSeg, ValueLayout.JAVA_LONG, 8L * blocks, blocks);
        long a2 = System.nanoTime();
        if (k >= W) { diag[4][dc[4]++] = a1 - a0; diag[5][dc[5]++] = a2 - a1; }
      }
      prev = what;
    }
    System.out.println("runtime " + device.name() + ", block-table " + System.getProperty("mori4j.xgmi.block-table", "(default)") + ", await-spin "
        + System.getProperty("mori4j.engine.await-spin", "(default)") + ", harness await " + await + ", jvm " + String.join(" ", java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().stream().filter(x -> x.startsWith("-XX")).toList())
        + ", launched by the caller " + taken + "/" + N);
    String[] before = {"nothing", "calib", "scan x2", "copy x2"};
    StringBuilder h = new StringBuilder(String.format("%-12s", "stamp p50 (after:)"));
    for (String b : before) h.append(String.format(" %10s", b));
    System.out.println(h);
    for (int oi = 0; oi < 13; oi++) {
      int i = order[oi];
      StringBuilder row = new StringBuilder(String.format("%-18s", names[i]));
      for (int p = 0; p < 4; p++) row.append(String.format(" %10s", p50(d[p][i], cnt[p])));
      System.out.println(row);
    }
    StringBuilder row = new StringBuilder(String.format("%-18s", "calls"));
    for (int p = 0; p < 4; p++) row.append(String.format(" %10d", cnt[p]));
    System.out.println(row);
    String[] dn = {"calib1 (2k xorshift)", "calib2", "scan1 after await", "scan2 right after", "copy1 after await", "copy2 right after", "bounds loop after", "join loop after"};
    for (int i = 0; i < 8; i++) System.out.printf("%-20s p50 %7.2f us  p90 %7.2f%n", dn[i], pct(diag[i], dc[i], 0.5), pct(diag[i], dc[i], 0.9));
    System.out.printf("%-20s p50 %7.2f us  p90 %7.2f%n", "call+await", pct(round, N, 0.5), pct(round, N, 0.9));
    System.out.println("calls that started on another CPU than the previous call returned on: " + migrated + "/" + N);
    System.out.println("not taken: closing/undriven " + Probe.R[0] + ", queued " + Probe.R[1] + ", turn held (state) " + Probe.R[2] + "/" + Probe.R[3] + "/" + Probe.R[4] + "/" + Probe.R[5] + ", issueReady NO_SLOT " + Probe.R[6] + " (sink " + (sink & 1) + ")");
    ini.close(); tgt.close(); own.close(); if (hp != null) hp.shutdown(); System.exit(0);
  }
  static String p50(long[] v, int n) {
    long[] x = Arrays.stream(v, 0, n).filter(y -> y >= 0).sorted().toArray();
    return x.length == 0 ? "-" : String.format("%.2f", x[x.length / 2] / 1e3);
  }
  static double pct(long[] v, int n, double q) {
    if (n == 0) return Double.NaN;
    long[] x = Arrays.copyOf(v, n); Arrays.sort(x); return x[(int) (n * q)] / 1e3;
  }
}
