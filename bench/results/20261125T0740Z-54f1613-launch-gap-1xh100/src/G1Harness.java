package g1p;
import com.typesafe.config.ConfigFactory;
import java.util.Arrays;
import org.mori4j.io.*;
import org.mori4j.natives.gpu.*;
import org.mori4j.transport.Probe;
/**
 * G1's launch probe harness (a measurement tool in a results folder, not product code): XgmiBatchHostBenchmark's batch
 * (4,096 x 4 KiB session batchWrite, reversed every-other-slot offsets) called and awaited N times after W warm-up
 * calls, on the probe build of make-probe-g1.py, and the p50/p90 of each interval between its stamps for the calls
 * whose kernel the caller's thread launched (an interval counts where both its stamps were set). -Dstreams sets the backend's stream count (64: the default).
 */
public class G1Harness {
  public static void main(String[] a) throws Exception {
    int blocks = 4096; long BLOCK = 4096;
    int N = Integer.getInteger("n", 3000), W = 800, streams = Integer.getInteger("streams", 64);
    boolean cuda = System.getProperty("rt", "host-path").equals("cuda");
    GpuRuntime device = cuda ? GpuRuntimes.select("cuda") : new org.mori4j.bench.jmh.HostPathGpuRuntime();
    GpuRuntimes.register("g1", device); System.setProperty("mori4j.gpu.runtime", "g1"); ConfigFactory.invalidateCaches();
    long bytes = 2L * blocks * BLOCK;
    DeviceBuffer src = device.allocDevice(0, bytes), dst = device.allocDevice(0, bytes);
    IoEngine ini = IoEngine.create("g1-i", IoEngineConfig.loopback()), tgt = IoEngine.create("g1-t", IoEngineConfig.loopback());
    ini.createBackend(BackendType.XGMI, new XgmiBackendConfig(streams, 64)); tgt.createBackend(BackendType.XGMI, new XgmiBackendConfig(streams, 64));
    ini.registerRemoteEngine(tgt.engineDesc());
    MemoryDesc l = ini.registerMemory(src.address(), bytes, 0, MemoryLocationType.GPU), r = tgt.registerMemory(dst.address(), bytes, 0, MemoryLocationType.GPU);
    IoEngineSession s = ini.createSession(l, r).orElseThrow();
    long[] off = new long[blocks], sz = new long[blocks];
    for (int i = 0; i < blocks; i++) { off[i] = (long) (blocks - 1 - i) * 2 * BLOCK; sz[i] = BLOCK; }
    // intervals between stamps (index pairs; -1 = call start)
    int[][] iv = {{-1, 7}, {7, 8}, {7, 13}, {13, 14}, {14, 15}, {15, 16}, {16, 8}, {8, 17}, {-1, 17}};
    String[] nm = {"call start -> tableready (H4)", "tableready -> launched (H4's 11-12 us)", "tableready -> GatherKernel.launch entry", "entry -> gpu.launch (function, grid, args)",
        "gpu.launch -> before cuLaunchKernel (bind, scratch)", "cuLaunchKernel downcall", "after downcall -> launched (return, count)",
        "launched -> event recorded", "call start -> event recorded"};
    long[][] d = new long[iv.length][N]; int[] c = new int[iv.length]; int caller = 0; long[] round = new long[N];
    for (int k = 0; k < N + W; k++) {
      Arrays.fill(Probe.T, 0);
      long t = System.nanoTime();
      TransferStatus st = s.batchWrite(off, off, sz, ini.allocateTransferUid());
      st.await(); if (!st.succeeded()) throw new IllegalStateException(st.message());
      long done = System.nanoTime();
      if (k >= W) {
        round[k - W] = done - t;
        if (Probe.T[10] != 0) {
          caller++;
          for (int i = 0; i < iv.length; i++) {
            int[] p = iv[i];
            if ((p[0] < 0 || Probe.T[p[0]] != 0) && Probe.T[p[1]] != 0) d[i][c[i]++] = Probe.T[p[1]] - (p[0] < 0 ? t : Probe.T[p[0]]);
          }
        }
      }
    }
    System.out.println("runtime " + device.name() + ", streams " + streams + ", calls " + N + ", launched by the caller " + caller + "/" + N);
    for (int i = 0; i < iv.length; i++) System.out.printf("%-52s p50 %7.2f us  p90 %7.2f  (n %d)%n", nm[i], pct(d[i], c[i], 0.5), pct(d[i], c[i], 0.9), c[i]);
    System.out.printf("%-52s p50 %7.2f us  p90 %7.2f%n", "call + await", pct(round, N, 0.5), pct(round, N, 0.9));
    ini.close(); tgt.close(); src.close(); dst.close();
    if (device instanceof org.mori4j.bench.jmh.HostPathGpuRuntime h) h.shutdown();
  }
  static double pct(long[] v, int n, double q) {
    if (n == 0) return Double.NaN;
    long[] x = Arrays.copyOf(v, n); Arrays.sort(x); return x[(int) ((n - 1) * q)] / 1e3;
  }
}
