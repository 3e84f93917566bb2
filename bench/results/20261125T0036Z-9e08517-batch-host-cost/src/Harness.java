package h1p;
import com.typesafe.config.ConfigFactory;
import java.util.Arrays;
import org.mori4j.io.*;
import org.mori4j.natives.gpu.*;
import org.mori4j.transport.Probe;
/** Stage probe harness (not committed): 4,096 x 4 KiB session batchWrite + await, stamps of the probe build per stage. */
public class Harness {
  public static void main(String[] a) throws Exception {
    int blocks = 4096; long BLOCK = 4096;
    boolean cuda = System.getProperty("rt", "host-path").equals("cuda");
    org.mori4j.bench.jmh.HostPathGpuRuntime hp = cuda ? null : new org.mori4j.bench.jmh.HostPathGpuRuntime();
    GpuRuntime device = hp != null ? hp : GpuRuntimes.select("cuda");
    GpuRuntimes.register("h", device); System.setProperty("mori4j.gpu.runtime", "h"); ConfigFactory.invalidateCaches();
    long bytes = 2L * blocks * BLOCK;
    DeviceBuffer src = device.allocDevice(0, bytes), dst = device.allocDevice(0, bytes);
    IoEngine ini = IoEngine.create("h-i", IoEngineConfig.loopback()), tgt = IoEngine.create("h-t", IoEngineConfig.loopback());
    ini.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults()); tgt.createBackend(BackendType.XGMI, XgmiBackendConfig.defaults());
    ini.registerRemoteEngine(tgt.engineDesc());
    MemoryDesc l = ini.registerMemory(src.address(), bytes, 0, MemoryLocationType.GPU), r = tgt.registerMemory(dst.address(), bytes, 0, MemoryLocationType.GPU);
    IoEngineSession s = ini.createSession(l, r).orElseThrow();
    long[] off = new long[blocks], sz = new long[blocks];
    for (int i = 0; i < blocks; i++) { off[i] = (long) (blocks - 1 - i) * 2 * BLOCK; sz[i] = BLOCK; }
    int N = Integer.getInteger("n", 3000); long[][] d = new long[14][N]; int taken = 0;
    long[] round = new long[N]; long[] outside = new long[N];
    for (int k = 0; k < N + 500; k++) {
      Arrays.fill(Probe.T, 0);
      long t = System.nanoTime();
      TransferStatus st = s.batchWrite(off, off, sz, ini.allocateTransferUid());
      long end = System.nanoTime();
      st.await(); if (!st.succeeded()) throw new IllegalStateException(st.message());
      long done = System.nanoTime();
      long o0 = System.nanoTime(); new org.mori4j.io.internal.BatchBlocks().scan(off, off, sz, bytes, bytes, "a", "b"); long o1 = System.nanoTime();
      if (k >= 500) outside[k - 500] = o1 - o0;
      if (k < 500) continue;
      int j = k - 500; boolean tk = Probe.T[10] != 0; if (tk) taken++;
      for (int i = 0; i < 12; i++) d[i][j] = Probe.T[i] == 0 || !tk ? -1 : Probe.T[i] - t;
      d[12][j] = tk ? end - t : -1;
      d[13][j] = tk && Probe.T[12] != 0 ? Probe.T[12] - Probe.T[2] : -1;
      round[j] = done - t;
    }
    System.out.println("runtime " + device.name() + ", block-table " + System.getProperty("mori4j.xgmi.block-table", "(default)") + ", await-spin "
        + System.getProperty("mori4j.engine.await-spin", "(default)") + ", launched by the caller " + taken + "/" + N);
    String[] names = {"entry","checked","scanned","status","turn","issuechecks","tablecopied","tableready","launched","issued","woken","return","call","rescan-only"};
    for (int i = 0; i < 14; i++) { long[] x = Arrays.stream(d[i]).filter(v -> v >= 0).sorted().toArray(); if (x.length == 0) continue; System.out.printf("%-12s p50 %7.2f us  p90 %7.2f%n", names[i], x[x.length/2]/1e3, x[(int)(x.length*0.9)]/1e3); }
    long[] y = outside.clone(); Arrays.sort(y);
    System.out.printf("%-12s p50 %7.2f us  p90 %7.2f%n", "scan-outside", y[y.length/2]/1e3, y[(int)(y.length*0.9)]/1e3);
    long[] x = round.clone(); Arrays.sort(x);
    System.out.printf("%-12s p50 %7.2f us  p90 %7.2f%n", "call+await", x[x.length/2]/1e3, x[(int)(x.length*0.9)]/1e3);
    System.out.println("not taken: closing/undriven " + Probe.R[0] + ", queued " + Probe.R[1] + ", turn held (state) " + Probe.R[2] + "/" + Probe.R[3] + "/" + Probe.R[4] + "/" + Probe.R[5] + ", issueReady NO_SLOT " + Probe.R[6]);
    ini.close(); tgt.close(); if (hp != null) hp.shutdown(); System.exit(0);
  }
}
