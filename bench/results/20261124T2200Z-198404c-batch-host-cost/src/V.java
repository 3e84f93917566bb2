public class V {
  static long fusedV1(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    int n = lo.length; long s0 = sizes[0]; long bad = 0, differ = 0, anyJoin = 0;
    for (int i = 0; i < n - 1; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      bad |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b);
      differ |= s ^ s0;
      long d = (lo[i + 1] - a - s) | (ro[i + 1] - b - s);
      anyJoin |= ~(d | -d);
    }
    return bad | differ | anyJoin;
  }
  static long joinsV2(long[] lo, long[] ro, long[] sizes) {
    int n = lo.length; long anyJoin = 0;
    for (int i = 1; i < n; i++) {
      long d = (lo[i] - lo[i - 1] - sizes[i - 1]) | (ro[i] - ro[i - 1] - sizes[i - 1]);
      anyJoin |= ~(d | -d);
    }
    return anyJoin;
  }
  static long joinsV3(long[] lo, long[] ro, long[] sizes) {
    int n = lo.length; long anyJoin = 0;
    for (int i = 0; i < n - 1; i++) {
      long e = lo[i] + sizes[i], f = ro[i] + sizes[i];
      long d = (lo[i + 1] ^ e) | (ro[i + 1] ^ f);
      anyJoin |= ~(d | -d);
    }
    return anyJoin;
  }
  // two separate partial reductions bad, differ in fused loop? test bounds + differ + join in separate accumulators combined
  static long fusedV4(long[] lo, long[] ro, long[] sizes, long localSize, long remoteSize) {
    int n = lo.length; long s0 = sizes[0]; long acc = 0;
    for (int i = 0; i < n - 1; i++) {
      long s = sizes[i], a = lo[i], b = ro[i];
      long ls = localSize - s, rs = remoteSize - s;
      long d = (lo[i + 1] - a - s) | (ro[i + 1] - b - s);
      acc |= s | (s - 1) | a | ls | (ls - a) | b | rs | (rs - b) | ~(d | -d);
    }
    return acc;
  }
  interface F { long run(); }
  static void time(String name, F f) {
    long sink = 0; int N = 20000; long[] t = new long[N];
    for (int w = 0; w < 3; w++) for (int i = 0; i < N; i++) { long s = System.nanoTime(); sink += f.run(); t[i] = System.nanoTime() - s; }
    java.util.Arrays.sort(t);
    System.out.printf("%-10s p50 %7.2f us  p10 %7.2f us  (%d)%n", name, t[N/2]/1e3, t[N/10]/1e3, sink & 1);
  }
  public static void main(String[] x) {
    int blocks = 4096; long B = 4096;
    long[] off = new long[blocks], sz = new long[blocks];
    for (int i = 0; i < blocks; i++) { off[i] = (long)(blocks - 1 - i) * 2 * B; sz[i] = B; }
    long region = 2L * blocks * B;
    for (int r = 0; r < 2; r++) {
      time("fusedV1", () -> fusedV1(off, off, sz, region, region));
      time("joinsV2", () -> joinsV2(off, off, sz));
      time("joinsV3", () -> joinsV3(off, off, sz));
      time("fusedV4", () -> fusedV4(off, off, sz, region, region));
      time("boundsA", () -> ScanBench.boundsA(off, off, sz, region, region));
      time("joinsA", () -> ScanBench.joinsA(off, off, sz));
    }
  }
}
